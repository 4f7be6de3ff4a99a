"""A misbehaving client against the server (issue 11, "Real input"; §2, §3).

Every case runs the real endpoint under uvicorn on 127.0.0.1 (or the in-memory
transport where the transport is not the point) and asserts three things: bounded time
(deadlines at least 5x the bound under test), bounded memory (tracemalloc, not RSS) and
the documented error.

- Abandoned reverse calls: a client that disconnects after ``elicitation/create`` no
  longer pins its session (``max_sessions`` stays usable); an unanswered reverse call
  times out with ``RequestTimeoutError`` (``isError`` for a tool); ending the session
  ends a pending reverse call at once.
- Slow readers: a client that never reads its SSE response is given up after
  ``Limits.stream_send_timeout_s``; the handler finishes, the session can be deleted,
  and what the stream held stays within the event store's byte bounds.
- Oversized and repeated subscriptions: bounded URI length and count (-32602), unknown
  URIs refused (-32002), repeats idempotent; ``subscriptions/listen`` filters likewise.
"""

from __future__ import annotations

import contextlib
import gc
import json
import socket
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import pytest
import uvicorn

from mcpkit.core.engine import PeerClosedError
from mcpkit.core.limits import Limits
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
BOTH = "application/json, text/event-stream"
LATEST = "2025-11-25"
MODERN = "2026-07-28"
CAPS: JSON = {"elicitation": {}, "sampling": {}, "roots": {}}
FORM: JSON = {"type": "object", "properties": {"name": {"type": "string"}}}


# -- harness -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def served(server: Server, **options: Any) -> AsyncIterator[tuple[str, Any]]:
    """``server`` over streamable HTTP under uvicorn on a free 127.0.0.1 port; yields
    the endpoint URL and the endpoint object."""
    app = http_app(server, path="/mcp", **options)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="critical", lifespan="on", timeout_graceful_shutdown=3)
    uv = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve, [sock])
        with anyio.fail_after(10):
            while not uv.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp", app.state.mcp
        finally:
            uv.should_exit = True


def hdrs(sid: str | None = None, *, accept: str = BOTH, **extra: str) -> dict[str, str]:
    h = {"content-type": "application/json", "accept": accept}
    if sid is not None:
        h["mcp-session-id"] = sid
        h["mcp-protocol-version"] = LATEST
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


def req(rid: int | str, method: str, params: JSON | None = None) -> JSON:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


async def initialize(client: httpx2.AsyncClient, url: str) -> str:
    params = {
        "protocolVersion": LATEST,
        "capabilities": CAPS,
        "clientInfo": {"name": "hostile", "version": "1"},
    }
    r = await client.post(url, json=req(1, "initialize", params), headers=hdrs())
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = await client.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=hdrs(sid)
    )
    assert r.status_code == 202
    return sid


def answer_of(response: httpx2.Response) -> JSON:
    """The JSON-RPC response in a JSON or SSE HTTP response."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for block in response.text.split("\n\n"):
            for line in block.split("\n"):
                if line.startswith("data: ") and line[6:]:
                    msg = json.loads(line[6:])
                    if "id" in msg and "method" not in msg:
                        return msg
        raise AssertionError(response.text)
    return response.json()


@contextlib.contextmanager
def traced() -> Iterator[list[int]]:
    """tracemalloc around a block; yields ``[growth]`` (bytes still held at the end,
    after a full collection), filled in on exit."""
    out = [0]
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        yield out
        gc.collect()
        out[0] = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


# -- abandoned reverse calls ------------------------------------------------------------------

IDLE_S = 0.5


def asking_server(limits: Limits | None = None) -> tuple[Server, list[str]]:
    """A server whose tools ask the client; ``outcomes`` records how each call ended."""
    server = Server("asking", limits=limits)
    outcomes: list[str] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Elicits a name (default timeout: Limits.elicitation_timeout_s)."""
        try:
            answer = await ctx.elicit("Name?", FORM)
        except BaseException as exc:
            outcomes.append(type(exc).__name__)
            raise
        outcomes.append("answered")
        return str(answer)

    @server.tool()
    async def sample_briefly(ctx: Context) -> str:
        """Samples with a per-call timeout of 0.4 s."""
        await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            max_tokens=5,
            timeout_s=0.4,
        )
        return "sampled"

    @server.tool()
    async def roots(ctx: Context) -> str:
        """Lists roots (default timeout: Limits.roots_timeout_s)."""
        return str(await ctx.list_roots())

    return server, outcomes


async def _read_until_request(response: httpx2.Response, method: str) -> JSON:
    async for sse in httpx2.EventSource(response):
        if sse.data:
            msg = json.loads(sse.data)
            if msg.get("method") == method:
                return msg
    raise AssertionError(f"the stream ended without {method}")


async def test_clients_that_abandon_an_elicitation_do_not_lock_out_new_sessions() -> None:
    """Three clients disconnect right after receiving ``elicitation/create`` on an
    endpoint with ``max_sessions=3``: once their sessions are idle for the idle
    timeout, a new ``initialize`` succeeds and the three handlers are cancelled (they
    had pinned the sessions for good, so every initialize was 503)."""
    server, outcomes = asking_server()
    async with served(server, max_sessions=3, session_idle_timeout_s=IDLE_S) as (url, ep):
        with traced() as growth:
            for round_ in range(3):
                for _ in range(3):
                    async with httpx2.AsyncClient(timeout=10) as client:
                        sid = await initialize(client, url)
                        with anyio.fail_after(5):
                            async with client.stream(
                                "POST",
                                url,
                                json=req(2, "tools/call", {"name": "ask"}),
                                headers=hdrs(sid),
                            ) as response:
                                await _read_until_request(response, "elicitation/create")
                    # the client and its connection are gone; the handler still waits
                async with httpx2.AsyncClient(timeout=10) as client:
                    with anyio.fail_after(5 * IDLE_S + 5):
                        await anyio.sleep(IDLE_S + 0.2)
                        sid = await initialize(client, url)
                        while outcomes.count("CancelledError") < 3 * (round_ + 1):
                            await anyio.sleep(0.02)
                    r = await client.delete(url, headers=hdrs(sid))
                    assert r.status_code == 204
                assert len(ep.sessions) == 0
        assert outcomes == ["CancelledError"] * 9
        assert growth[0] < 2 << 20, growth[0]


@pytest.mark.parametrize(
    ("tool", "method", "limits", "bound_s"),
    [
        ("ask", "elicitation/create", Limits(elicitation_timeout_s=0.4), 0.4),
        ("sample_briefly", "sampling/createMessage", None, 0.4),
        ("roots", "roots/list", Limits(roots_timeout_s=0.4), 0.4),
    ],
)
async def test_an_unanswered_reverse_call_times_out_with_the_documented_error(
    tool: str, method: str, limits: Limits | None, bound_s: float
) -> None:
    """The client receives the request and never answers: after the bound the client
    is told (``notifications/cancelled``) and the tool answers ``isError`` naming
    ``RequestTimeoutError``; nothing stays pending in the session."""
    server, _ = asking_server(limits)
    async with served(server) as (url, ep), httpx2.AsyncClient(timeout=10) as client:
        sid = await initialize(client, url)
        messages: list[JSON] = []
        with anyio.fail_after(5 * bound_s + 2):
            async with client.stream(
                "POST", url, json=req(2, "tools/call", {"name": tool}), headers=hdrs(sid)
            ) as response:
                async for sse in httpx2.EventSource(response):
                    if sse.data:
                        messages.append(json.loads(sse.data))
        asked = [m for m in messages if m.get("method") == method]
        assert len(asked) == 1
        cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
        assert cancelled[0]["params"]["requestId"] == asked[0]["id"]
        result = messages[-1]["result"]
        assert result["isError"] is True
        assert "no response within" in result["content"][0]["text"]  # the timeout, said
        assert f"{bound_s} s" in result["content"][0]["text"]
        session = next(iter(ep.sessions))
        assert len(session.pending) == 0


async def test_an_unanswered_reverse_call_times_out_on_a_connection_transport() -> None:
    """The same bound on the in-memory (and so stdio) transport."""
    from peer import connect

    server, outcomes = asking_server(Limits(elicitation_timeout_s=0.3))
    never = anyio.Event()

    async def hang(_params: JSON | None) -> JSON:
        await never.wait()
        return {}

    async with connect(server, capabilities=CAPS, on_request={"elicitation/create": hang}) as peer:
        with anyio.fail_after(5 * 0.3 + 2):
            result = await peer.call_tool("ask")
        assert result["isError"] is True
        assert "no response within" in result["content"][0]["text"]  # the timeout, said
        cancelled = await peer.wait_for("notifications/cancelled")
        assert cancelled[0] is not None
        assert "timed out" in cancelled[0]["reason"]
    assert outcomes == ["RequestTimeoutError"]


async def test_an_extension_reverse_call_has_a_default_timeout_too() -> None:
    """``ctx.request_input`` with a method no limit names (an extension's own request)
    waits at most ``Limits.elicitation_timeout_s``, not forever."""
    from peer import connect

    server = Server("extension-asker", limits=Limits(elicitation_timeout_s=0.3))
    outcomes: list[str] = []

    @server.tool()
    async def confirm(ctx: Context) -> str:
        try:
            await ctx.request_input({"ok": {"method": "com.example/confirm", "params": {}}})
        except BaseException as exc:
            outcomes.append(type(exc).__name__)
            raise
        return "confirmed"

    never = anyio.Event()

    async def hang(_params: JSON | None) -> JSON:
        await never.wait()
        return {}

    async with connect(server, capabilities=CAPS, on_request={"com.example/confirm": hang}) as peer:
        with anyio.fail_after(5 * 0.3 + 2):
            result = await peer.call_tool("confirm")
        assert result["isError"] is True
        assert "no response within" in result["content"][0]["text"]  # the timeout, said
    assert outcomes == ["RequestTimeoutError"]


async def test_ending_the_session_ends_a_pending_reverse_call_at_once() -> None:
    """DELETE while ``elicitation/create`` waits (default bound: 600 s): the DELETE is
    answered and the handler ends within seconds, not at the reverse call's timeout."""
    server, outcomes = asking_server()
    async with served(server) as (url, ep), httpx2.AsyncClient(timeout=10) as client:
        sid = await initialize(client, url)
        with anyio.fail_after(5):
            async with client.stream(
                "POST", url, json=req(2, "tools/call", {"name": "ask"}), headers=hdrs(sid)
            ) as response:
                lines = response.aiter_lines()
                async for line in lines:
                    if "elicitation/create" in line:
                        break
                async with httpx2.AsyncClient(timeout=10) as other:
                    r = await other.delete(url, headers=hdrs(sid))
                assert r.status_code == 204
                async for _ in lines:  # the stream ends
                    pass
            while not outcomes:
                await anyio.sleep(0.01)
        assert outcomes == ["CancelledError"]
        assert len(ep.sessions) == 0


# -- slow readers ------------------------------------------------------------------------------

STALL_S = 0.5
CHUNK = "x" * (64 * 1024)


def flooding_server(limits: Limits) -> tuple[Server, anyio.Event, list[str]]:
    server = Server("flood", limits=limits)
    done = anyio.Event()
    log: list[str] = []

    @server.tool()
    async def flood(ctx: Context, count: int) -> str:
        """Sends ``count`` log messages of 64 KiB (-1: until cancelled)."""
        try:
            i = 0
            while count < 0 or i < count:
                await ctx.info(CHUNK)
                i += 1
            log.append("finished")
            return f"sent {i}"
        except BaseException as exc:
            log.append(type(exc).__name__)
            raise
        finally:
            done.set()

    return server, done, log


async def _post_and_never_read(url: str, sid: str, body: JSON) -> anyio.abc.SocketStream:
    """POST ``body`` on a raw connection with a small receive buffer, and never read."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    raw = json.dumps(body).encode()
    stream = await anyio.connect_tcp(host, int(port))
    sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
        f"accept: {BOTH}\r\nmcp-session-id: {sid}\r\nmcp-protocol-version: {LATEST}\r\n"
        f"content-length: {len(raw)}\r\n\r\n"
    ).encode()
    await stream.send(head + raw)
    return stream


async def test_a_client_that_never_reads_its_stream_is_given_up() -> None:
    """A tool sends 12 MiB of notifications to a client that reads nothing: after
    ``stream_send_timeout_s`` the stream is given up and the tool finishes (it waited
    forever on flow control); what the event store keeps stays within its byte
    bounds."""
    limits = Limits(
        stream_send_timeout_s=STALL_S,
        max_event_stream_bytes=1 << 20,
        max_event_store_bytes=2 << 20,
    )
    server, done, log = flooding_server(limits)
    async with served(server) as (url, ep), httpx2.AsyncClient(timeout=10) as client:
        sid = await initialize(client, url)
        with traced() as growth:
            stream = await _post_and_never_read(
                url, sid, req(2, "tools/call", {"name": "flood", "arguments": {"count": 200}})
            )
            try:
                with anyio.fail_after(5 * STALL_S + 10):
                    await done.wait()
            finally:
                await stream.aclose()
            assert ep.store.size <= 2 << 20
        assert log == ["finished"]
        assert growth[0] < 4 << 20, growth[0]


async def test_a_stalled_stream_does_not_hold_up_deleting_its_session() -> None:
    """A tool floods a client that reads nothing, without end; DELETE of the session
    (another connection) is answered and the tool cancelled within the stall bound."""
    server, done, log = flooding_server(Limits(stream_send_timeout_s=STALL_S))
    async with served(server) as (url, ep), httpx2.AsyncClient(timeout=10) as client:
        sid = await initialize(client, url)
        stream = await _post_and_never_read(
            url, sid, req(2, "tools/call", {"name": "flood", "arguments": {"count": -1}})
        )
        try:
            await anyio.sleep(0.3)  # the flood is under way, the reader's buffers fill
            with anyio.fail_after(5 * STALL_S + 5):
                r = await client.delete(url, headers=hdrs(sid))
                assert r.status_code == 204
                await done.wait()
        finally:
            await stream.aclose()
        assert log in (["CancelledError"], ["finished"])
        assert len(ep.sessions) == 0


async def test_large_answers_are_kept_for_resumption_within_the_store_bounds() -> None:
    """20 echoes of 1 MiB in SSE mode (every event stored for resumption) against a
    4 MiB store: 80 echoes of 3.9 MB held about 300 MiB for 300 s before."""
    server = Server(
        "echo", limits=Limits(max_event_stream_bytes=2 << 20, max_event_store_bytes=4 << 20)
    )

    @server.tool()
    def echo(text: str) -> str:
        return text

    payload = "y" * (1 << 20)
    async with (
        served(server, response_mode="sse") as (url, ep),
        httpx2.AsyncClient(timeout=30) as client,
    ):
        sid = await initialize(client, url)
        with traced() as growth:
            for i in range(20):
                r = await client.post(
                    url,
                    json=req(
                        10 + i, "tools/call", {"name": "echo", "arguments": {"text": payload}}
                    ),
                    headers=hdrs(sid),
                )
                assert answer_of(r)["result"]["content"][0]["text"] == payload
            assert ep.store.size <= 4 << 20
        assert growth[0] < 8 << 20, growth[0]


# -- oversized and repeated subscriptions --------------------------------------------------------


def library(limits: Limits | None = None) -> Server:
    server = Server("library", limits=limits)

    @server.resource("file:///readme.md")
    def readme() -> str:
        return "read me"

    @server.resource("item://{id}")
    def item(id: str) -> str:
        return id

    return server


async def test_oversized_subscriptions_are_refused_and_hold_nothing() -> None:
    """20 subscriptions to 3.9 MB URIs: each -32602 naming ``Limits.max_uri_bytes``;
    the session keeps none (60 of them held 230 MiB before)."""
    async with served(library()) as (url, ep), httpx2.AsyncClient(timeout=30) as client:
        sid = await initialize(client, url)
        session = next(iter(ep.sessions))
        with traced() as growth, anyio.fail_after(60):
            for i in range(20):
                uri = f"item://{i}" + "z" * 3_900_000
                r = await client.post(
                    url, json=req(10 + i, "resources/subscribe", {"uri": uri}), headers=hdrs(sid)
                )
                error = answer_of(r)["error"]
                assert error["code"] == -32602
                assert "Limits.max_uri_bytes" in error["message"]
                del uri, r  # the test's own copies of the body are not the server's
            assert session.legacy.subscriptions == set()
        assert growth[0] < 2 << 20, growth[0]


async def test_subscriptions_need_an_existing_resource_repeat_idempotently_and_are_counted() -> (
    None
):
    async with (
        served(library(Limits(max_subscriptions=3))) as (url, ep),
        httpx2.AsyncClient(timeout=10) as client,
    ):
        sid = await initialize(client, url)
        session = next(iter(ep.sessions))

        async def subscribe(rid: int, uri: str) -> JSON:
            r = await client.post(
                url, json=req(rid, "resources/subscribe", {"uri": uri}), headers=hdrs(sid)
            )
            return answer_of(r)

        with anyio.fail_after(30):
            for i in range(60):  # unknown URIs: resource not found, nothing kept
                error = (await subscribe(100 + i, f"nope://{i}"))["error"]
                assert error["code"] == -32002
                assert error["data"] == {"uri": f"nope://{i}"}
            assert session.legacy.subscriptions == set()
            for i in range(50):  # the same URI again and again: one subscription
                assert (await subscribe(200 + i, "file:///readme.md"))["result"] == {}
            assert session.legacy.subscriptions == {"file:///readme.md"}
            assert (await subscribe(300, "item://1"))["result"] == {}
            assert (await subscribe(301, "item://2"))["result"] == {}
            error = (await subscribe(302, "item://3"))["error"]
            assert error["code"] == -32602
            assert "Limits.max_subscriptions" in error["message"]
            assert (await subscribe(303, "item://1"))["result"] == {}  # a repeat at the limit
            assert len(session.legacy.subscriptions) == 3


def _modern_listen(rid: int, uris: list[str]) -> tuple[JSON, dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = req(
        rid,
        "subscriptions/listen",
        {"_meta": meta, "notifications": {"resourceSubscriptions": uris}},
    )
    return body, hdrs(mcp_protocol_version=MODERN, mcp_method="subscriptions/listen")


async def test_listen_filters_are_bounded_and_acknowledge_only_existing_resources() -> None:
    async with (
        served(library(Limits(max_subscriptions=3, max_uri_bytes=64))) as (url, _),
        httpx2.AsyncClient(timeout=10) as client,
    ):
        with anyio.fail_after(10):
            body, h = _modern_listen(1, [f"item://{i}" for i in range(4)])
            error = answer_of(await client.post(url, json=body, headers=h))["error"]
            assert error["code"] == -32602
            assert "Limits.max_subscriptions" in error["message"]
            body, h = _modern_listen(2, ["item://" + "z" * 100])
            error = answer_of(await client.post(url, json=body, headers=h))["error"]
            assert error["code"] == -32602
            assert "Limits.max_uri_bytes" in error["message"]
            body, h = _modern_listen(3, ["file:///readme.md", "nope://x", "file:///readme.md"])
            async with client.stream("POST", url, json=body, headers=h) as response:
                async for sse in httpx2.EventSource(response):
                    if sse.data:
                        ack = json.loads(sse.data)
                        break
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["file:///readme.md"]}


async def test_a_connection_that_ends_fails_a_pending_reverse_call_at_once() -> None:
    """stdio / in-memory: the client's input ends while ``elicitation/create`` waits
    (default bound 600 s): the handler gets ``PeerClosedError`` at once, not after the
    drain period (2 s) nor at its timeout."""
    from peer import connect

    server, outcomes = asking_server()
    asked = anyio.Event()

    async def hang(_params: JSON | None) -> JSON:
        asked.set()
        await anyio.sleep_forever()
        return {}

    with anyio.fail_after(5):
        async with (
            connect(server, capabilities=CAPS, on_request={"elicitation/create": hang}) as peer,
            anyio.create_task_group() as tg,
        ):

            async def call() -> None:
                with contextlib.suppress(PeerClosedError):  # the client's side ends too
                    await peer.call_tool("ask")

            tg.start_soon(call)
            await asked.wait()
            server_conn = peer.server_connection  # type: ignore[attr-defined]
            await peer.connection.stream.aclose()  # the client's end closes
            with anyio.fail_after(1.0):  # well under the 2 s drain, 600 s timeout
                while not outcomes:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
            assert len(server_conn.connection.pending) == 0
    assert outcomes == ["PeerClosedError"]


def pushing_server(limits: Limits) -> Server:
    """A server whose change feed carries large extension notifications to listeners
    (``subscriptions/listen`` filter ``big``; handshake-era sessions via a session
    filter)."""
    server = Server("pushing", limits=limits)
    server.add_listen_filter("big", lambda _ctx, _v: (True, lambda c: c.method == BIG))
    server.add_session_filter(lambda _session, c: c.method == BIG)
    return server


BIG = "notifications/big"


async def _push(server: Server, count: int) -> None:
    from mcpkit.server.hub import Change

    for i in range(count):
        server.hub.publish(Change(BIG, str(i), {"data": CHUNK}))
        await anyio.lowlevel.checkpoint()


async def _raw_request(url: str, head: str, body: bytes = b"") -> anyio.abc.SocketStream:
    """Send one raw HTTP/1.1 request with a small receive buffer; never read."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    stream = await anyio.connect_tcp(host, int(port))
    sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    await stream.send(f"{head}host: {host}:{port}\r\n\r\n".encode() + body)
    return stream


async def test_a_listen_stream_nobody_reads_ends_and_lets_go_of_its_listener() -> None:
    """2026-07-28: a ``subscriptions/listen`` client that never reads while 12 MiB of
    notifications are pushed: after ``stream_send_timeout_s`` the request is cancelled
    (as closing the stream would) and its hub listener detached."""
    server = pushing_server(Limits(stream_send_timeout_s=STALL_S))
    async with served(server) as (url, _):
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = json.dumps(
            req(1, "subscriptions/listen", {"_meta": meta, "notifications": {"big": True}})
        ).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\naccept: {BOTH}\r\n"
            f"mcp-protocol-version: {MODERN}\r\nmcp-method: subscriptions/listen\r\n"
            f"content-length: {len(body)}\r\n"
        )
        with traced() as growth:
            stream = await _raw_request(url, head, body)
            try:
                with anyio.fail_after(5):
                    while len(server.hub) == 0:  # type: ignore[arg-type]
                        await anyio.sleep(0.01)
                await _push(server, 200)
                with anyio.fail_after(5 * STALL_S + 5):
                    while len(server.hub) > 0:  # type: ignore[arg-type]
                        await anyio.sleep(0.02)
            finally:
                await stream.aclose()
        assert growth[0] < 4 << 20, growth[0]


async def test_a_get_stream_nobody_reads_ends_within_the_store_bounds() -> None:
    """Handshake era: the standalone GET stream of a client that never reads while 12 MiB
    of notifications are pushed ends after ``stream_send_timeout_s`` (the session no
    longer counts it as attached), and the event store keeps within its byte bound."""
    limits = Limits(
        stream_send_timeout_s=STALL_S, max_event_stream_bytes=1 << 20, max_event_store_bytes=2 << 20
    )
    server = pushing_server(limits)
    async with served(server) as (url, ep), httpx2.AsyncClient(timeout=10) as client:
        sid = await initialize(client, url)
        session = next(iter(ep.sessions))
        head = (
            f"GET /mcp HTTP/1.1\r\naccept: text/event-stream\r\nmcp-session-id: {sid}\r\n"
            f"mcp-protocol-version: {LATEST}\r\n"
        )
        with traced() as growth:
            stream = await _raw_request(url, head)
            try:
                with anyio.fail_after(5):
                    while session.standalone_sink is None:
                        await anyio.sleep(0.01)
                await _push(server, 200)
                with anyio.fail_after(5 * STALL_S + 5):
                    while session.standalone_sink is not None or session.attached:
                        await anyio.sleep(0.02)
                assert ep.store.size <= 2 << 20
            finally:
                await stream.aclose()
        assert growth[0] < 4 << 20, growth[0]
