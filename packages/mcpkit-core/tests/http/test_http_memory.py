"""Memory given back (issue 8): serving leaves no reference cycle of mcpkit's behind.

Objects in a cycle are freed only by a full garbage collection, which CPython runs
rarely once many objects are alive, so a cycle per session shows as RSS that keeps
growing over open/close rounds. Regression: a closed ``LegacySession`` kept its hub
listener, whose filter was the session's own bound method. (A stream connection is one
cycle per connection, ``ServerConnection`` and its engine ``Connection``: per process on
stdio, so not covered here.)
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Generator
from contextlib import contextmanager

import pytest
from http_helpers import headers, initialize, mcp_http, modern_headers, modern_meta, request

pytestmark = pytest.mark.anyio


@contextmanager
def mcpkit_garbage() -> Generator[Counter[str]]:
    """Counts, by type, the mcpkit objects that only the cycle collector could free
    among those created inside the block."""
    found: Counter[str] = Counter()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        garbage: list[object] = gc.garbage
        for obj in garbage:
            module = getattr(type(obj), "__module__", "") or ""
            if module.startswith("mcpkit"):
                found[f"{module}.{type(obj).__qualname__}"] += 1
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("response_mode", ["auto", "json", "sse"])
async def test_http_sessions_opened_used_and_deleted_leave_no_cycles(response_mode: str) -> None:
    async with mcp_http(response_mode=response_mode) as (client, url, _endpoint):
        await initialize(client, url)  # warm: imports, caches
        with mcpkit_garbage() as garbage:
            for i in range(5):
                sid = await initialize(client, url)
                call = request(i, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
                r = await client.post(url, json=call, headers=headers(sid))
                assert r.status_code == 200
                assert "hi" in r.text
                r = await client.delete(url, headers=headers(sid))
                assert r.status_code in (200, 204)
                modern = {"name": "echo", "arguments": {"text": "hi"}, "_meta": modern_meta()}
                r = await client.post(
                    url,
                    json=request(i, "tools/call", modern),
                    headers=modern_headers("tools/call", "echo"),
                )
                assert r.status_code == 200
                assert "hi" in r.text
    assert dict(garbage) == {}


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_session_requests_that_outlive_the_disconnect_watch_delay_leave_no_cycles(
    response_mode: str,
) -> None:
    """A handshake-era request still running when its disconnect watch starts (after
    50-100 ms) leaves no cycle behind once answered (regression: the watch kept its task,
    whose frame refers to the watch, so every slow request left a cycle holding its
    session)."""
    async with mcp_http(response_mode=response_mode) as (client, url, _endpoint):
        await initialize(client, url)  # warm: imports, caches
        with mcpkit_garbage() as garbage:
            for i in range(3):
                sid = await initialize(client, url)
                call = request(i, "tools/call", {"name": "sleep", "arguments": {"seconds": 0.3}})
                r = await client.post(url, json=call, headers=headers(sid))
                assert r.status_code == 200
                assert "slept" in r.text
                r = await client.delete(url, headers=headers(sid))
                assert r.status_code in (200, 204)
    assert dict(garbage) == {}
