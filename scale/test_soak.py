"""Soak through the balancer: clients of both eras call a streaming tool over and over
through HAProxy in front of three replicas on Redis, for ``MCPKIT_SOAK_S`` seconds
(default 60; longer on demand: ``MCPKIT_SOAK_S=600 uv run nox -s scale -- scale/test_soak.py``).

Checked: no call lost (every call returns its own result), no progress notification lost
or duplicated (each call sees 0..10 exactly once, in order), and the resident memory of
every replica process, measured after a warm-up of a quarter of the run, grows by at
most 1 MiB per minute (at least 1 MiB allowed: a shorter run has less time to amortise
one allocator arena). RSS, not tracemalloc: the whole process counts (issue 17)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from cluster import Cluster, running

from mcpkit.client import Client

SOAK_S = float(os.environ.get("MCPKIT_SOAK_S") or 60)
WARMUP_FRACTION = 0.25
CLIENTS_PER_ERA = 2
MIB = 1024 * 1024


@pytest.fixture
def soak_cluster(tmp_path: Path) -> Iterator[Cluster]:
    with running(tmp_path / "cluster") as made:
        yield made


def _collector(seen: list[float]) -> Callable[[float, float | None], None]:
    def on_progress(progress: float, total: float | None) -> None:
        seen.append(progress)

    return on_progress


async def _client_loop(url: str, mode: str, until: float, tally: dict[str, int]) -> None:
    async with Client(url, mode=mode, timeout_s=60) as client:  # type: ignore[arg-type]
        n = 0
        while time.monotonic() < until:
            seen: list[float] = []
            result = await client.call_tool(
                "sleep",
                {"seconds": 0.05},
                on_progress=_collector(seen),
                progress_token=f"{mode}{n}",
            )
            assert result.content[0].text == "slept 0.05 s"  # type: ignore[union-attr]
            assert seen == list(range(11)), (mode, n, seen)
            tally["calls"] += 1
            tally["progress"] += len(seen)
            n += 1


def test_soak_no_loss_no_duplicates_bounded_memory(soak_cluster: Cluster) -> None:
    tally = {"calls": 0, "progress": 0}
    rss_warm: dict[str, int] = {}

    async def main() -> None:
        started = time.monotonic()
        until = started + SOAK_S
        with anyio.fail_after(SOAK_S * 5 + 60):  # bounded even if a call hangs
            await _soak(until)

    async def _soak(until: float) -> None:
        async with anyio.create_task_group() as tg:
            for mode in ("legacy", "modern"):
                for _ in range(CLIENTS_PER_ERA):
                    tg.start_soon(_client_loop, soak_cluster.url, mode, until, tally)
            await anyio.sleep(SOAK_S * WARMUP_FRACTION)
            rss_warm.update({r.name: r.rss_bytes() for r in soak_cluster.replicas})

    anyio.run(main)
    rss_end = {r.name: r.rss_bytes() for r in soak_cluster.replicas}
    minutes = SOAK_S * (1 - WARMUP_FRACTION) / 60
    allowed = max(1.0, minutes) * MIB
    growth = {name: rss_end[name] - rss_warm[name] for name in rss_end}
    print(
        f"soak {SOAK_S:.0f} s: {tally}; RSS growth after warm-up (KiB): "
        + ", ".join(f"{k} {v // 1024}" for k, v in growth.items())
    )
    assert tally["calls"] > 0
    assert tally["progress"] == 11 * tally["calls"]
    assert set(soak_cluster.served_by()) == {"r1", "r2", "r3"}
    for name, grown in growth.items():
        assert grown <= allowed, f"{name} grew {grown / MIB:.2f} MiB in {minutes:.2f} min"
