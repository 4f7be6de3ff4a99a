"""ServerRegistry with two real servers: one index, a collision, explicit routing, the
agent's list without app-only tools, and list_changed tracking on both protocol eras."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
import pytest
from ui_host_helpers import (
    APP_URI,
    build_app_server,
)

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.ui.host import ServerRegistry, client_extension, wire
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


def second_server() -> Server:
    """Another server with its own ``show_weather`` (a collision) and a unique tool."""
    server = Server("maps")

    @server.tool(meta={"ui": {"resourceUri": "ui://maps/app"}})
    def show_weather(city: str = "Paris") -> str:
        """The maps server's weather."""
        return f"Map of {city}"

    @server.tool
    def route_between(a: str, b: str) -> str:
        """A route."""
        return f"{a} -> {b}"

    return server


@contextlib.asynccontextmanager
async def two_servers(
    mode: str = "adaptive", **options: Any
) -> AsyncIterator[tuple[ServerRegistry, Server, Server]]:
    weather, maps = build_app_server(), second_server()
    async with (
        Client(weather, mode=mode, extensions=[client_extension()]) as a,  # type: ignore[arg-type]
        Client(maps, mode=mode, extensions=[client_extension()]) as b,  # type: ignore[arg-type]
    ):
        registry = ServerRegistry(**options)
        await registry.add("weather", a)
        await registry.add("maps", b)
        yield registry, weather, maps


async def test_one_index_with_colliding_names_prefixed_by_server() -> None:
    async with two_servers() as (registry, _, _):
        names = {t.name: t.server for t in registry.tools()}
        assert names["weather__show_weather"] == "weather"
        assert names["maps__show_weather"] == "maps"
        assert "show_weather" not in names
        assert names["route_between"] == "maps"
        assert names["refresh"] == "weather"
        assert registry.conflicts == []
        result = await registry.call_tool("maps__show_weather", {"city": "Kyiv"})
        assert result["content"][0]["text"] == "Map of Kyiv"
        result = await registry.call_tool("weather__show_weather", {"city": "Kyiv"})
        assert result["content"][0]["text"] == "Sunny in Kyiv"


async def test_explicit_routing_by_server_and_original_name() -> None:
    async with two_servers() as (registry, _, _):
        routed = registry.route("show_weather", server="maps")
        assert (routed.server, routed.original_name) == ("maps", "show_weather")
        result = await registry.call_tool("show_weather", {"city": "Oslo"}, server="weather")
        assert result["content"][0]["text"] == "Sunny in Oslo"
        with pytest.raises(LookupError, match="known: "):
            registry.route("show_weather")
        with pytest.raises(LookupError):
            registry.route("route_between", server="weather")


async def test_the_agent_list_leaves_out_app_only_tools_and_the_agent_cannot_call_them() -> None:
    async with two_servers() as (registry, _, _):
        names = {t["name"] for t in registry.agent_tools()}
        assert "refresh" not in names
        assert {"weather__show_weather", "maps__show_weather", "secret_model_tool"} <= names
        with pytest.raises(JSONRPCError) as caught:
            await registry.call_tool("refresh")
        assert caught.value.code == wire.DENIED


async def test_a_custom_resolver_names_the_collisions() -> None:
    def resolver(tool: str, servers: Sequence[str]) -> Mapping[str, str]:
        return {s: (tool if s == "weather" else f"{tool}@{s}") for s in servers}

    async with two_servers(resolver=resolver) as (registry, _, _):
        assert registry.route("show_weather").server == "weather"
        assert registry.route("show_weather@maps").server == "maps"


async def test_a_resolver_that_clashes_is_left_out_not_guessed() -> None:
    def clash(tool: str, servers: Sequence[str]) -> Mapping[str, str]:
        return {s: "route_between" if s == "weather" else f"x_{tool}" for s in servers}

    async with two_servers(resolver=clash) as (registry, _, _):
        with pytest.raises(LookupError):
            registry.route("route_between")
        assert registry.route("x_show_weather").server == "maps"
        assert len(registry.conflicts) == 2


async def test_open_app_gives_an_apphost_for_the_routed_tool() -> None:
    async with two_servers() as (registry, _, _):
        host = registry.open_app("weather__show_weather")
        assert host.tool_name == "show_weather"
        assert (await host.load()).uri == APP_URI


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_list_changed_reindexes_the_server_on_both_eras(mode: str) -> None:
    async with two_servers(mode) as (registry, _, maps), registry:
        generation = registry.generation
        with anyio.fail_after(10):  # the watchers subscribed
            while registry.watching != {"weather", "maps"}:
                await anyio.sleep(0.01)

        def new_tool() -> str:
            """Added at run time."""
            return "new"

        maps.add_tool(new_tool)
        with anyio.fail_after(10):
            while "new_tool" not in {t.name for t in registry.tools()}:
                await registry.changed(generation)
                generation = registry.generation
        assert registry.route("new_tool").server == "maps"
        maps.remove_tool("route_between")
        with anyio.fail_after(10):
            while "route_between" in {t.name for t in registry.tools()}:
                await registry.changed(generation)
                generation = registry.generation


async def test_a_removed_server_leaves_the_index_and_ends_the_collision() -> None:
    async with two_servers() as (registry, _, _):
        await registry.remove("maps")
        assert registry.route("show_weather").server == "weather"
        with pytest.raises(ValueError, match="already registered"):
            await registry.add("weather", registry.clients["weather"])


def wordy_server(count: int, size: int) -> Server:
    """A server whose tools have long names and descriptions (its own choice)."""
    server = Server("wordy")
    for i in range(count):

        def tool() -> str:
            return "ok"

        server.tool(name=f"t{i}_" + "n" * 100, description=f"{i}" + "d" * size)(tool)
    return server


async def test_the_index_keeps_no_more_than_its_byte_bound_of_a_servers_tools() -> None:
    """Registry rule 5 (issue 25 §3): a server listing 40 MB of definitions is refused
    like an unreadable list; the registry holds none of it."""
    from mcpkit.core.bounded import text_bytes

    async with Client(wordy_server(40, 1_000_000)) as wordy, Client(second_server()) as maps:
        registry = ServerRegistry()
        await registry.add("maps", maps)
        await registry.add("wordy", wordy)
        held = text_bytes(list(registry._by_server.items()))  # pyright: ignore[reportPrivateUsage]
        assert held <= 8 * 1024 * 1024  # HostLimits.max_tool_index_bytes
        assert {t.server for t in registry.tools()} == {"maps"}
