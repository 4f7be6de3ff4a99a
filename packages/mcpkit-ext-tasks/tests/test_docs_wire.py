"""``docs/extensions/tasks.md``, "What goes over the wire (2026-07-28)": the page's
sequence (``<!-- docs-block: tasks-wire-sequence -->``) is what the page's
``long-running-tool`` server answers (issue 26: samples typed by hand drift).

The page writes messages in a short notation: ``{key: value, key, …}``. Each ``←``
answer is checked against the real one: a literal value (a string, a number, a boolean)
must be equal, a bare key or a ``…`` value must be present, an object's named keys are
checked the same way inside it; ``…`` alone stands for keys not shown. The ``→``
requests are sent in the page's order, with the methods the page names.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_docs import examples, run

from mcpkit.client import Client
from mcpkit.ext.tasks.client import TASKS_EXTENSION

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
from docs_blocks import block

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "tasks.md"
JSON = dict[str, Any]


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside braces, brackets and quotes."""
    parts: list[str] = []
    depth, start, quoted = 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "{[":
            depth += 1
        elif not quoted and ch in "}]":
            depth -= 1
        elif not quoted and ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def check(shown: str, actual: Any, where: str) -> None:
    """``actual`` agrees with the page's ``shown`` value (module docstring)."""
    shown = shown.strip()
    if shown in ("…", '"…"', "[…]"):
        return
    if shown.startswith("{"):
        assert isinstance(actual, dict), (where, actual)
        for part in split_top(shown[1:-1]):
            if part == "…":
                continue
            key, sep, value = part.partition(": ")
            key = key.strip().strip('"')
            assert key in actual, f"{where}: no {key!r} in {actual}"
            if sep:
                check(value, actual[key], f"{where}.{key}")
        return
    assert json.loads(shown) == actual, (where, shown, actual)


def sequence() -> list[tuple[str, str | None]]:
    """``(method, answer shown or None)`` for each line of the page's sequence."""
    rows: list[tuple[str, str | None]] = []
    lines = block(DOC, "tasks-wire-sequence").splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("→"):
            continue
        method = line.split()[1]
        answer = line.split("← ", 1)[1] if "← " in line else None
        if answer is None and i + 1 < len(lines) and lines[i + 1].startswith("← "):
            answer = lines[i + 1][2:]
        rows.append((method, answer))
    return rows


async def unexpected(params: Any) -> JSON:
    raise AssertionError(f"the page answers through tasks/update, not here: {params!r}")


async def test_the_wire_sequence_is_what_the_server_answers() -> None:
    (code,) = [c for n, c in examples() if n == "long-running-tool"]
    server = run("long-running-tool", code)["server"]
    rows = sequence()
    assert [m for m, _ in rows] == ["tools/call", "tasks/get", "tasks/update", "tasks/get"]
    async with Client(
        server, mode="modern", extensions=[TASKS_EXTENSION], elicitation=unexpected
    ) as client:
        request = client.session.request
        created = await request("tools/call", {"name": "build_report", "arguments": {"pages": 2}})
        check(rows[0][1] or "", created, "tools/call")
        task = {"taskId": created["taskId"]}

        async def until(status: str) -> JSON:
            with anyio.fail_after(20):
                while True:
                    got = await request("tasks/get", task)
                    if got["status"] == status:
                        return got
                    assert got["status"] == "working", got
                    await anyio.sleep(0.05)

        check(rows[1][1] or "", await until("input_required"), "tasks/get")
        key = re.search(r'inputResponses: \{"([\w-]+)"', block(DOC, "tasks-wire-sequence"))
        assert key
        answer = {key.group(1): {"action": "accept", "content": {"publish": True}}}
        updated = await request("tasks/update", {**task, "inputResponses": answer})
        check(rows[2][1] or "", updated, "tasks/update")
        check(rows[3][1] or "", await until("completed"), "tasks/get")
