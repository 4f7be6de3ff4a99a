"""``Server.mount`` (:mod:`mcpkit.server.mount`): prefixed names, live view, delegation
with the child's own context behaviour, collisions, completions, change propagation and
capabilities, on both eras, driven by mcpkit's client in memory (issue 14)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.server import Context, Server, ToolError

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
ERAS = ["legacy", "modern"]


def weather() -> Server:
    child = Server("weather", page_size=1)

    @child.tool()
    def forecast(city: str) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}"

    @child.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "half")
        await ctx.info(f"served by {ctx.server.info['name']}")
        answer = await ctx.elicit(
            "Units?", {"type": "object", "properties": {"u": {"type": "string"}}}
        )
        await ctx.report_progress(2, 2)
        return f"{answer['action']} {answer.get('content')}"

    @child.tool()
    def broken() -> str:
        raise ToolError("the child's own failure")

    @child.tool()
    def refuses() -> str:
        raise JSONRPCError(-32099, "child protocol error", {"why": "test"})

    @child.prompt()
    def report(city: str) -> str:
        return f"Report on {city}"

    @child.resource("weather://stations")
    def stations() -> str:
        return "A,B"

    @child.resource("weather://city/{name}")
    def city(name: str) -> str:
        return f"city {name}"

    @child.completion(prompt="report")
    def complete_city(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
        return [c for c in ("Paris", "Perth", "Oslo") if c.startswith(value)]

    @child.completion(resource="weather://city/{name}")
    def complete_name(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
        return [f"{argument}:{value}"]

    return child


def parent_with(child: Server, namespace: str | None = "weather") -> Server:
    parent = Server("parent")

    @parent.tool()
    def hello() -> str:
        return "hello from parent"

    parent.mount(child, namespace=namespace)
    return parent


async def units(_params: Any) -> JSON:
    return {"action": "accept", "content": {"u": "metric"}}


@pytest.mark.parametrize("era", ERAS)
async def test_names_are_prefixed_uris_kept_and_calls_delegated(era: str) -> None:
    parent = parent_with(weather())
    async with Client(parent, mode=era) as client:
        tools = [t.name for t in await client.list_tools()]
        prompts = [p.name for p in await client.list_prompts()]
        resources = [r.uri for r in await client.list_resources()]
        templates = [t.uri_template for t in await client.list_resource_templates()]
        called = await client.call_tool("weather_forecast", {"city": "Oslo"})
        got = await client.get_prompt("weather_report", {"city": "Paris"})
        read = await client.read_resource("weather://stations")
        matched = await client.read_resource("weather://city/rome")
        own = await client.call_tool("hello")
    assert tools == [
        "hello",
        "weather_forecast",
        "weather_slow",
        "weather_broken",
        "weather_refuses",
    ]
    assert prompts == ["weather_report"]
    assert resources == ["weather://stations"]
    assert templates == ["weather://city/{name}"]
    assert called.content[0].text == "sunny in Oslo"  # type: ignore[union-attr]
    assert got.messages[0].content.text == "Report on Paris"  # type: ignore[union-attr]
    assert read.contents[0].text == "A,B"  # type: ignore[union-attr]
    assert matched.contents[0].text == "city rome"  # type: ignore[union-attr]
    assert own.content[0].text == "hello from parent"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_the_child_context_reaches_the_client(era: str) -> None:
    """Progress, logs and elicitation from a mounted tool reach the parent's client
    (live reverse call on the handshake era, MRTR on 2026-07-28); ``ctx.server`` is
    the child."""
    logs: list[JSON] = []
    progress: list[float] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async def on_progress(params: Any) -> None:
        progress.append(params["progress"] if isinstance(params, dict) else params.progress)

    parent = parent_with(weather())
    async with Client(
        parent, mode=era, elicitation=units, on_log=on_log, log_level="debug"
    ) as client:
        result = await client.call_tool("weather_slow", on_progress=on_progress)
    assert result.content[0].text == "accept {'u': 'metric'}"  # type: ignore[union-attr]
    assert [entry["data"] for entry in logs] == ["served by weather"] * len(logs)
    assert logs  # at least one delivery (MRTR reruns the tool per round)
    if era == "legacy":
        assert progress == [1, 2]
    else:
        assert progress[-1] == 2


@pytest.mark.parametrize("era", ERAS)
async def test_errors_keep_the_childs_behaviour(era: str) -> None:
    parent = parent_with(weather())
    async with Client(parent, mode=era) as client:
        failed = await client.call_tool("weather_broken")
        with pytest.raises(JSONRPCError) as protocol:
            await client.call_tool("weather_refuses")
        with pytest.raises(JSONRPCError) as unknown:
            await client.call_tool("weather_nothing")
        with pytest.raises(JSONRPCError) as unknown_prompt:
            await client.get_prompt("weather_nothing")
        with pytest.raises(JSONRPCError) as missing:
            await client.read_resource("weather://nowhere")
    assert failed.is_error is True
    assert failed.content[0].text == "the child's own failure"  # type: ignore[union-attr]
    assert (protocol.value.code, protocol.value.data) == (-32099, {"why": "test"})
    assert unknown.value.code == INVALID_PARAMS
    assert "unknown tool 'weather_nothing'" in unknown.value.message
    assert "weather_forecast" in unknown.value.message  # known names are the parent's view
    assert unknown_prompt.value.code == INVALID_PARAMS
    assert "weather_report" in unknown_prompt.value.message
    assert missing.value.code == (-32002 if era == "legacy" else INVALID_PARAMS)


@pytest.mark.parametrize("era", ERAS)
async def test_live_view_and_list_changed_propagate(era: str) -> None:
    child = weather()
    parent = parent_with(child)
    changed: list[str] = []

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)

    async with Client(parent, mode=era, on_list_changed=on_list_changed, cache=False) as client:
        if era == "modern":
            async with client.listen(tools=True, prompts=True) as sub:
                child.add_tool(lambda: "new", name="fresh")
                with anyio.fail_after(10):
                    async for note in sub:
                        assert note.method == "notifications/tools/list_changed"
                        break
        else:
            child.add_tool(lambda: "new", name="fresh")
            with anyio.fail_after(10):
                while not changed:
                    await anyio.sleep(0.01)
            assert "tools" in changed[0]
        assert "weather_fresh" in [t.name for t in await client.list_tools()]
        assert (await client.call_tool("weather_fresh")).content[0].text == "new"  # type: ignore[union-attr]
        child.remove_tool("fresh")
        assert "weather_fresh" not in [t.name for t in await client.list_tools()]


@pytest.mark.parametrize("era", ERAS)
async def test_completions_route_to_the_owner(era: str) -> None:
    parent = parent_with(weather())

    @parent.prompt()
    def own(topic: str) -> str:
        return topic

    @parent.completion(prompt="own")
    def complete_own(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
        return ["own-" + value]

    async with Client(parent, mode=era) as client:
        by_prompt = await client.complete(
            {"type": "ref/prompt", "name": "weather_report"}, "city", "P"
        )
        by_template = await client.complete(
            {"type": "ref/resource", "uri": "weather://city/{name}"}, "name", "ro"
        )
        by_own = await client.complete({"type": "ref/prompt", "name": "own"}, "topic", "x")
        with pytest.raises(JSONRPCError) as unknown:
            await client.complete({"type": "ref/prompt", "name": "report"}, "city", "P")
    assert by_prompt.completion.values == ["Paris", "Perth"]
    assert by_template.completion.values == ["name:ro"]
    assert by_own.completion.values == ["own-x"]
    assert unknown.value.code == INVALID_PARAMS  # the child's unprefixed name is not known


@pytest.mark.parametrize("era", ERAS)
async def test_mount_of_mount(era: str) -> None:
    child = weather()
    middle = Server("middle")
    middle.mount(child, namespace="weather")
    top = Server("top")
    top.mount(middle, namespace="mid")
    changed: list[str] = []

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)

    async with Client(top, mode=era, elicitation=units, on_list_changed=on_list_changed) as client:
        names = [t.name for t in await client.list_tools()]
        called = await client.call_tool("mid_weather_forecast", {"city": "Lima"})
        asked = await client.call_tool("mid_weather_slow")
        got = await client.get_prompt("mid_weather_report", {"city": "Quito"})
        done = await client.complete(
            {"type": "ref/prompt", "name": "mid_weather_report"}, "city", "O"
        )
        if era == "legacy":
            child.add_tool(lambda: "x", name="deep")
            with anyio.fail_after(10):
                while not changed:
                    await anyio.sleep(0.01)
    assert "mid_weather_forecast" in names
    assert called.content[0].text == "sunny in Lima"  # type: ignore[union-attr]
    assert asked.content[0].text == "accept {'u': 'metric'}"  # type: ignore[union-attr]
    assert got.messages[0].content.text == "Report on Quito"  # type: ignore[union-attr]
    assert done.completion.values == ["Oslo"]


@pytest.mark.parametrize("era", ERAS)
async def test_collisions_follow_precedence(era: str) -> None:
    """The parent's own entries win, then mounts in mount order; namespace None adds
    no prefix (rule 3)."""
    first = Server("first")
    first.add_tool(lambda: "first", name="shared")
    second = Server("second")
    second.add_tool(lambda: "second", name="shared")
    second.add_tool(lambda: "only second", name="other")
    parent = Server("parent")
    parent.mount(first)
    with pytest.raises(ValueError, match="shared"):
        parent.mount(second)  # known at mount time: refused
    second.remove_tool("shared")
    parent.mount(second)
    second.add_tool(lambda: "second", name="shared")  # appears later: shadowed
    child = Server("child")
    child.add_tool(lambda: "child", name="run")
    parent.mount(child, namespace="ns")
    parent.add_tool(lambda: "parent", name="ns_run")  # the parent's own wins
    async with Client(parent, mode=era, cache=False) as client:
        names = [t.name for t in await client.list_tools()]
        shared = await client.call_tool("shared")
        own = await client.call_tool("ns_run")
        other = await client.call_tool("other")
    assert sorted(names) == ["ns_run", "other", "shared"]
    assert shared.content[0].text == "first"  # type: ignore[union-attr]
    assert own.content[0].text == "parent"  # type: ignore[union-attr]
    assert other.content[0].text == "only second"  # type: ignore[union-attr]


def test_mount_refuses_what_it_can_tell_is_wrong() -> None:
    parent = Server("parent")
    parent.add_tool(lambda: "p", name="weather_forecast")
    with pytest.raises(ValueError, match="weather_forecast"):
        parent.mount(weather(), namespace="weather")
    parent.mount(weather(), namespace="w")
    with pytest.raises(ValueError, match="already mounted"):
        parent.mount(Server("other"), namespace="w")
    with pytest.raises(ValueError, match="itself"):
        parent.mount(parent, namespace="self")
    outer = Server("outer")
    outer.mount(parent, namespace="p")
    with pytest.raises(ValueError, match="itself"):
        parent.mount(outer, namespace="cycle")
    for bad in ("", "has space", "x" * 65, "a/b"):
        with pytest.raises(ValueError, match="namespace"):
            parent.mount(Server("x"), namespace=bad)


@pytest.mark.parametrize("era", ERAS)
async def test_capabilities_include_the_childs(era: str) -> None:
    parent = Server("empty")  # nothing of its own
    parent.mount(weather(), namespace="weather")
    async with Client(parent, mode=era) as client:
        caps = client.server.capabilities
    assert caps is not None
    dumped = caps if isinstance(caps, dict) else caps.model_dump(by_alias=True, exclude_none=True)
    assert dumped["tools"] == {"listChanged": True}
    assert dumped["prompts"] == {"listChanged": True}
    assert dumped["resources"]["listChanged"] is True
    assert dumped["resources"].get("subscribe") is (True if era == "legacy" else None)
    assert dumped["completions"] == {}
    bare = Server("bare")
    bare.mount(Server("nothing"), namespace="n")
    assert "tools" not in bare.capabilities("legacy")


@pytest.mark.parametrize("era", ERAS)
async def test_pages_span_parent_and_mounts(era: str) -> None:
    parent = Server("parent", page_size=2)
    parent.add_tool(lambda: "a", name="a")
    parent.mount(weather(), namespace="w")  # the child pages by one
    async with Client(parent, mode=era, cache=False) as client:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            got = await client.list_tools_page(cursor)
            pages.append([t.name for t in got.tools])
            cursor = got.next_cursor
            if cursor is None:
                break
    assert pages == [["a", "w_forecast"], ["w_slow", "w_broken"], ["w_refuses"]]


@pytest.mark.parametrize("era", ERAS)
async def test_parent_list_filters_apply_to_mounted_entries(era: str) -> None:
    parent = parent_with(weather())

    def visible(ctx: Context, kind: str, definition: Mapping[str, Any]) -> bool:
        return definition.get("name") != "weather_broken" and definition.get("uri") != (
            "weather://stations"
        )

    parent.add_list_filter(visible)
    async with Client(parent, mode=era) as client:
        names = [t.name for t in await client.list_tools()]
        with pytest.raises(JSONRPCError) as hidden:
            await client.call_tool("weather_broken")
        with pytest.raises(JSONRPCError) as hidden_resource:
            await client.read_resource("weather://stations")
        shown = await client.call_tool("weather_forecast", {"city": "Bern"})
        templated = await client.read_resource("weather://city/bern")
    assert "weather_broken" not in names
    assert hidden.value.code == INVALID_PARAMS
    assert hidden_resource.value.code == (-32002 if era == "legacy" else INVALID_PARAMS)
    assert shown.content[0].text == "sunny in Bern"  # type: ignore[union-attr]
    assert templated.contents[0].text == "city bern"  # type: ignore[union-attr]


async def test_subscribe_and_updates_reach_mounted_resources() -> None:
    child = weather()
    parent = parent_with(child)
    updated: list[str] = []

    async def on_updated(uri: str) -> None:
        updated.append(uri)

    async with Client(parent, mode="legacy", on_resource_updated=on_updated) as client:
        await client.subscribe("weather://stations")
        child.notify_resource_updated("weather://stations")
        with anyio.fail_after(10):
            while not updated:
                await anyio.sleep(0.01)
        with pytest.raises(JSONRPCError):
            await client.subscribe("weather://unknown")
        await client.unsubscribe("weather://stations")
    assert updated == ["weather://stations"]


def dynamic_child() -> Server:
    """A server whose lists and calls are served by handlers, not registries (the shape
    of a proxy): tools/list pages by one with its own cursors."""
    server = Server("dynamic")
    names = ["ping", "pong", "pang"]

    async def tools_list(ctx: Context) -> JSON:
        at = int(ctx.params.get("cursor") or 0)
        result: JSON = {"tools": [{"name": names[at], "inputSchema": {"type": "object"}}]}
        if at + 1 < len(names):
            result["nextCursor"] = str(at + 1)
        return result

    async def tools_call(ctx: Context) -> JSON:
        name = ctx.params["name"]
        if name not in names:
            raise JSONRPCError(INVALID_PARAMS, f"dynamic: no tool {name}")
        return {"content": [{"type": "text", "text": f"dynamic {name}"}], "isError": False}

    server.add_method("tools/list", tools_list)
    server.add_method("tools/call", tools_call, input_capable=True, name_param="name")
    server.add_capability("tools", {"listChanged": True})
    return server


@pytest.mark.parametrize("era", ERAS)
async def test_a_handler_served_child_mounts_like_any_other(era: str) -> None:
    parent = Server("parent")
    parent.mount(dynamic_child(), namespace="dyn")
    parent.mount(weather(), namespace="weather")
    parent.mount(dynamic_child())  # no namespace, after the others
    async with Client(parent, mode=era, cache=False) as client:
        names = [t.name for t in await client.list_tools()]
        a = await client.call_tool("dyn_pong")
        b = await client.call_tool("weather_forecast", {"city": "Rome"})
        c = await client.call_tool("pang")
        with pytest.raises(JSONRPCError) as unknown:
            await client.call_tool("nothing")
    assert names[:3] == ["dyn_ping", "dyn_pong", "dyn_pang"]
    assert names[-3:] == ["ping", "pong", "pang"]
    assert a.content[0].text == "dynamic pong"  # type: ignore[union-attr]
    assert b.content[0].text == "sunny in Rome"  # type: ignore[union-attr]
    assert c.content[0].text == "dynamic pang"  # type: ignore[union-attr]
    assert unknown.value.code == INVALID_PARAMS


async def test_an_endless_mounted_list_is_bounded() -> None:
    from mcpkit.core.limits import Limits

    endless = Server("endless")

    async def tools_list(ctx: Context) -> JSON:
        at = int(ctx.params.get("cursor") or 0)
        return {"tools": [], "nextCursor": str(at + 1)}

    endless.add_method("tools/list", tools_list)
    parent = Server("parent", limits=Limits(max_mount_list_pages=5))
    parent.mount(endless, namespace="e")
    stuck = Server("stuck")

    async def same_cursor(ctx: Context) -> JSON:
        return {"tools": [], "nextCursor": "again"}

    stuck.add_method("tools/list", same_cursor)
    other = Server("other")
    other.mount(stuck, namespace="s")
    async with Client(parent, mode="legacy") as client:
        with pytest.raises(JSONRPCError) as bounded:
            await client.list_tools()
    async with Client(other, mode="modern") as client:
        with pytest.raises(JSONRPCError) as repeated:
            await client.list_tools()
    assert bounded.value.code == INTERNAL_ERROR
    assert "Limits.max_mount_list_pages" in bounded.value.message
    assert repeated.value.code == INTERNAL_ERROR
    assert "repeated a cursor" in repeated.value.message


def test_a_mounting_server_can_be_garbage_collected() -> None:
    """The registry of mounts does not keep a parent alive (mounting many short-lived
    servers does not leak them)."""
    import gc
    import weakref

    child = weather()
    parent = parent_with(child)
    gone = weakref.ref(parent)
    del parent, child
    gc.collect()
    assert gone() is None


async def test_the_childs_lifespan_runs_with_the_parents() -> None:
    events: list[str] = []
    child = weather()

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def hold(_server: Server) -> Any:
        events.append("enter")
        try:
            yield
        finally:
            events.append("exit")

    child.add_lifespan(hold)
    parent = parent_with(child)
    async with Client(parent, mode="legacy") as client:
        await client.call_tool("hello")
        assert events == ["enter"]
    assert events == ["enter", "exit"]


def sealing_child() -> Server:
    """A child that answers ``input_required`` with a ``requestState`` it seals itself
    and reads back from ``ctx.answers`` (the shape of a proxy), 2026-07-28 only."""
    from mcpkit.server.mrtr import request_digest

    server = Server("sealing")

    async def tools_list(ctx: Context) -> JSON:
        return {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}

    async def tools_call(ctx: Context) -> JSON:
        carried = ctx.answers.get("round")
        answer = ctx.answers.get("units")
        if carried is None or answer is None:
            state = ctx.server.sealer.seal(
                method=ctx.method,
                digest=request_digest(ctx.method, ctx.params),
                principal=None,
                answers={"round": {"n": 1}},
            )
            schema = {"type": "object", "properties": {"u": {"type": "string"}}}
            ask = {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Units?", "requestedSchema": schema},
            }
            return {
                "resultType": "input_required",
                "inputRequests": {"units": ask},
                "requestState": state,
            }
        text = f"round {carried['n']}: {answer['content']['u']}"
        return {"content": [{"type": "text", "text": text}], "isError": False}

    server.add_method("tools/list", tools_list)
    server.add_method("tools/call", tools_call, input_capable=True, name_param="name")
    return server


@pytest.mark.parametrize("depth", [1, 2])
async def test_a_childs_own_request_state_is_carried_by_the_parent(depth: int) -> None:
    """Rule 12: the child's sealed requestState travels inside the parent's and comes
    back to the child as ``ctx.answers`` on the retry, through nested mounts too."""
    top = Server("top")
    if depth == 1:
        top.mount(sealing_child(), namespace="s")
        name = "s_ask"
    else:
        middle = Server("middle")
        middle.mount(sealing_child(), namespace="s")
        top.mount(middle, namespace="m")
        name = "m_s_ask"
    async with Client(top, mode="modern", elicitation=units) as client:
        result = await client.call_tool(name)
    assert result.content[0].text == "round 1: metric"  # type: ignore[union-attr]
