"""Peer-chosen texts never reach a tracer unchecked (issue 25 §3; core tracing rule 9,
server tracing rule 5): a tool or prompt name only once the server found it
registered (``TracedMessage.target``), a declared protocol version only when mcpkit
speaks it."""

from __future__ import annotations

import pytest
from peer import raw
from trace_helpers import Recorder

from mcpkit.core import meta as M
from mcpkit.core.versions import LATEST_LEGACY_VERSION, MODERN_VERSION
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

LONG = "n" * 1_000_000


def build() -> tuple[Server, Recorder]:
    server = Server("names")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.prompt()
    async def review(code: str) -> str:
        return f"review {code}"

    recorder = Recorder()
    server.set_tracer(recorder)
    return server, recorder


def modern(params: dict[str, object], version: str = MODERN_VERSION) -> dict[str, object]:
    meta = {
        M.PROTOCOL_VERSION: version,
        M.CLIENT_INFO: {"name": "t", "version": "1"},
        M.CLIENT_CAPABILITIES: {},
    }
    return {**params, "_meta": meta}


async def test_a_registered_name_is_the_target_an_unknown_one_never() -> None:
    server, recorder = build()
    async with raw(server) as wire:
        await wire.call(1, "tools/call", modern({"name": "echo", "arguments": {"text": "x"}}))
        await wire.call(2, "tools/call", modern({"name": LONG, "arguments": {}}))
        await wire.call(3, "prompts/get", modern({"name": "review", "arguments": {"code": "c"}}))
        await wire.call(4, "prompts/get", modern({"name": LONG}))
    calls = recorder.find("server", "request", "tools/call")
    prompts = recorder.find("server", "request", "prompts/get")
    assert [m.target for m in calls] == ["echo", None]
    assert [m.target for m in prompts] == ["review", None]
    assert calls[1].error is not None  # the unknown name was refused


async def test_a_mounted_servers_tool_is_named_as_the_parent_lists_it() -> None:
    parent, recorder = build()
    child = Server("child")

    @child.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    parent.mount(child, "math")
    async with raw(parent) as wire:
        await wire.initialize(LATEST_LEGACY_VERSION)
        await wire.call(1, "tools/call", {"name": "math_add", "arguments": {"a": 1, "b": 2}})
        await wire.call(2, "tools/call", {"name": "math_" + LONG, "arguments": {}})
    calls = recorder.find("server", "request", "tools/call")
    assert [m.target for m in calls] == ["math_add", None]


async def test_a_declared_version_we_do_not_speak_is_not_reported() -> None:
    server, recorder = build()
    bogus = "9" * 1_000_000
    async with raw(server) as wire:
        await wire.call(1, "tools/list", modern({}, bogus))
        await wire.send(
            {"jsonrpc": "2.0", "method": "notifications/x", "params": modern({}, bogus)}
        )
        await wire.call(2, "tools/list", modern({}))
    lists = recorder.find("server", "request", "tools/list")
    assert [m.protocol_version for m in lists] == [None, MODERN_VERSION]
    notes = recorder.find("server", "notification", "notifications/x")
    assert [m.protocol_version for m in notes] == [None]


async def test_a_proxy_names_only_what_its_upstream_served() -> None:
    """Proxy calls rule 7: the upstream's result shows the name is one it serves."""
    from mcpkit.proxy import proxy

    upstream, _ = build()
    front = proxy(upstream, mode="legacy")
    recorder = Recorder()
    front.set_tracer(recorder)
    async with raw(front) as wire:
        await wire.initialize(LATEST_LEGACY_VERSION)
        await wire.call(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        await wire.call(2, "tools/call", {"name": LONG, "arguments": {}})
    calls = recorder.find("server", "request", "tools/call")
    assert [m.target for m in calls] == ["echo", None]


async def test_a_proxied_name_the_upstream_refuses_with_a_tool_error_is_never_the_target() -> None:
    """Proxy calls rule 7: the official Python SDK answers an unknown tool with a result
    (``isError: true``, "Unknown tool: <name>"), not an error; before, the proxy took
    that result for "served" and gave the tracer every name a caller chose."""
    from mcpkit.proxy import proxy
    from mcpkit.server import Context

    upstream = Server("sdk-like")

    @upstream.tool()
    async def echo(text: str) -> str:
        return text

    async def call_tool(ctx: Context) -> dict[str, object]:
        name = ctx.params.get("name")
        if name == "echo":
            return {"content": [{"type": "text", "text": "x"}]}
        return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True}

    upstream.add_method("tools/call", call_tool)
    front = proxy(upstream, mode="legacy")
    recorder = Recorder()
    front.set_tracer(recorder)
    async with raw(front) as wire:
        await wire.initialize(LATEST_LEGACY_VERSION)
        await wire.call(1, "tools/list", {})
        await wire.call(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        await wire.call(3, "tools/call", {"name": "n" * 500, "arguments": {}})
    calls = recorder.find("server", "request", "tools/call")
    assert [m.target for m in calls] == ["echo", None]
