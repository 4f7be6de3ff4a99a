"""The soak's smoke variant, in the default test run: the full soak (``soak.py``) for a
few seconds with every scenario, then SIGTERM with streams open.

Asserts what the full run reports: nothing lost or duplicated, every scenario exercised,
the server's asyncio tasks, descriptors and sessions back to their baseline after the
load, and a SIGTERM that completes every stream, answers the running calls within the
grace period and leaves no process behind. (RSS growth is only judged by the full run:
a few seconds say nothing about a plateau.)
"""

from __future__ import annotations

import json
from pathlib import Path

from soak import SCENARIOS, main


def test_soak_smoke_loses_nothing_leaks_nothing_and_shuts_down_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    status = main(
        [
            "--duration-s", "8",
            "--warmup-s", "2",
            "--clients", "6",
            "--idle-timeout-s", "2",
            "--sample-s", "2",
            "--rss-bound-mib", "1024",
            "--sigterm",
            "--json", str(out),
        ]
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["failures"] == [], report["failures"]
    assert status == 0
    assert report["lost"] == 0
    assert report["duplicated"] == 0
    assert report["expected"] > 50
    assert set(report["scenarios"]) == set(SCENARIOS)
    assert report["end"]["sessions"] == 0
    assert report["end"]["tasks"] <= report["baseline"]["tasks"]
    assert report["end"]["fds"] <= report["baseline"]["fds"]
    term = report["sigterm"]
    assert term["truncated"] == 0
    assert term["quick_calls"].get("truncated", 0) == 0
    assert term["quick_calls"].get("answered", 0) > 0  # traffic was flowing at SIGTERM
    assert term["complete"] == term["streams"] == 5
    assert term["answered"] == 4
    assert term["orphans"] == []
