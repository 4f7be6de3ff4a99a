"""The endpoint answers what the transport pages say (issue 11 §7): the listen stream in
JSON-response mode, a cancelled request's response type, stateless mode's reverse calls
and advertisement, in-batch cancellation (HTTP and the connection engine)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from http_helpers import (
    BOTH,
    LATEST,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
    sse_messages,
)
from peer import raw

from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


class Gate:
    """A tool that waits until cancelled, recording that it started and was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()

    def install(self, server: Server) -> Server:
        @server.tool()
        async def wait_forever() -> str:
            self.started.set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return "never"  # pragma: no cover

        @server.tool()
        async def ask(ctx: Context) -> str:
            result = await ctx.sample(
                [{"role": "user", "content": {"type": "text", "text": "hi"}}], max_tokens=5
            )
            return str(result)

        return server


def cancel(rid: int | str) -> JSON:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "test"},
    }


WAIT = {"name": "wait_forever", "arguments": {}}


# -- the listen stream in JSON-response mode ------------------------------------------------


async def test_listen_is_an_sse_stream_in_json_response_mode() -> None:
    # Regression: 406 although the client accepted SSE; server/discover still advertised
    # listChanged, which only a listen stream can deliver.
    server = build_demo_server()
    async with mcp_http(server, response_mode="json") as (client, url, endpoint):
        discover = request(1, "server/discover", {"_meta": modern_meta()})
        r = await client.post(url, json=discover, headers=modern_headers("server/discover"))
        assert r.headers["content-type"] == "application/json"  # ordinary answers: JSON
        assert r.json()["result"]["capabilities"]["tools"]["listChanged"] is True
        body = request(
            2,
            "subscriptions/listen",
            {"_meta": modern_meta(), "notifications": {"toolsListChanged": True}},
        )
        seen: list[JSON] = []
        async with client.stream(
            "POST", url, json=body, headers=modern_headers("subscriptions/listen")
        ) as r:
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/event-stream"
            with anyio.fail_after(10):
                async for line in r.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    msg = json.loads(line[5:])
                    seen.append(msg)
                    if msg.get("method") == "notifications/subscriptions/acknowledged":
                        server.notify_list_changed("tools")
                    elif msg.get("method") == "notifications/tools/list_changed":
                        await endpoint.aclose()
                    elif "result" in msg:
                        break
        assert [m.get("method") for m in seen[:2]] == [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
        ]
        assert seen[-1]["id"] == 2


# -- a cancelled request is still answered with one of the two types --------------------


async def cancelled_call(
    client: httpx2.AsyncClient, url: str, sid: str, gate: Gate, rid: int, accept: str
) -> httpx2.Response:
    """POST a ``wait_forever`` call, cancel it once it runs; its HTTP response."""
    answers: list[httpx2.Response] = []
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            body = request(rid, "tools/call", WAIT)
            answers.append(await client.post(url, json=body, headers=headers(sid, accept=accept)))

        tg.start_soon(call)
        with anyio.fail_after(10):
            await gate.started.wait()
        r = await client.post(url, json=cancel(rid), headers=headers(sid))
        assert r.status_code == 202
    return answers[0]


@pytest.mark.parametrize("response_mode", ["auto", "json"])
async def test_a_request_cancelled_before_streaming_gets_an_sse_stream_without_a_response(
    response_mode: str,
) -> None:
    # Regression: 204 No Content with no content type (the transport's MUST: a POST
    # carrying a request gets text/event-stream or application/json).
    gate = Gate()
    server = gate.install(build_demo_server())
    async with mcp_http(server, response_mode=response_mode) as (client, url, endpoint):
        sid = await initialize(client, url)
        r = await cancelled_call(client, url, sid, gate, 7, BOTH)
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        assert sse_messages(r.text) == []  # the stream ends without a response
        assert gate.cancelled.is_set()
        assert len(endpoint.active) == 0


async def test_a_cancelled_request_of_a_json_only_client_gets_a_json_error() -> None:
    gate = Gate()
    async with mcp_http(gate.install(build_demo_server())) as (client, url, _):
        sid = await initialize(client, url)
        r = await cancelled_call(client, url, sid, gate, 8, "application/json")
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json"
        assert r.json()["id"] == 8
        assert r.json()["error"]["code"] == -32603
        assert "cancelled" in r.json()["error"]["message"]


async def test_a_response_withheld_by_send_middleware_is_still_a_typed_answer() -> None:
    server = build_demo_server()

    async def drop_one(message: JSON, send_next: Any) -> None:
        if message.get("id") != "drop":
            await send_next(message)

    server.add_send_middleware(drop_one)

    async with mcp_http(server) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(url, json=request("drop", "ping"), headers=headers(sid))
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        assert sse_messages(r.text) == []
        h = headers(sid, accept="application/json")
        r = await client.post(url, json=request("drop", "ping"), headers=h)
        assert r.headers["content-type"] == "application/json"
        assert "withheld" in r.json()["error"]["message"]


# -- stateless mode --------------------------------------------------------------------


async def test_stateless_reverse_call_error_says_stateless_even_when_sampling_was_declared() -> (
    None
):
    # Regression: "the client did not declare sampling" although it had (in initialize).
    async with mcp_http(Gate().install(build_demo_server()), stateless=True) as (client, url, _):
        init = {"protocolVersion": LATEST, "capabilities": {"sampling": {}}}
        r = await client.post(url, json=request(1, "initialize", init), headers=headers())
        assert r.status_code == 200
        call = request(2, "tools/call", {"name": "ask", "arguments": {}})
        r = await client.post(url, json=call, headers=headers(mcp_protocol_version=LATEST))
        msg = json.dumps(r.json() if r.headers["content-type"] == "application/json" else r.text)
        assert "sampling/createMessage: cannot send a server-to-client request" in msg
        assert "the server is stateless" in msg
        assert "did not declare" not in msg


@pytest.mark.parametrize(
    ("options", "delivers"),
    [
        ({}, True),
        ({"stateless": True}, False),
        ({"standalone_sse": False}, False),
    ],
)
async def test_initialize_advertises_change_notifications_only_where_they_can_be_delivered(
    options: JSON, delivers: bool
) -> None:
    async with mcp_http(**options) as (client, url, _):
        init = {"protocolVersion": LATEST, "capabilities": {}}
        r = await client.post(url, json=request(1, "initialize", init), headers=headers())
        caps = (
            r.json() if r.headers["content-type"] == "application/json" else sse_messages(r.text)[0]
        )["result"]["capabilities"]
        assert {"tools", "prompts", "resources"} <= set(caps)
        flags = [caps[k].get("listChanged") for k in ("tools", "prompts", "resources")]
        flags.append(caps["resources"].get("subscribe"))
        assert flags == ([True] * 4 if delivers else [None] * 4)
        if delivers:
            return
        # ... and resources/subscribe, which nothing could deliver, is refused
        h = headers(mcp_protocol_version=LATEST)
        if "mcp-session-id" in r.headers:
            h = headers(r.headers["mcp-session-id"], mcp_protocol_version=LATEST)
        for body in (
            request(2, "resources/subscribe", {"uri": "test://static-text"}),
            [request(3, "resources/subscribe", {"uri": "test://static-text"})],
        ):
            if isinstance(body, list):  # batches: 2025-03-26 only
                if options.get("stateless"):
                    h = headers(mcp_protocol_version="2025-03-26")
                else:
                    sid = await initialize(client, url, version="2025-03-26")
                    h = headers(sid)
            r = await client.post(url, json=body, headers=h)
            reply = r.json() if r.headers["content-type"] == "application/json" else None
            reply = reply if reply is not None else sse_messages(r.text)
            error = (reply[0] if isinstance(reply, list) else reply)["error"]
            assert error["code"] == -32601
            assert "no GET stream" in error["message"]


# -- a cancellation inside the same 2025-03-26 batch ------------------------------------------


def _batch(order: str) -> list[JSON]:
    call, note, ping = request(5, "tools/call", WAIT), cancel(5), request(6, "ping")
    return [call, note, ping] if order == "request-first" else [note, call, ping]


@pytest.mark.parametrize("order", ["request-first", "cancel-first"])
@pytest.mark.parametrize("stateless", [False, True])
async def test_an_in_batch_cancellation_cancels_its_request_over_http(
    order: str, stateless: bool
) -> None:
    # Regression: every notification was handled before any request was admitted, so
    # the cancellation named an unknown id and the batch never finished.
    gate = Gate()
    async with mcp_http(gate.install(build_demo_server()), stateless=stateless) as (
        client,
        url,
        endpoint,
    ):
        if stateless:
            h = headers(accept=BOTH, mcp_protocol_version="2025-03-26")
        else:
            h = headers(await initialize(client, url, version="2025-03-26"))
        with anyio.fail_after(10):
            r = await client.post(url, json=_batch(order), headers=h)
        assert r.status_code == 200
        if r.headers["content-type"] == "application/json":
            replies = r.json()
        else:
            replies = sse_messages(r.text)
        assert [m["id"] for m in replies] == [6]  # the cancelled request gets no response
        assert len(endpoint.active) == 0
        if not stateless:
            assert len(next(iter(endpoint.sessions)).inflight) == 0


@pytest.mark.parametrize("order", ["request-first", "cancel-first"])
async def test_an_in_batch_cancellation_cancels_its_request_on_a_connection(order: str) -> None:
    # The engine's batch path (stdio, in-memory) admits the batch's requests first too.
    gate = Gate()
    async with raw(gate.install(Server("s"))) as wire:
        await wire.initialize("2025-03-26")
        await wire.send(_batch(order))
        with anyio.fail_after(10):
            reply = await wire.recv()
        assert [m["id"] for m in reply] == [6]
        assert not gate.started.is_set() or gate.cancelled.is_set()
