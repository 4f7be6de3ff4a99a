"""The extension model (``Extension``, ``Stability``, ``ExtensionProvider``) and the four
extension surfaces of a server: method namespace, capability entry, notifications, and
``_meta`` fields through receive- and send-side middleware."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import MappingProxyType
from typing import Any

import pytest
from peer import connect

from mcpkit.client import Client
from mcpkit.core import Extension, ExtensionProvider, JSONRPCError, Stability
from mcpkit.core.extensions import as_extension, extension_from_entry
from mcpkit.core.jsonrpc import INVALID_PARAMS
from mcpkit.core.versions import MODERN_VERSIONS
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


# -- the model ---------------------------------------------------------------------------------


def test_extension_carries_id_spec_version_stability_and_config() -> None:
    ext = Extension(
        "com.example/search",
        spec_version="2026-01-01",
        stability=Stability.EXPERIMENTAL,
        config={"maxResults": 10},
    )
    assert ext.id == "com.example/search"
    assert ext.spec_version == "2026-01-01"
    assert ext.stability is Stability.EXPERIMENTAL
    assert isinstance(ext.config, MappingProxyType)
    assert ext.settings() == {"maxResults": 10}
    settings = ext.settings()
    settings["maxResults"] = 99
    assert ext.config["maxResults"] == 10  # a copy; the extension is immutable
    with pytest.raises(AttributeError):
        ext.id = "other/x"  # type: ignore[misc]


def test_stability_values_are_the_three_documented_ones_and_unspecified() -> None:
    assert [s.value for s in Stability] == ["experimental", "stable", "deprecated", "unspecified"]


@pytest.mark.parametrize(
    "bad",
    ["search", "/search", "com.example/", "com..example/x", "1com/x", "com.example/a//b", "a/b/"],
)
def test_extension_ids_need_a_reverse_dns_prefix(bad: str) -> None:
    with pytest.raises(ValueError, match="SEP-2133"):
        Extension(bad)


@pytest.mark.parametrize("good", ["io.modelcontextprotocol/auth/dpop", "com.example/a/b-c.d"])
def test_extension_names_may_have_slash_separated_segments(good: str) -> None:
    """The conformance suite and the TypeScript SDK name SEP-1932/1933 ``.../auth/dpop`` and
    ``.../auth/wif``: a client reading a server that advertises one must not fail."""
    assert Extension(good).id == good
    read = extension_from_entry(good, {}, {"io.mcpkit/extensions": {good: {"specVersion": "1"}}})
    assert (read.id, read.spec_version) == (good, "1")


def test_anything_with_an_extension_method_is_a_provider() -> None:
    class Search:
        def extension(self) -> Extension:
            return Extension("com.example/search", config={"v": 1})

    class Broken:
        def extension(self) -> Any:
            return {"id": "com.example/x"}

    assert isinstance(Search(), ExtensionProvider)
    assert as_extension(Search()).id == "com.example/search"
    with pytest.raises(TypeError):
        as_extension(Broken())


# -- advertising -------------------------------------------------------------------------------


class Tracing:
    """A provider: describes itself and installs a middleware when registered."""

    def extension(self) -> Extension:
        return Extension("com.example/tracing", "2026-01-01", Stability.STABLE, {"sampled": True})


async def test_extensions_registered_at_construction_and_at_runtime_are_advertised() -> None:
    server = Server("ext", extensions=[Extension("com.example/a"), Tracing()])
    async with connect(server) as peer:
        first = peer.init_result["capabilities"]["extensions"]
        first_meta = peer.init_result["_meta"]
    server.add_extension(Extension("com.example/b", config={"level": 2}))
    async with connect(server) as peer:
        second = peer.init_result["capabilities"]["extensions"]
        second_meta = peer.init_result["_meta"]
    server.remove_extension("com.example/a")
    server.remove_extension("com.example/b")
    server.remove_extension("com.example/tracing")
    async with connect(server) as peer:
        third = peer.init_result
    # each entry is exactly its settings object (SEP-2133); ours travel beside it
    assert first == {"com.example/a": {}, "com.example/tracing": {"sampled": True}}
    stable = {"stability": "stable"}
    assert first_meta == {
        "io.mcpkit/extensions": {
            "com.example/a": stable,
            "com.example/tracing": {"specVersion": "2026-01-01", "stability": "stable"},
        }
    }
    assert second == {**first, "com.example/b": {"level": 2}}
    assert second_meta["io.mcpkit/extensions"]["com.example/b"] == stable
    assert "extensions" not in third["capabilities"]
    assert "_meta" not in third


async def test_client_extensions_are_visible_to_handlers_and_unknown_ones_ignored() -> None:
    server = Server("ext")

    @server.tool()
    def check(ctx: Context) -> JSON:
        return {
            "search": ctx.client_supports_extension("com.example/search"),
            "other": ctx.client_supports_extension("com.example/other"),
        }

    capabilities = {
        "extensions": {
            "com.example/search": {"v": 1},
            "org.unknown/never-heard-of-it": {"anything": [1, 2]},
            "io.weird/flag": True,
        }
    }
    async with connect(server, capabilities=capabilities) as peer:
        result = await peer.call_tool("check")
    assert result["structuredContent"] == {"search": True, "other": False}


# -- the four surfaces -----------------------------------------------------------------------------


async def test_method_namespace_surface_serves_extension_methods() -> None:
    server = Server("ext", extensions=[Extension("com.example/search")])

    async def search(ctx: Context) -> JSON:
        query = ctx.params.get("query")
        if not isinstance(query, str):
            raise JSONRPCError(INVALID_PARAMS, "com.example/search: params.query must be a string")
        return {"hits": [query.upper()]}

    server.add_method("com.example/search", search)
    async with connect(server) as peer:
        hits = await peer.request("com.example/search", {"query": "mcp"})
        with pytest.raises(JSONRPCError) as info:
            await peer.request("com.example/search", {})
    assert hits == {"hits": ["MCP"]}
    assert info.value.code == INVALID_PARAMS


async def test_notification_surface_reaches_the_client_and_client_notifications_the_server() -> (
    None
):
    server = Server("ext")
    heard: list[JSON | None] = []

    async def on_ping(params: JSON | None) -> None:
        heard.append(params)

    server.add_notification_handler("notifications/com.example/ping", on_ping)

    @server.tool()
    async def emit(ctx: Context) -> str:
        if ctx.client_supports_extension("com.example/events"):
            await ctx.notify("notifications/com.example/event", {"n": 1})
        return "ok"

    async with connect(server, capabilities={"extensions": {"com.example/events": {}}}) as peer:
        await peer.notify("notifications/com.example/ping", {"from": "client"})
        await peer.call_tool("emit")
        events = peer.received("notifications/com.example/event")
        await peer.request("ping")  # the notification above was handled before this
    async with connect(server) as plain:
        await plain.call_tool("emit")
        plain_events = plain.received("notifications/com.example/event")
    assert events == [{"n": 1}]
    assert plain_events == []  # gated on the peer declaring the extension
    assert heard == [{"from": "client"}]


async def test_middleware_runs_in_order_first_registered_outermost_on_both_sides() -> None:
    server = Server("ext")
    trace: list[str] = []

    def receive(name: str) -> Callable[..., Awaitable[JSON]]:
        async def middleware(ctx: Context, call_next: Callable[[Context], Awaitable[JSON]]) -> JSON:
            trace.append(f"{name}>{ctx.method}")
            result = await call_next(ctx)
            trace.append(f"{name}<{ctx.method}")
            return result

        return middleware

    def send(name: str) -> Callable[..., Awaitable[None]]:
        async def middleware(message: JSON, send_next: Callable[[JSON], Awaitable[None]]) -> None:
            trace.append(f"{name} sends {message.get('id', message.get('method'))}")
            await send_next(message)

        return middleware

    server.add_middleware(receive("outer"))
    server.add_middleware(receive("inner"))
    server.add_send_middleware(send("first"))
    server.add_send_middleware(send("second"))

    @server.tool()
    def hello() -> str:
        trace.append("handler")
        return "hi"

    async with connect(server) as peer:
        trace.clear()
        await peer.request("tools/call", {"name": "hello", "arguments": {}})
    assert trace == [
        "outer>tools/call",
        "inner>tools/call",
        "handler",
        "inner<tools/call",
        "outer<tools/call",
        "first sends 2",
        "second sends 2",
    ]


async def test_meta_surface_middleware_reads_and_adds_meta_fields() -> None:
    server = Server("ext", extensions=[Extension("com.example/trace")])

    async def trace_meta(ctx: Context, call_next: Callable[[Context], Awaitable[JSON]]) -> JSON:
        trace_id = ctx.meta.get("com.example/traceId")
        ctx.state["trace"] = trace_id
        result = await call_next(ctx)
        if trace_id is not None:
            result["_meta"] = {**result.get("_meta", {}), "com.example/traceId": trace_id}
        return result

    async def stamp(message: JSON, send_next: Callable[[JSON], Awaitable[None]]) -> None:
        if message.get("method", "").startswith("notifications/"):
            params = dict(message.get("params") or {})
            params["_meta"] = {**params.get("_meta", {}), "com.example/server": "s1"}
            message = {**message, "params": params}
        await send_next(message)

    server.add_middleware(trace_meta)
    server.add_send_middleware(stamp)

    @server.tool()
    async def traced(ctx: Context) -> str:
        await ctx.info("working")
        return f"trace={ctx.state['trace']}"

    async with connect(server) as peer:
        result = await peer.request(
            "tools/call",
            {"name": "traced", "arguments": {}, "_meta": {"com.example/traceId": "t-1"}},
        )
        logged = peer.received("notifications/message")
    assert result["_meta"] == {"com.example/traceId": "t-1"}
    assert result["content"][0]["text"] == "trace=t-1"
    assert logged == [{"level": "info", "data": "working", "_meta": {"com.example/server": "s1"}}]


async def test_capability_surface_contributes_era_specific_entries() -> None:
    server = Server("ext")
    server.add_capability("experimental", lambda era: {"com.example/era": era})
    server.add_capability("com.example/never", lambda era: None)
    async with connect(server) as peer:
        caps = peer.init_result["capabilities"]
    assert caps["experimental"] == {"com.example/era": "legacy"}
    assert "com.example/never" not in caps


async def test_send_middleware_added_while_serving_applies_to_the_next_message() -> None:
    server = Server("ext")
    seen: list[Any] = []

    async def record(message: JSON, send_next: Callable[[JSON], Awaitable[None]]) -> None:
        seen.append(message.get("id"))
        await send_next(message)

    @server.tool()
    def hello() -> str:
        return "hi"

    async with connect(server) as peer:
        await peer.request("tools/call", {"name": "hello", "arguments": {}})
        server.add_send_middleware(record)
        await peer.request("tools/call", {"name": "hello", "arguments": {}})
    assert seen == [3]


# -- version and stability in-band; eras (issue 11 §9) ------------------------------------------


def _modern_caps(version: str = "2026-07-28") -> JSON:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_client_reads_spec_version_and_stability_back_on_both_eras(era: str) -> None:
    own_meta = {"com.example/hint": 1}
    server = Server(
        "ext",
        extensions=[
            Extension("com.example/search", "2026-01-15", Stability.EXPERIMENTAL, {"max": 5}),
            Extension(
                "com.example/old", stability=Stability.DEPRECATED, config={"_meta": own_meta}
            ),
        ],
    )
    async with Client(server, mode=era) as client:
        assert client.era == era
        search = client.server_extension("com.example/search")
        old = client.server_extension("com.example/old")
        wire = client.server_capabilities["extensions"]
        result_meta = client.server.raw["_meta"]
        assert client.server_extension("com.example/absent") is None
    assert search == Extension(
        "com.example/search", "2026-01-15", Stability.EXPERIMENTAL, {"max": 5}
    )
    assert old is not None
    assert old.stability is Stability.DEPRECATED
    assert old.spec_version == ""
    assert dict(old.config) == {"_meta": own_meta}  # the extension's own _meta survives
    # SEP-2133: the settings object is the extension's, untouched; ours is the result's
    assert wire == {"com.example/search": {"max": 5}, "com.example/old": {"_meta": own_meta}}
    assert result_meta["io.mcpkit/extensions"] == {
        "com.example/search": {"specVersion": "2026-01-15", "stability": "experimental"},
        "com.example/old": {"stability": "deprecated"},
    }
    assert not [k for k in result_meta if k.startswith("io.modelcontextprotocol/extension")]


def test_entries_from_servers_that_send_no_metadata_read_as_unspecified() -> None:
    plain = extension_from_entry("org.other/x", {"level": 2})
    assert plain.spec_version == ""
    assert plain.stability is Stability.UNSPECIFIED
    assert dict(plain.config) == {"level": 2}
    odd_meta = {"io.mcpkit/extensions": {"org.other/y": {"specVersion": 3, "stability": "beta"}}}
    odd = extension_from_entry("org.other/y", {}, odd_meta)
    assert odd.spec_version == ""
    assert odd.stability is Stability.UNSPECIFIED
    assert dict(odd.config) == {}
    # a key inside the entry is the extension's own setting, never read as ours
    inside = {"_meta": {"io.mcpkit/extensions": {"org.other/w": {"specVersion": "9"}}}}
    assert extension_from_entry("org.other/w", inside).spec_version == ""
    assert extension_from_entry("org.other/w", inside, ["not", "a", "map"]).spec_version == ""
    assert dict(extension_from_entry("org.other/z", True).config) == {}
    unsaid = Extension("com.example/u", stability=Stability.UNSPECIFIED)
    assert unsaid.about() == {}  # nothing to say: no entry in the map at all


async def test_an_extension_is_advertised_only_on_the_protocol_versions_it_serves() -> None:
    server = Server(
        "ext",
        extensions=[
            Extension("com.example/new", protocol_versions=MODERN_VERSIONS),
            Extension("com.example/old", protocol_versions=["2025-11-25"]),
        ],
    )
    for version, expected in (
        ("2025-11-25", {"com.example/old"}),
        ("2025-06-18", set()),
    ):
        async with connect(server, version=version) as peer:
            caps = peer.init_result["capabilities"]
        assert set(caps.get("extensions", {})) == expected, version
        if not expected:
            assert "extensions" not in caps  # never an empty map
    async with connect(server, initialize=False) as peer:
        found = await peer.request("server/discover", {"_meta": _modern_caps()})
    assert set(found["capabilities"]["extensions"]) == {"com.example/new"}
    # the version map follows the same selection, beside the server's own _meta keys
    assert found["_meta"]["io.mcpkit/extensions"] == {"com.example/new": {"stability": "stable"}}
    assert "io.modelcontextprotocol/serverInfo" in found["_meta"]
    with pytest.raises(TypeError):
        Extension("com.example/bad", protocol_versions="2026-07-28")  # type: ignore[arg-type]


async def test_an_extensions_meta_source_adds_only_the_ids_the_answer_advertises() -> None:
    # A proxy mirrors an upstream's entries through add_capability; their version and
    # stability come from a source, kept only for ids the answer advertises.
    server = Server("ext")
    server.add_capability("extensions", lambda era: {"com.example/a": {}, "com.example/b": {}})
    seen_eras: list[str] = []

    def source(era: str) -> JSON:
        seen_eras.append(era)
        return {
            "com.example/a": {"specVersion": "2", "stability": "experimental"},
            "com.example/b": {},
            "com.example/not-advertised": {"stability": "stable"},
        }

    server.add_extensions_meta_source(source)
    async with connect(server) as peer:
        legacy = peer.init_result["_meta"]["io.mcpkit/extensions"]
    async with connect(server, initialize=False) as peer:
        found = await peer.request("server/discover", {"_meta": _modern_caps()})
    modern = found["_meta"]["io.mcpkit/extensions"]
    assert legacy == modern
    assert legacy == {"com.example/a": {"specVersion": "2", "stability": "experimental"}}
    assert seen_eras == ["legacy", "modern"]
