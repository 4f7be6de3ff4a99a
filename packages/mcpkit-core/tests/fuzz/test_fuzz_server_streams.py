"""Fuzzing the server over the in-memory and stdio transports, both eras.

Each example is a short run of frames (:mod:`fuzz_frames`): well-formed requests with
random params, random JSON, invalid UTF-8, wrong types for ``jsonrpc``/``id``/
``method``/``params``/``_meta``, oversized strings, nesting around the depth limit,
unknown methods, notifications sent with ids, duplicate ids, stray responses. The
invariants are :mod:`fuzz_check`'s: one response per request with a valid id, the
spec's error (``id: null``) for the rest, spec codes only, and the next valid request
served normally.

In memory, every example gets a fresh server connection (frames go through JSON, raw
bytes included); on stdio, one spawned process takes every example of a test, so state
left by earlier frames is part of what is fuzzed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import examples
from fuzz_check import LineServer, exchange_async, exchange_lines, initialize_message, judge
from fuzz_frames import Era, Frame, sequences
from fuzz_server import build
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.memory import memory_pair
from mcpkit.server.connection import ServerConnection

ERAS: list[Era] = ["legacy", "modern"]
LEGACY_VERSIONS = ["2025-11-25", "2025-06-18"]


def _run_memory(frames: list[Frame], era: Era, version: str) -> list[Any]:
    """Serve one fresh connection in memory, feed it the frames; the replies."""
    replies: list[Any] = []

    async def main() -> None:
        server_end, client_end = memory_pair(serialize=True)
        raw_send = client_end._send  # pyright: ignore[reportPrivateUsage] - raw bytes in
        connection = ServerConnection(build(), server_end)
        async with anyio.create_task_group() as tg:
            tg.start_soon(connection.serve)

            async def write(data: bytes) -> None:
                await raw_send.send(data)

            if era == "legacy":
                for msg in initialize_message(version):
                    await write(dumps(msg))
                with anyio.fail_after(10):
                    assert "result" in await client_end.receive()
            replies.extend(await exchange_async(write, client_end.receive, frames, era, [0]))
            await client_end.aclose()
            with anyio.fail_after(10):  # the connection drains and ends at end of input
                while connection.connection.inflight:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()

    anyio.run(main)
    return replies


@examples(150)
@given(frames=sequences("legacy"), version=st.sampled_from(LEGACY_VERSIONS))
def test_fuzzed_frames_in_memory_legacy_get_exactly_the_spec_replies(
    frames: list[Frame], version: str
) -> None:
    judge(frames, _run_memory(frames, "legacy", version))


@examples(150)
@given(frames=sequences("modern"))
def test_fuzzed_frames_in_memory_modern_get_exactly_the_spec_replies(frames: list[Frame]) -> None:
    judge(frames, _run_memory(frames, "modern", ""))


@pytest.fixture(scope="module")
def stdio_target() -> Iterator[LineServer]:
    server = LineServer([sys.executable, str(Path(__file__).parent / "fuzz_server.py")])
    for msg in initialize_message("2025-11-25"):
        server.write(dumps(msg))
    assert "result" in server.recv(20)
    yield server
    assert server.close() == 0, server.stderr.decode(errors="replace")
    assert b"Traceback" not in server.stderr, server.stderr.decode(errors="replace")


_stdio_counter = [0]


@pytest.mark.parametrize("era", ERAS)
def test_fuzzed_frames_over_stdio_get_exactly_the_spec_replies(
    stdio_target: LineServer, era: Era
) -> None:
    """One process for every example, both eras on the same connection (dual-era)."""

    @examples(60)
    @given(frames=sequences(era))
    def run(frames: list[Frame]) -> None:
        replies = exchange_lines(stdio_target, frames, era, _stdio_counter)
        judge(frames, replies)

    run()
