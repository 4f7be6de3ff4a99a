"""Resumption with an event store that answers late (issue 11 §4; streams rule 6).

A store shared by replicas answers after a network round trip. Events stored while a
resuming GET's replay query is under way must still reach the client: a handler's
``elicitation/create`` stored then was lost, and the handler waited for an answer that
could never come. ``SlowStore`` here awaits ``anyio.sleep`` in every method and lets
the test run the handler at the worst moment: after the query has read the store,
before its answer arrives.
"""

from __future__ import annotations

import anyio
import httpx2
import pytest
from http_helpers import (
    answer_elicitations,
    headers,
    initialize,
    mcp_http,
    request,
    sse_events,
    sse_messages,
)

from mcpkit.server import Context, Server
from mcpkit.server.http import InMemoryEventStore

pytestmark = pytest.mark.anyio

JSON = dict[str, object]


class SlowStore:
    """An :class:`EventStore` whose answers arrive late: every call sleeps, and a
    replay query sleeps ``replay_delay_s`` *after* reading the store, so whatever is
    appended in between is missing from its answer."""

    def __init__(self, *, delay_s: float = 0.02, replay_delay_s: float = 0.4) -> None:
        self.inner = InMemoryEventStore()
        self.delay_s = delay_s
        self.replay_delay_s = replay_delay_s
        self.queried = anyio.Event()
        """Set when a replay query has read the store (its answer still on the way)."""
        self.armed = False

    async def append(self, stream_id: str, payload: bytes) -> str:
        await anyio.sleep(self.delay_s)
        return await self.inner.append(stream_id, payload)

    async def replay_after(self, event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        await anyio.sleep(self.delay_s)
        found = await self.inner.replay_after(event_id)
        if self.armed and not self.queried.is_set():
            self.queried.set()
            await anyio.sleep(self.replay_delay_s)
        return found

    async def finish(self, stream_id: str) -> None:
        await anyio.sleep(self.delay_s)
        await self.inner.finish(stream_id)

    async def forget(self, prefix: str) -> None:
        await anyio.sleep(self.delay_s)
        await self.inner.forget(prefix)


def racing_server(store: SlowStore) -> Server:
    server = Server("racing")

    @server.tool()
    async def ask_after_close(ctx: Context) -> str:
        """Closes its connection, then asks for a name while the client's replay query
        is under way."""
        await ctx.close_stream(retry_ms=10)
        await store.queried.wait()
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {(answer.get('content') or {}).get('name')}"

    @server.tool()
    async def finish_after_close(ctx: Context) -> str:
        """Closes its connection, then finishes while the client's replay query is under
        way (its result lands in the store just then)."""
        await ctx.close_stream(retry_ms=10)
        await store.queried.wait()
        return "finished during the replay"

    return server


async def _start(client: httpx2.AsyncClient, url: str, sid: str, tool: str) -> str:
    """Call ``tool``; the server closes the connection at once. Returns the newest
    event id the client saw (the priming event's)."""
    r = await client.post(
        url, json=request(2, "tools/call", {"name": tool, "arguments": {}}), headers=headers(sid)
    )
    events = sse_events(r.text)
    assert events[0]["data"] == ""
    assert events[-1] == {"retry": "10"}
    assert not sse_messages(r.text)
    return events[0]["id"]


async def test_an_event_stored_during_the_replay_query_reaches_the_resuming_client() -> None:
    store = SlowStore()
    async with mcp_http(racing_server(store), event_store=store) as (client, url, _):
        sid = await initialize(client, url)
        newest = await _start(client, url, sid, "ask_after_close")
        store.armed = True
        result: JSON | None = None
        with anyio.fail_after(5 * (store.replay_delay_s + 1)):  # bound: one replay + a call
            async with client.stream(
                "GET",
                url,
                headers={**headers(sid, accept="text/event-stream"), "last-event-id": newest},
            ) as response:
                assert response.status_code == 200
                answers = await answer_elicitations(client, url, sid, response, 2)
                result = answers[-1] if answers else None
        assert result is not None
        assert result["result"] == {
            "content": [{"type": "text", "text": "hello Ada"}],
            "isError": False,
        }


async def test_a_stream_that_finishes_during_the_replay_query_is_replayed_whole() -> None:
    store = SlowStore()
    async with mcp_http(racing_server(store), event_store=store) as (client, url, _):
        sid = await initialize(client, url)
        newest = await _start(client, url, sid, "finish_after_close")
        store.armed = True
        with anyio.fail_after(5 * (store.replay_delay_s + 1)):
            r = await client.get(
                url, headers={**headers(sid, accept="text/event-stream"), "last-event-id": newest}
            )
        msgs = sse_messages(r.text)
        assert [m.get("id") for m in msgs] == [2]
        assert msgs[0]["result"]["content"][0]["text"] == "finished during the replay"
