"""Per-request streams, server-to-client requests, response modes, resumability and the
standalone GET stream (2025-11-25 basic/transports §Sending Messages, §Listening,
§Resumability; wire case I1)."""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest
from http_helpers import (
    LATEST,
    answer_elicitations,
    body_of,
    headers,
    initialize,
    mcp_http,
    request,
    sse_events,
    sse_messages,
)

from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


def chatty_server() -> Server:
    server = Server("chatty")

    @server.tool()
    async def chatter(ctx: Context) -> str:
        """Five logs and five progress notifications before the result."""
        for i in range(5):
            await ctx.info(f"log {i}")
            await ctx.report_progress(i + 1, 5)
        return "done"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the user for a name (a live elicitation on the handshake era)."""
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {(answer.get('content') or {}).get('name')}"

    @server.tool()
    async def streaming(ctx: Context) -> str:
        """Reports whether this request can stream."""
        return f"streaming={ctx.transport['streaming']}"

    @server.tool()
    async def raw(ctx: Context) -> str:
        """Sends roots/list on the request's channel, bypassing capability checks."""
        assert ctx.channel is not None
        await ctx.channel.request("roots/list", {})
        return "sent"

    @server.tool()
    async def polled(ctx: Context) -> str:
        """Closes its connection, then logs and answers (SEP-1699 polling)."""
        closed = await ctx.close_stream(retry_ms=50)
        await ctx.info("after close")
        return f"closed={closed}"

    return server


CHATTER = {"name": "chatter", "arguments": {}, "_meta": {"progressToken": "tok"}}


async def test_three_or_more_notifications_before_the_result_never_deadlock() -> None:
    """I1: in SSE mode all arrive, in order, before the result; in JSON-response mode
    and for JSON-only clients the call completes with the result alone."""
    async with mcp_http(chatty_server()) as (client, url, _):
        sid = await initialize(client, url)
        with anyio.fail_after(5):
            r = await client.post(url, json=request(2, "tools/call", CHATTER), headers=headers(sid))
        msgs = sse_messages(r.text)
        kinds = [m.get("method", "result") for m in msgs]
        assert kinds == ["notifications/message", "notifications/progress"] * 5 + ["result"]
        assert [m["params"]["progress"] for m in msgs if "progress" in m.get("params", {})] == [
            1,
            2,
            3,
            4,
            5,
        ]
        with anyio.fail_after(5):
            r = await client.post(
                url,
                json=request(3, "tools/call", CHATTER),
                headers=headers(sid, accept="application/json"),
            )
        assert r.json()["result"]["content"][0]["text"] == "done"
    async with mcp_http(chatty_server(), response_mode="json") as (client, url, _):
        sid = await initialize(client, url)
        with anyio.fail_after(5):
            r = await client.post(url, json=request(2, "tools/call", CHATTER), headers=headers(sid))
        assert r.headers["content-type"] == "application/json"
        assert r.json()["result"]["content"][0]["text"] == "done"


async def test_server_to_client_request_travels_on_the_calls_stream() -> None:
    async with mcp_http(chatty_server()) as (client, url, _):
        sid = await initialize(client, url)
        async with client.stream(
            "POST",
            url,
            json=request(5, "tools/call", {"name": "ask", "arguments": {}}),
            headers=headers(sid),
        ) as response:
            assert response.headers["content-type"] == "text/event-stream"
            results = await answer_elicitations(client, url, sid, response, 5)
        assert results[0]["result"]["content"][0]["text"] == "hello Ada"


async def test_reverse_calls_in_json_response_mode_get_a_clear_error() -> None:
    async with mcp_http(chatty_server(), response_mode="json") as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(5, "tools/call", {"name": "ask", "arguments": {}}),
            headers=headers(sid),
        )
        error = r.json()["error"]
        assert error["code"] == -32600
        assert "JSON-response mode" in error["message"]
        assert "elicitation/create" in error["message"]
        r = await client.post(
            url,
            json=request(6, "tools/call", {"name": "streaming", "arguments": {}}),
            headers=headers(sid),
        )
        assert r.json()["result"]["content"][0]["text"] == "streaming=False"


async def test_stateless_mode_serves_without_sessions_and_refuses_reverse_calls() -> None:
    async with mcp_http(chatty_server(), stateless=True) as (client, url, endpoint):
        r = await client.post(
            url,
            json=request(1, "initialize", {"protocolVersion": LATEST, "capabilities": {}}),
            headers=headers(),
        )
        assert r.status_code == 200
        assert "mcp-session-id" not in r.headers
        r = await client.post(url, json=request(2, "tools/list"), headers=headers())
        assert body_of(r)["result"]["tools"][0]["name"] == "chatter"
        r = await client.post(url, json=request(3, "tools/call", CHATTER), headers=headers())
        assert len(sse_messages(r.text)) == 11  # notifications still flow on the stream
        assert "id:" not in r.text  # no resumability without sessions
        r = await client.post(
            url, json=request(4, "tools/call", {"name": "ask", "arguments": {}}), headers=headers()
        )
        error = body_of(r)["error"]  # no session to route the answer back (not "undeclared")
        assert error["code"] == -32600
        assert "the server is stateless" in error["message"]
        assert "did not declare" not in error["message"]
        r = await client.post(
            url, json=request(5, "tools/call", {"name": "raw", "arguments": {}}), headers=headers()
        )
        assert "stateless" in body_of(r)["error"]["message"]
        r = await client.get(url, headers=headers(accept="text/event-stream"))
        assert r.status_code == 405
        assert len(endpoint.sessions) == 0
        listeners = len(endpoint.server.hub)
        for rid in range(3):
            init = {"protocolVersion": LATEST, "capabilities": {}}
            await client.post(url, json=request(rid, "initialize", init), headers=headers())
        assert len(endpoint.server.hub) == listeners  # nothing outlives a stateless request


async def test_sse_mode_primes_every_stream_with_an_event_id() -> None:
    async with mcp_http(response_mode="sse") as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(url, json=request(2, "ping"), headers=headers(sid))
        events = sse_events(r.text)
        assert events[0]["data"] == ""
        assert "id" in events[0]
        assert json.loads(events[1]["data"]) == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_closed_stream_is_resumed_with_last_event_id_on_get() -> None:
    """The handler closes its connection (priming event, retry field); the client GETs
    with Last-Event-ID and receives what was sent after, including the result."""
    async with mcp_http(chatty_server()) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(7, "tools/call", {"name": "polled", "arguments": {}}),
            headers=headers(sid),
        )
        events = sse_events(r.text)
        assert events[0]["data"] == ""
        assert "id" in events[0]
        assert events[-1] == {"retry": "50"}
        assert not sse_messages(r.text)
        last = events[0]["id"]
        await anyio.sleep(0.05)
        r = await client.get(
            url, headers={**headers(sid, accept="text/event-stream"), "last-event-id": last}
        )
        msgs = sse_messages(r.text)
        assert msgs[0]["params"]["data"] == "after close"
        assert msgs[-1]["id"] == 7
        assert msgs[-1]["result"]["content"][0]["text"] == "closed=True"


async def test_resumption_takes_over_a_still_running_stream() -> None:
    server = chatty_server()
    gate = anyio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.close_stream()
        await gate.wait()
        await ctx.info("late")
        return "slow done"

    async with mcp_http(server) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(8, "tools/call", {"name": "slow", "arguments": {}}),
            headers=headers(sid),
        )
        first = sse_events(r.text)[0]["id"]
        async with client.stream(
            "GET", url, headers={**headers(sid, accept="text/event-stream"), "last-event-id": first}
        ) as response:
            gate.set()
            body = (await response.aread()).decode()
        msgs = sse_messages(body)
        assert [m.get("method", "result") for m in msgs] == ["notifications/message", "result"]


async def test_last_event_id_of_another_session_replays_nothing_of_it() -> None:
    async with mcp_http(chatty_server()) as (client, url, _):
        a = await initialize(client, url)
        b = await initialize(client, url)
        r = await client.post(
            url,
            json=request(7, "tools/call", {"name": "polled", "arguments": {}}),
            headers=headers(a),
        )
        last = sse_events(r.text)[0]["id"]
        async with client.stream(
            "GET", url, headers={**headers(b, accept="text/event-stream"), "last-event-id": last}
        ) as response:
            assert response.status_code == 200
            chunk = b""
            async for part in response.aiter_bytes():
                chunk += part
                break
        assert b"closed=True" not in chunk


async def test_standalone_get_stream_carries_list_changed_and_the_newest_one_takes_over() -> None:
    # A second GET is not 409 (the transport allows only text/event-stream or 405 on
    # GET): it takes the stream over, the first connection ends, and the message goes
    # to the newest stream only (never broadcast).
    server = chatty_server()
    async with mcp_http(server) as (client, url, _):
        sid = await initialize(client, url)
        get_headers = headers(sid, accept="text/event-stream", mcp_protocol_version=LATEST)
        async with client.stream("GET", url, headers=get_headers) as first:
            assert first.headers["content-type"] == "text/event-stream"
            async with client.stream("GET", url, headers=get_headers) as second:
                assert second.status_code == 200
                assert second.headers["content-type"] == "text/event-stream"
                with anyio.fail_after(5):
                    old = [m async for m in httpx2.EventSource(first) if m.data]
                assert old == []  # the first connection ended, carrying nothing
                server.remove_tool("ask")
                got = None
                with anyio.fail_after(5):
                    async for sse in httpx2.EventSource(second):
                        if sse.data:
                            got = json.loads(sse.data)
                            break
        assert got == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


async def test_get_is_an_sse_stream_whatever_accept_says_and_405_when_not_offered() -> None:
    async with mcp_http(standalone_sse=False) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.get(url, headers=headers(sid, accept="text/event-stream"))
        assert r.status_code == 405
        assert r.headers["allow"] == "POST, DELETE"
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        h = headers(sid, accept="application/json")
        async with client.stream("GET", url, headers=h) as r:  # not 406: SSE or 405 only
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/event-stream"
        r = await client.get(url, headers=headers(accept="text/event-stream"))
        assert r.status_code == 405  # no session id: 405, not the SHOULD's 400
        assert r.headers["allow"] == "GET, POST, DELETE"


async def test_session_less_get_is_405_after_the_musts_and_a_probing_client_listens() -> None:
    # A client that probes GET before initialize (python-sdk#3102) accepts only 405
    # there. The MUSTs still come first: bad Origin 403, bad version 400, unknown
    # session 404; DELETE without a session stays 400 (nothing to probe there).
    server = chatty_server()
    async with mcp_http(server) as (client, url, _):
        sse_only = headers(accept="text/event-stream")
        r = await client.get(url, headers={**sse_only, "origin": "http://attacker.test"})
        assert r.status_code == 403
        r = await client.get(url, headers={**sse_only, "mcp-protocol-version": "1999-01-01"})
        assert r.status_code == 400
        assert "1999-01-01" in r.json()["error"]["message"]
        r = await client.get(url, headers=headers("no-such-session", accept="text/event-stream"))
        assert r.status_code == 404
        r = await client.delete(url, headers=headers())
        assert r.status_code == 400

        # The probing client: GET first, 405 means "no stream yet", then the handshake.
        probe = await client.get(url, headers=sse_only)
        assert probe.status_code == 405
        assert probe.headers["allow"] == "GET, POST, DELETE"
        assert probe.json()["error"]["code"] == -32600
        sid = await initialize(client, url)
        get_headers = headers(sid, accept="text/event-stream", mcp_protocol_version=LATEST)
        async with client.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200
            server.remove_tool("ask")
            got = None
            with anyio.fail_after(5):
                async for sse in httpx2.EventSource(stream):
                    if sse.data:
                        got = json.loads(sse.data)
                        break
        assert got == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


async def test_notifications_cancelled_stops_the_named_request() -> None:
    server = chatty_server()
    cancelled = anyio.Event()

    @server.tool()
    async def forever(ctx: Context) -> str:
        await ctx.info("started")
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with mcp_http(server) as (client, url, _):
        sid = await initialize(client, url)
        async with client.stream(
            "POST",
            url,
            json=request(9, "tools/call", {"name": "forever", "arguments": {}}),
            headers=headers(sid),
        ) as response:
            events = aiter(httpx2.EventSource(response))
            while not (await anext(events)).data:
                pass
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 9, "reason": "user"},
            }
            r = await client.post(url, json=note, headers=headers(sid))
            assert r.status_code == 202
            with anyio.fail_after(5):
                await cancelled.wait()
                rest = [sse.data async for sse in events]
        assert not [d for d in rest if '"id":9' in d]
