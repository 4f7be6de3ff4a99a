"""Issue 25 §6, Apps visibility: what a caller is listed and what it may call come from one
decision (:func:`mcpkit.ext.ui.visibility.may_use`), so they never disagree.

Hypothesis draws tool sets whose ``_meta.ui.visibility`` takes every shape (absent, each
subset, repeats, unknown entries, a bare string, non-strings, no ``_meta.ui`` at all) and
checks, against the real components, that a listed tool is callable and a refused one is
not listed:

- the server (core's list filter from :class:`~mcpkit.ext.ui.AppsExtension`, lenient and
  strict), for a client with and one without MCP Apps;
- the host's agent side (:class:`~mcpkit.ext.ui.host.ServerRegistry` list and call);
- the host's view side (:meth:`AppHost.app_tools` and the view's ``tools/call``).
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ui_host_helpers import INIT_PARAMS, notification, request

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.ui import AppsExtension
from mcpkit.ext.ui.host import AppHost, ServerRegistry, client_extension, wire
from mcpkit.ext.ui.visibility import AGENT, APP, listed, may_use
from mcpkit.server.app import Server

JSON = dict[str, Any]
VIEW_URI = "ui://prop/view"
ABSENT = object()

visibility_values = st.one_of(
    st.just(ABSENT),
    st.lists(st.sampled_from(["model", "app", "agent", "", "MODEL"]), max_size=4),
    st.sampled_from(["model", "app", None, 1, {"model": True}]),
    st.lists(st.one_of(st.sampled_from(["model", "app"]), st.integers(0, 3)), max_size=3),
)


@st.composite
def tool_metas(draw: st.DrawFn) -> JSON | None:
    shape = draw(st.sampled_from(["ui", "ui", "ui", "no-ui", "ui-not-object", "none"]))
    if shape == "none":
        return None
    if shape == "no-ui":
        return {"other": 1}
    if shape == "ui-not-object":
        return {"ui": "visible"}
    ui: JSON = {"resourceUri": VIEW_URI}
    value = draw(visibility_values)
    if value is not ABSENT:
        ui["visibility"] = value
    return {"ui": ui}


tool_sets = st.lists(tool_metas(), min_size=1, max_size=5)


def build(metas: list[JSON | None], *, strict: bool) -> Server:
    server = Server("prop", "1.0.0")
    for index, meta in enumerate(metas):
        options: Any = {"meta": meta} if meta is not None else {}

        def answer(index: int = index) -> str:
            return f"ran {index}"

        server.add_tool(answer, name=f"t{index}", **options)

    @server.resource(VIEW_URI, mime_type=wire.MIME_TYPE)
    def view() -> JSON:  # pyright: ignore[reportUnusedFunction]
        return {"uri": VIEW_URI, "mimeType": wire.MIME_TYPE, "text": "<!doctype html><p>v"}

    AppsExtension(server, strict=strict)
    return server


async def callable_on_server(client: Client, name: str) -> bool:
    try:
        await client.request("tools/call", {"name": name, "arguments": {}}, use_cache=False)
    except JSONRPCError as exc:
        code = exc.code
    else:
        return True
    assert code == -32602  # unknown tool: the only refusal a list filter gives
    return False


async def listed_on_server(client: Client) -> set[str]:
    page = await client.request("tools/list", None, use_cache=False)
    return {tool["name"] for tool in page["tools"]}


# database=None: no .hypothesis/ example store in the working tree (tests write only to
# temporary directories).
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@SETTINGS
@given(metas=tool_sets, strict=st.booleans(), apps=st.booleans())
def test_the_server_lists_exactly_what_it_lets_a_client_call(
    metas: list[JSON | None], strict: bool, apps: bool
) -> None:
    async def main() -> None:
        extensions = [client_extension()] if apps else []
        async with Client(build(metas, strict=strict), extensions=extensions) as client:
            shown = await listed_on_server(client)
            names = [f"t{i}" for i in range(len(metas))]
            allowed = {n for n in names if await callable_on_server(client, n)}
            assert shown == allowed  # listed => callable, refused => not listed
            audiences = (AGENT, APP) if apps else () if strict else (AGENT,)
            for name, meta in zip(names, metas, strict=True):
                tool = {"_meta": meta} if meta is not None else {}
                has_ui = meta is not None and "ui" in meta and isinstance(meta["ui"], dict)
                assert (name in shown) == (not has_ui or may_use(tool, audiences))

    anyio.run(main)


@SETTINGS
@given(metas=tool_sets)
def test_the_host_lists_to_agent_and_view_exactly_what_each_may_call(
    metas: list[JSON | None],
) -> None:
    async def main() -> None:
        server = build(metas, strict=False)
        async with Client(server, extensions=[client_extension()]) as client:
            names = sorted(await listed_on_server(client))
            # the agent: ServerRegistry's list and call
            registry = ServerRegistry()
            await registry.add("prop", client)
            agent_listed = {tool["name"] for tool in registry.agent_tools()}
            agent_callable: set[str] = set()
            refusals: set[int] = set()
            for name in names:
                try:
                    await registry.call_tool(name)
                except JSONRPCError as exc:
                    refusals.add(exc.code)
                else:
                    agent_callable.add(name)
            assert refusals <= {wire.DENIED}
            assert agent_listed == agent_callable
            # the view: AppHost.app_tools and the view's tools/call
            host = AppHost(client, tool_name=names[0]) if names else None
            if host is None:
                return
            await host.refresh_tools()
            await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS))
            await host.handle(notification(wire.INITIALIZED))
            app_listed = {tool["name"] for tool in host.app_tools()}
            app_callable: set[str] = set()
            for rid, name in enumerate(names, start=2):
                answer = await host.handle(request(rid, wire.TOOLS_CALL, {"name": name}))
                assert answer is not None
                if "result" in answer:
                    app_callable.add(name)
                else:
                    assert answer["error"]["code"] == wire.DENIED, answer
            assert app_listed == app_callable
            tools = host.app_tools()
            assert listed(tools, APP) == tools

    anyio.run(main)
