"""The limits of :mod:`mcpkit.core.limits`: one ``Limits`` given to ``Server`` reaches
every transport, and each limit is answered with a clear error while serving goes on.

Message size, nesting depth, in-flight requests per connection and per HTTP session,
concurrent POSTs per endpoint, sessions; over in-memory, stdio and HTTP.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from http_helpers import (
    INIT_PARAMS,
    body_of,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
)
from peer import raw
from stdio_process import spawn

from mcpkit.core.jsonrpc import loads
from mcpkit.core.limits import DEFAULT_MAX_DEPTH, PARSER_MAX_DEPTH, DepthError, Limits, check_depth
from mcpkit.core.memory import memory_pair
from mcpkit.server import Server
from mcpkit.server.connection import ServerConnection
from mcpkit.server.http.endpoint import StreamableHTTP
from mcpkit.server.http.events import InMemoryEventStore

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
HERE = Path(__file__).parent


def nested(depth: int) -> str:
    """A JSON array nested ``depth`` levels deep."""
    return "[" * depth + "]" * depth


def deep_call(rid: int, depth: int, meta: JSON | None = None) -> bytes:
    """A ``tools/call`` whose whole message nests ``depth`` levels (message 1, params 2,
    arguments 3, then the arrays in ``text``)."""
    extra = f',"_meta":{json.dumps(meta)}' if meta else ""
    return (
        f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"echo",'
        f'"arguments":{{"text":{nested(depth - 3)}}}{extra}}}}}'
    ).encode()


class Gate:
    """A tool that holds until released, counting the calls that entered it."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.entered = 0

    def server(self, limits: Limits | None = None) -> Server:
        server = Server("gate", "1.0.0", limits=limits)

        @server.tool()
        async def hold() -> str:
            """Wait for the test."""
            self.entered += 1
            await self.release.wait()
            return "released"

        @server.tool()
        def echo(text: str) -> str:
            """Return the text."""
            return text

        return server

    async def wait_entered(self, n: int) -> None:
        with anyio.fail_after(10):
            while self.entered < n:
                await anyio.sleep(0.01)


# -- the Limits object ---------------------------------------------------------------------


def test_limits_have_documented_defaults() -> None:
    limits = Limits()
    assert limits.max_message_bytes == 32 * 1024 * 1024
    assert limits.max_http_body_bytes == 4 * 1024 * 1024
    assert limits.max_depth == DEFAULT_MAX_DEPTH == 100
    assert limits.max_inflight == 1024
    assert limits.max_http_inflight == 8192
    assert limits.max_sessions == 10_000
    # issue 11 §2, §3 (docs/reliability.md, "Server: every wait and buffer bounded")
    assert (limits.max_event_streams, limits.max_events_per_stream) == (10_000, 1000)
    assert limits.max_event_stream_bytes == 8 * 1024 * 1024
    assert limits.max_event_store_bytes == 64 * 1024 * 1024
    assert (limits.max_subscriptions, limits.max_uri_bytes) == (1000, 8192)
    assert limits.elicitation_timeout_s == 600.0  # at least 10 minutes: a person answers
    assert limits.sampling_timeout_s == limits.roots_timeout_s == 60.0
    assert limits.stream_send_timeout_s == 30.0


@pytest.mark.parametrize(
    "bad",
    [
        {"max_depth": 0},
        {"max_depth": PARSER_MAX_DEPTH + 1},
        {"max_depth": True},
        {"max_inflight": 0},
        {"max_message_bytes": -1},
        {"max_sessions": 1.5},
        {"max_event_store_bytes": 0},
        {"max_subscriptions": -3},
        {"max_uri_bytes": 2.0},
        {"elicitation_timeout_s": 0},
        {"sampling_timeout_s": float("inf")},
        {"roots_timeout_s": "60"},
        {"stream_send_timeout_s": -1.0},
    ],
)
def test_impossible_limits_are_refused_naming_the_field(bad: JSON) -> None:
    with pytest.raises(ValueError, match=f"Limits.{next(iter(bad))}"):
        Limits(**bad)


def test_depth_check_counts_containers_and_skips_small_messages() -> None:
    check_depth(loads(nested(100), 200), 100)
    with pytest.raises(DepthError, match="limit of 100"):
        check_depth(loads(nested(101), 200), 100)
    check_depth({"a": [{"b": []}]}, 4)
    with pytest.raises(DepthError):
        check_depth({"a": [{"b": []}]}, 3)
    with pytest.raises(ValueError, match="nesting depth exceeds"):
        loads(nested(DEFAULT_MAX_DEPTH + 1))


def test_one_limits_object_reaches_every_server_transport() -> None:
    limits = Limits(
        max_inflight=7,
        max_sessions=3,
        max_http_body_bytes=1000,
        max_http_inflight=5,
        max_depth=12,
    )
    server = Server("s", limits=limits)
    conn = ServerConnection(server, memory_pair()[0])
    assert conn.connection.inflight.limit == 7
    endpoint = StreamableHTTP(server)
    assert endpoint.max_inflight == 7
    assert endpoint.sessions.max_sessions == 3
    assert endpoint.max_body_bytes == 1000
    assert endpoint.max_http_inflight == 5
    assert endpoint.max_depth == 12
    limits = Limits(max_event_store_bytes=100, max_event_stream_bytes=50, stream_send_timeout_s=2)
    endpoint = StreamableHTTP(Server("s", limits=limits))
    assert isinstance(endpoint.store, InMemoryEventStore)
    assert (endpoint.store.max_bytes, endpoint.store.max_stream_bytes) == (100, 50)
    assert endpoint.send_timeout_s == 2
    # a transport's own keyword overrides one field
    assert StreamableHTTP(server, max_sessions=9).sessions.max_sessions == 9
    assert ServerConnection(server, memory_pair()[0], max_inflight=2).connection.inflight.limit == 2


# -- nesting depth ------------------------------------------------------------------------------


async def test_depth_at_the_limit_is_served_and_one_more_is_a_parse_error_in_memory() -> None:
    async with raw(Gate().server()) as wire:
        await wire.initialize()
        raw_send = wire.stream._send  # type: ignore[attr-defined]
        await raw_send.send(deep_call(1, DEFAULT_MAX_DEPTH))
        ok = await wire.response(1)
        assert ok["result"]["isError"] is True  # an array is not a string: a tool error
        await raw_send.send(deep_call(2, DEFAULT_MAX_DEPTH + 1))
        reply = await wire.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert "nesting depth exceeds the limit of 100" in reply["error"]["message"]
        assert "result" in await wire.call(3, "ping")


async def test_configured_depth_is_a_parse_error_over_stdio_and_serving_continues() -> None:
    argv = [sys.executable, str(HERE / "limits_server.py"), json.dumps({"max_depth": 10})]
    async with spawn(argv) as server:
        await server.initialize()
        await server.write(deep_call(1, 10) + b"\n")
        assert (await server.response(1))["result"]["isError"] is True
        await server.write(deep_call(2, 11) + b"\n")
        reply = await server.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error: nesting depth exceeds the limit of 10 (Limits.max_depth)",
            },
        }
        assert "result" in await server.call(3, "ping")


async def test_too_deep_post_is_400_parse_error_on_both_eras() -> None:
    gate = Gate()
    async with mcp_http(gate.server(Limits(max_depth=20))) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(url, content=deep_call(5, 21), headers=headers(sid))
        assert r.status_code == 400
        assert r.json()["id"] is None
        assert r.json()["error"]["code"] == -32700
        r = await client.post(
            url,
            content=deep_call(6, 21, modern_meta()),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32700
        r = await client.post(url, content=deep_call(7, 20), headers=headers(sid))
        assert body_of(r)["result"]["isError"] is True


# -- message size -------------------------------------------------------------------------------


async def test_configured_line_limit_over_stdio_is_a_parse_error_and_serving_continues() -> None:
    argv = [sys.executable, str(HERE / "limits_server.py"), json.dumps({"max_message_bytes": 2000})]
    async with spawn(argv) as server:
        await server.initialize()
        await server.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x" * 5000}},
            }
        )
        reply = await server.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert "larger than 2000 bytes" in reply["error"]["message"]
        ok = await server.call(2, "tools/call", {"name": "echo", "arguments": {"text": "y" * 1000}})
        assert ok["result"]["content"][0]["text"] == "y" * 1000


async def test_configured_body_limit_over_http_is_413_with_a_json_rpc_error() -> None:
    async with mcp_http(Gate().server(Limits(max_http_body_bytes=1000))) as (client, url, _):
        sid = await initialize(client, url)
        big = request(2, "tools/call", {"name": "echo", "arguments": {"text": "x" * 2000}})
        r = await client.post(url, json=big, headers=headers(sid))
        assert r.status_code == 413
        assert r.json()["error"]["code"] == -32600
        assert "exceeds 1000 bytes" in r.json()["error"]["message"]
        small = request(3, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert body_of(await client.post(url, json=small, headers=headers(sid)))["result"]


# -- in-flight requests ---------------------------------------------------------------------------


async def test_requests_beyond_max_inflight_on_a_connection_are_refused_the_rest_served() -> None:
    gate = Gate()
    async with raw(gate.server(Limits(max_inflight=2))) as wire:
        await wire.initialize()
        for rid in (1, 2):
            await wire.send(request(rid, "tools/call", {"name": "hold"}))
        await gate.wait_entered(2)
        await wire.send(request(3, "tools/call", {"name": "echo", "arguments": {"text": "x"}}))
        busy = await wire.response(3)
        assert busy["error"]["code"] == -32603
        assert "limit 2" in busy["error"]["message"]
        gate.release.set()
        assert (await wire.response(1))["result"]["content"][0]["text"] == "released"
        assert (await wire.response(2))["result"]["content"][0]["text"] == "released"
        ok = await wire.call(4, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert ok["result"]["content"][0]["text"] == "x"


async def test_requests_beyond_max_inflight_on_an_http_session_are_refused_the_rest_served() -> (
    None
):
    gate = Gate()
    async with mcp_http(gate.server(Limits(max_inflight=1))) as (client, url, _):
        sid = await initialize(client, url)
        async with anyio.create_task_group() as tg:
            first: list[httpx2.Response] = []

            async def hold() -> None:
                first.append(
                    await client.post(
                        url, json=request(1, "tools/call", {"name": "hold"}), headers=headers(sid)
                    )
                )

            tg.start_soon(hold)
            await gate.wait_entered(1)
            r = await client.post(
                url,
                json=request(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
                headers=headers(sid),
            )
            busy = body_of(r)
            assert busy["id"] == 2
            assert busy["error"]["code"] == -32603
            assert "limit 1" in busy["error"]["message"]
            gate.release.set()
        assert body_of(first[0])["result"]["content"][0]["text"] == "released"
        r = await client.post(
            url,
            json=request(3, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers=headers(sid),
        )
        assert body_of(r)["result"]["content"][0]["text"] == "x"


async def test_posts_beyond_max_http_inflight_are_503_before_the_body_is_read() -> None:
    gate = Gate()
    async with mcp_http(gate.server(Limits(max_http_inflight=1))) as (client, url, endpoint):
        held = request(1, "tools/call", {"name": "hold", "_meta": modern_meta()})
        async with anyio.create_task_group() as tg:
            first: list[httpx2.Response] = []

            async def hold() -> None:
                first.append(
                    await client.post(url, json=held, headers=modern_headers("tools/call", "hold"))
                )

            tg.start_soon(hold)
            await gate.wait_entered(1)
            r = await client.post(
                url, json=request(2, "initialize", INIT_PARAMS), headers=headers()
            )
            assert r.status_code == 503
            assert r.json()["id"] is None
            assert r.json()["error"]["code"] == -32603
            assert "Limits.max_http_inflight" in r.json()["error"]["message"]
            gate.release.set()
        assert body_of(first[0])["result"]["content"][0]["text"] == "released"
        assert endpoint.posts == 0
        await initialize(client, url)


async def test_sessions_beyond_limits_max_sessions_are_503() -> None:
    async with mcp_http(Gate().server(Limits(max_sessions=1))) as (client, url, endpoint):
        await initialize(client, url)
        r = await client.post(url, json=request(1, "initialize", INIT_PARAMS), headers=headers())
        assert r.status_code == 503
        assert r.json()["error"]["code"] == -32603
        assert "limit 1" in r.json()["error"]["message"]
        assert len(endpoint.sessions) == 1


def test_the_example_in_docs_reliability_runs_and_sets_the_limits() -> None:
    doc = Path(__file__).resolve().parents[4] / "docs" / "reliability.md"
    code = doc.read_text("utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(doc), "exec"), namespace)
    server = namespace["server"]
    assert server.limits == Limits(
        max_message_bytes=1 << 20, max_depth=32, max_inflight=64, max_sessions=500
    )
    assert StreamableHTTP(server).sessions.max_sessions == 500
