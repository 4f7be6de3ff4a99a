"""Admission counts what is really in flight (issue 11 §12), over a real stdio process.

A client keeps 32 requests of 100 KB outstanding and reads its replies slowly, so the
server's output pipe stays full. A request counts as in flight only until its reply is
handed to the write buffer (not until the client has read every reply before it), so with
``max_inflight`` equal to the client's 32 outstanding requests not one is refused
"Server busy". It used to be: every reply's writer waited for the whole buffer to drain,
long after the client had read its own reply and sent the next request.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from stdio_process import FIXTURE_SERVER, spawn, tool_call

pytestmark = pytest.mark.anyio

OUTSTANDING = 32
TOTAL = 320
PAYLOAD = "p" * 100_000


async def test_32_outstanding_100kb_requests_over_a_slow_reader_are_never_refused() -> None:
    argv = [sys.executable, str(FIXTURE_SERVER), str(32 * 1024 * 1024), "2", str(OUTSTANDING)]
    errors: list[dict] = []
    texts: list[str] = []
    slots = anyio.Semaphore(OUTSTANDING)  # the client's own bound on outstanding requests
    async with spawn(argv) as proc:
        await proc.initialize()

        async def write() -> None:  # like any client: writing and reading run concurrently
            for i in range(TOTAL):
                await slots.acquire()
                await proc.send(tool_call(i, "echo", {"text": PAYLOAD}))

        async def read() -> None:
            for n in range(TOTAL):
                reply = json.loads(await proc.read_line())
                slots.release()
                if "error" in reply:
                    errors.append(reply["error"])
                else:
                    texts.append(reply["result"]["content"][0]["text"])
                if n % 8 == 0:
                    await anyio.sleep(0.01)  # a slow reader: the server's pipe stays full

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                tg.start_soon(read)
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert errors == []
    assert len(texts) == TOTAL
    assert set(texts) == {PAYLOAD}
