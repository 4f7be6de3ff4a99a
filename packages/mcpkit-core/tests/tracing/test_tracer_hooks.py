"""A recording :class:`~mcpkit.core.tracing.Tracer` on both ends sees every message
handled and sent, with the facts an adapter needs (:mod:`mcpkit.core.tracing` rules 4,
5, 7; :mod:`mcpkit.server.tracing`; :mod:`mcpkit.client.tracing`)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from test_propagation import connect, text
from trace_helpers import CALLER, TP, TRACE_ID, Recorder, build_server, serve_http

from mcpkit.client import Client, StdioTransport
from mcpkit.core import tracing
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
HERE = Path(__file__).parent


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_tool_call_is_one_send_and_one_handle_with_the_same_facts(mode: str) -> None:
    server = build_server()
    on_server, on_client = Recorder(), Recorder()
    server.set_tracer(on_server)
    async with connect("memory", mode, server, tracer=on_client) as client:
        with tracing.use(CALLER):
            seen = json.loads(text(await client.call_tool("whoami", {})))
    sent = on_client.one("client", "request", "tools/call")
    handled = on_server.one("server", "request", "tools/call")
    # the client's span went on the wire and is the server's parent; the handler runs in
    # the server's span
    assert sent.trace_context == CALLER
    assert sent.span_context is not None
    assert sent.meta["traceparent"] == sent.span_context.traceparent
    assert handled.trace_context == sent.span_context
    assert handled.span_context is not None
    assert seen == {
        "inbound": sent.span_context.traceparent,
        "current": handled.span_context.traceparent,
    }
    assert handled.span_context.trace_id == TRACE_ID
    for message in (sent, handled):
        assert message.request_id == sent.request_id
        assert type(message.request_id) is int
        assert message.era == mode
        assert message.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert message.transport["name"] == "memory"
        assert message.params is not None
        assert message.params["name"] == "whoami"
        assert message.result is not None
        assert message.result["content"]
        assert message.error is None
        assert message.exception is None
        assert not message.tool_error
    assert handled.meta["traceparent"] == sent.span_context.traceparent
    assert on_server.entered[id(handled)] == (None, sent.span_context)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_outcomes_error_code_tool_error_and_unknown_method(mode: str) -> None:
    server = build_server()
    on_server, on_client = Recorder(), Recorder()
    server.set_tracer(on_server)
    async with connect("memory", mode, server, tracer=on_client) as client:
        with pytest.raises(JSONRPCError):
            await client.session.request("tools/call", {"name": "refuse", "arguments": {}})
        assert (await client.call_tool("broken", {})).is_error
        with pytest.raises(JSONRPCError):
            await client.session.request("no/such", {})
    refused, broken = on_server.find("server", "request", "tools/call")
    assert refused.error_code == -32602
    assert refused.error is not None
    assert refused.error["message"] == "refused on purpose"
    assert refused.result is None
    assert broken.tool_error
    assert broken.error is None
    assert on_server.one("server", "request", "no/such").error_code == -32601
    sent_refused, sent_broken = on_client.find("client", "request", "tools/call")
    assert sent_refused.error_code == -32602
    assert sent_broken.tool_error
    assert on_client.one("client", "request", "no/such").error_code == -32601


async def test_notifications_both_ways_and_the_handshake() -> None:
    server = build_server()
    on_server, on_client = Recorder(), Recorder()
    server.set_tracer(on_server)

    async def on_progress(params: JSON) -> None:
        pass

    async with connect("memory", "legacy", server, tracer=on_client, log_level="info") as client:
        await client.call_tool("chatty", {}, on_progress=on_progress)
    # the handshake: initialize and notifications/initialized, on both sides
    init = on_server.one("server", "request", "initialize")
    assert init.protocol_version == "2025-11-25"
    assert init.result is not None
    assert init.result["protocolVersion"] == "2025-11-25"
    on_client.one("client", "request", "initialize")
    on_client.one("client", "notification", "notifications/initialized")
    initialized = on_server.one("server", "notification", "notifications/initialized")
    assert initialized.request_id is None
    assert initialized.era == "legacy"
    assert initialized.trace_context is not None  # the client's span for it
    # progress and log: sent in the tool's span, handled by the client under the span
    # the server's tracer injected
    call = on_server.one("server", "request", "tools/call")
    for method in ("notifications/progress", "notifications/message"):
        sent = on_server.one("server", "notification", method)
        received = on_client.one("client", "notification", method)
        assert sent.trace_context == call.span_context
        assert received.trace_context == sent.span_context
        assert received.era == "legacy"
        assert sent.session_id is None
        assert sent.transport["name"] == "memory"


async def test_elicitation_is_a_server_send_and_a_client_handle() -> None:
    server = build_server()
    on_server, on_client = Recorder(), Recorder()
    server.set_tracer(on_server)

    async def elicit(params: Any) -> JSON:
        return {"action": "accept", "content": {}}

    async with connect("memory", "legacy", server, tracer=on_client, elicitation=elicit) as client:
        assert text(await client.call_tool("ask", {})) == "accept"
    call = on_server.one("server", "request", "tools/call")
    sent = on_server.one("server", "request", "elicitation/create")
    handled = on_client.one("client", "request", "elicitation/create")
    assert sent.trace_context == call.span_context
    assert handled.trace_context == sent.span_context
    assert sent.result == {"action": "accept", "content": {}}
    assert handled.result == {"action": "accept", "content": {}}
    assert type(handled.request_id) is int


async def test_mrtr_rounds_link_to_the_first_round() -> None:
    """Rule 7: each retry is a new request; every later round links to round one."""
    server = Server("mrtr")
    recorder = Recorder()
    server.set_tracer(recorder)

    @server.tool()
    async def two_questions(ctx: Context) -> str:
        first = await ctx.elicit("first?", {"type": "object", "properties": {}})
        second = await ctx.elicit("second?", {"type": "object", "properties": {}})
        return f"{first['action']} {second['action']}"

    async def elicit(params: Any) -> JSON:
        return {"action": "accept", "content": {}}

    async with connect("memory", "modern", server, elicitation=elicit) as client:
        with tracing.use(CALLER):
            assert text(await client.call_tool("two_questions", {})) == "accept accept"
    rounds = recorder.find("server", "request", "tools/call")
    assert len(rounds) == 3
    assert len({r.request_id for r in rounds}) == 3
    first = rounds[0]
    assert first.link is None
    assert first.result is not None
    assert first.result["resultType"] == "input_required"
    for later in rounds[1:]:
        # known before the tracer's span starts, so it can be a link at creation
        assert recorder.entered[id(later)][0] == first.span_context
        assert later.trace_context == CALLER
    assert rounds[2].result is not None
    assert rounds[2].result["resultType"] == "complete"


async def test_a_traced_retry_opens_its_request_state_once() -> None:
    """Rule 7 and issue 27: the first round's context (the link) and the answers come
    from one opening of a retry's requestState, made before the tracer is entered."""
    server = Server("mrtr")
    recorder = Recorder()
    server.set_tracer(recorder)
    opened: list[str] = []
    real_open = server.sealer.open

    def counting_open(token: Any, **binding: Any) -> JSON:
        opened.append(binding["method"])
        return real_open(token, **binding)

    server.sealer.open = counting_open

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("sure?", {"type": "object", "properties": {}})
        return str(answer["action"])

    async def decline(params: Any) -> JSON:
        return {"action": "decline"}

    async with connect("memory", "modern", server, elicitation=decline) as client:
        with tracing.use(CALLER):
            result = await client.call_tool("confirm", {})
    assert text(result) == "decline"
    first, retry = recorder.find("server", "request", "tools/call")
    assert first.span_context is not None
    assert retry.link == first.span_context
    assert opened == ["tools/call"]


async def test_mrtr_without_a_tracer_seals_the_callers_context() -> None:
    """Round one untraced: the state carries the context the request carried; a tracer
    installed before the retry links to it."""
    server = Server("mrtr")

    @server.tool()
    async def question(ctx: Context) -> str:
        return str((await ctx.elicit("q?", {"type": "object", "properties": {}}))["action"])

    async def elicit(params: Any) -> JSON:
        raise AssertionError("answered by the test itself")

    async with connect("memory", "modern", server, elicitation=elicit) as client:
        with tracing.use(CALLER):
            first = await client.session.request(
                "tools/call", {"name": "question", "arguments": {}}
            )
        recorder = Recorder()
        server.set_tracer(recorder)
        retry = {
            "name": "question",
            "arguments": {},
            "requestState": first["requestState"],
            "inputResponses": {k: {"action": "decline"} for k in first["inputRequests"]},
        }
        done = await client.session.request("tools/call", retry)
    assert done["content"][0]["text"] == "decline"
    (later,) = recorder.find("server", "request", "tools/call")
    assert later.link == CALLER
    assert later.trace_context is None  # the retry itself carried none


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_http_facts_session_id_scope_and_notifications(mode: str) -> None:
    server = build_server()
    on_server, on_client = Recorder(), Recorder()
    server.set_tracer(on_server)
    async with (
        serve_http(server) as url,
        Client(url, mode=mode, tracer=on_client, timeout_s=30) as client,
    ):  # type: ignore[arg-type]
        with tracing.use(CALLER):
            await client.call_tool("whoami", {})
        session_id = getattr(client.session.stream, "session_id", None)
    handled = on_server.one("server", "request", "tools/call")
    sent = on_client.one("client", "request", "tools/call")
    assert handled.transport["name"] == "streamable-http"
    assert handled.transport["scope"]["client"][0] == "127.0.0.1"
    assert sent.transport == {"name": "streamable-http", "url": url}
    assert handled.trace_context == sent.span_context
    if mode == "legacy":
        assert isinstance(session_id, str)
        assert handled.session_id == sent.session_id == session_id
        initialized = on_server.one("server", "notification", "notifications/initialized")
        assert initialized.session_id == session_id
    else:
        assert handled.session_id is None


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_stdio_server_tracer_sees_the_stdio_transport(mode: str) -> None:
    transport = StdioTransport(
        sys.executable, [str(HERE / "trace_helpers.py"), "--record"], stderr="capture"
    )
    async with Client(transport, mode=mode, timeout_s=30) as client:  # type: ignore[arg-type]
        with tracing.use(CALLER):
            seen = json.loads(text(await client.call_tool("whoami", {})))
    lines = [
        json.loads(line) for line in transport.stderr_text.splitlines() if line.startswith("{")
    ]
    (call,) = [m for m in lines if m["method"] == "tools/call"]
    assert call == {
        "side": "server",
        "kind": "request",
        "method": "tools/call",
        "transport": "stdio",
        "parent": TP,
        "span": seen["current"],
        "meta": TP,
    }
    assert seen["inbound"] == TP


async def test_set_tracer_on_a_live_client_and_removing_it() -> None:
    recorder = Recorder()
    async with connect("memory", "legacy") as client:
        await client.call_tool("whoami", {})
        client.set_tracer(recorder)
        await client.call_tool("whoami", {})
        client.set_tracer(None)
        await client.call_tool("whoami", {})
    assert len(recorder.find("client", "request", "tools/call")) == 1


class Faulty:
    """A tracer whose every hook fails in a different place."""

    def __init__(self) -> None:
        self.calls = 0

    def handle(self, message: Any) -> Any:
        self.calls += 1
        raise RuntimeError("handle is broken")

    @contextlib.contextmanager
    def send(self, message: Any) -> Generator[None]:
        self.calls += 1
        yield
        raise RuntimeError("send is broken after the work")


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_failing_tracer_never_fails_a_message(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Rule 8: logged, and the message is handled or sent untraced."""
    server = build_server()
    faulty = Faulty()
    server.set_tracer(faulty)
    async with connect("memory", mode, server, tracer=faulty) as client:
        with tracing.use(CALLER):
            seen = json.loads(text(await client.call_tool("whoami", {})))
    assert seen == {"inbound": TP, "current": TP}
    assert faulty.calls >= 4
    assert "the tracer failed" in caplog.text
