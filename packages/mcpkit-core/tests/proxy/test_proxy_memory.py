"""The proxy in memory, every era pair: forwarding, input requests, progress, logs,
cancellation, extension traffic, ``_meta``, lists and subscriptions (issue 14, I2)."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest
from proxy_helpers import (
    EXTENSION_ID,
    PAIRS,
    Probe,
    answer_elicitation,
    answer_sampling,
    upstream_server,
)

from mcpkit.client import Client
from mcpkit.core.extensions import Extension
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import ProxyLimits, proxy
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_tools_prompts_resources_are_forwarded_in_every_era_pair(up: str, down: str) -> None:
    upstream = upstream_server()
    async with Client(upstream, mode=up) as direct:  # type: ignore[arg-type]
        want_tools = sorted(t.name for t in await direct.list_tools())
        want_caps = direct.server_capabilities
        want_ext = direct.server_extension(EXTENSION_ID)
    front = proxy(upstream, mode=up)  # type: ignore[arg-type]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        assert client.protocol_version == ("2026-07-28" if down == "modern" else "2025-11-25")
        assert sorted(t.name for t in await client.list_tools()) == want_tools
        result = await client.call_tool("test_simple_text")
        assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert "a" in prompt.messages[0].content.text  # type: ignore[union-attr]
        read = await client.read_resource("test://static-text")
        assert read.contents[0].text  # type: ignore[union-attr]
        done = await client.complete(
            {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "p"
        )
        assert done.completion.values
        # capabilities mirror the upstream's (I2) and serverInfo is the upstream's
        caps = client.server_capabilities
        for kind in ("tools", "prompts", "completions", "extensions"):
            assert caps.get(kind) == want_caps.get(kind), kind
        assert client.server_info["name"] == "mcpkit-demo"
        assert client.server_supports_extension(EXTENSION_ID)
        # the entry's version and stability travel with it (the result's _meta)
        assert want_ext is not None
        assert want_ext.about() == {"stability": "stable"}
        assert client.server_extension(EXTENSION_ID) == want_ext


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_elicitation_sampling_and_roots_reach_the_downstream_client(
    up: str, down: str
) -> None:
    front = proxy(upstream_server(), mode=up)  # type: ignore[arg-type]
    async with Client(
        front,
        mode=down,  # type: ignore[arg-type]
        elicitation=answer_elicitation,
        sampling=answer_sampling,
        roots=["file:///work/a", "file:///work/b"],
    ) as client:
        r = await client.call_tool("test_elicitation", {"message": "who?"})
        assert r.content[0].text == (  # type: ignore[union-attr]
            'User response: action=accept, content={"username":"ada","email":"ada@example.org"}'
        )
        r = await client.call_tool("test_sampling", {"prompt": "capital?"})
        assert r.content[0].text == "LLM response: Paris"  # type: ignore[union-attr]
        r = await client.call_tool("ask_roots")
        assert r.content[0].text == "file:///work/a,file:///work/b"  # type: ignore[union-attr]
        # two input requests in one call, answered in two rounds / two live requests
        r = await client.call_tool("test_elicitation_sep1034_defaults")
        assert not r.is_error


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_a_client_without_the_capability_is_not_asked(up: str, down: str) -> None:
    front = proxy(upstream_server(), mode=up)  # type: ignore[arg-type]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        with pytest.raises(JSONRPCError) as info:
            await client.call_tool("test_sampling", {"prompt": "x"})
    # the upstream saw the downstream client's capabilities (none), or the proxy refused
    assert info.value.code == -32021
    assert info.value.data == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_progress_keeps_the_downstream_token_and_order(up: str, down: str) -> None:
    front = proxy(upstream_server(), mode=up)  # type: ignore[arg-type]
    seen: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        seen.append(params)

    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        await client.call_tool("test_tool_with_progress", on_progress=on_progress, progress_token=7)
    assert [p["progress"] for p in seen] == [0, 50, 100]
    assert all(p["progressToken"] == 7 and type(p["progressToken"]) is int for p in seen)


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_log_messages_of_a_call_reach_its_client(up: str, down: str) -> None:
    front = proxy(upstream_server(), mode=up)  # type: ignore[arg-type]
    logs: list[JSON] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async with Client(front, mode=down, on_log=on_log, log_level="debug") as client:  # type: ignore[arg-type]
        await client.call_tool("test_tool_with_logging")
    assert len(logs) >= 3, logs
    assert all(isinstance(entry.get("data"), str) for entry in logs)


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_downstream_cancellation_cancels_the_upstream_request(up: str, down: str) -> None:
    probe = Probe()
    front = proxy(upstream_server(probe), mode=up)  # type: ignore[arg-type]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "wait_forever")
            with anyio.fail_after(10):
                await probe.started.wait()
            tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(10):
            await probe.cancelled.wait()  # ... and the upstream handler was stopped
        r = await client.call_tool("test_simple_text")  # the proxy goes on serving
        assert not r.is_error


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_unknown_extension_methods_and_notifications_are_forwarded(
    up: str, down: str
) -> None:
    probe = Probe()
    front = proxy(upstream_server(probe), mode=up)  # type: ignore[arg-type]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        result = await client.request("probe/echo", {"value": [1, "two"]})
        assert result["echo"] == [1, "two"]
        assert result["era"] == up  # the upstream served it in its own era
        await client.notify("notifications/probe/note", {"n": 1})
        with anyio.fail_after(10):
            while not probe.notifications:
                await anyio.sleep(0.01)
        assert probe.notifications == [("notifications/probe/note", {"n": 1})]
        with pytest.raises(JSONRPCError) as info:
            await client.request("probe/missing", {})
        assert info.value.code == -32601  # the upstream's own answer


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_meta_keys_are_forwarded_and_era_keys_rewritten(up: str, down: str) -> None:
    probe = Probe()
    front = proxy(upstream_server(probe), mode=up)  # type: ignore[arg-type]
    sent = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=opaque",
        "baggage": "user=ada",
        "com.example/custom": {"k": [1, 2]},
    }
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        await client.request("tools/call", {"name": "show_meta", "arguments": {}, "_meta": sent})
    meta = probe.metas[-1]
    for key, value in sent.items():
        assert meta[key] == value
    version = meta.get("io.modelcontextprotocol/protocolVersion")
    assert version == ("2026-07-28" if up == "modern" else None)


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_list_changed_is_forwarded_and_the_cache_refreshed(up: str, down: str) -> None:
    upstream = upstream_server()
    front = proxy(upstream, mode=up)  # type: ignore[arg-type]
    kinds: list[str] = []

    async def on_list_changed(kind: str) -> None:
        kinds.append(kind)

    async with Client(front, mode=down, on_list_changed=on_list_changed) as client:  # type: ignore[arg-type]
        before = {t.name for t in await client.list_tools(use_cache=False)}
        async with client.listen(tools=True) as changes:
            upstream.add_tool(lambda: "new", name="added_later")
            with anyio.fail_after(10):
                async for note in changes:
                    if note.method == "notifications/tools/list_changed":
                        break
        after = {t.name for t in await client.list_tools(use_cache=False)}
    assert after - before == {"added_later"}


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_resource_updates_reach_subscribers(up: str, down: str) -> None:
    upstream = upstream_server()
    front = proxy(upstream, mode=up)  # type: ignore[arg-type]
    uri = "test://watched-resource"
    async with (
        Client(front, mode=down) as client,  # type: ignore[arg-type]
        client.listen(resource_uris=[uri]) as changes,
    ):
        await anyio.sleep(0.2)  # the upstream subscription is in place
        upstream.notify_resource_updated(uri)
        with anyio.fail_after(10):
            async for note in changes:
                assert note.uri == uri
                break


async def test_cursors_pass_through_unchanged() -> None:
    upstream = Server("paged", page_size=2)
    for i in range(5):
        upstream.add_tool(lambda: "x", name=f"t{i}")
    async with Client(upstream) as direct:
        want = await direct.list_tools_page()
    async with Client(proxy(upstream)) as client:
        page = await client.list_tools_page()
        assert page.next_cursor == want.next_cursor
        assert [t.name for t in page.tools] == ["t0", "t1"]
        rest = await client.list_tools_page(page.next_cursor)
        assert [t.name for t in rest.tools] == ["t2", "t3"]
        assert len(await client.list_tools()) == 5


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_upstream_errors_keep_their_meaning_per_era(up: str, down: str) -> None:
    front = proxy(upstream_server(), mode=up)  # type: ignore[arg-type]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        with pytest.raises(JSONRPCError) as info:
            await client.call_tool("nope")
        assert info.value.code == -32602
        assert "nope" in info.value.message
        with pytest.raises(JSONRPCError) as info:
            await client.read_resource("test://missing")
        if down == "legacy":
            assert info.value.code == -32002
        else:
            assert info.value.code == -32602
            assert info.value.data == {"uri": "test://missing"}


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_the_downstream_clients_extensions_are_declared_upstream(up: str, down: str) -> None:
    upstream = upstream_server()

    @upstream.tool()
    async def sees_extension(ctx: Context) -> str:
        return str(ctx.client_supports_extension("io.example/client-side"))

    front = proxy(upstream, mode=up)  # type: ignore[arg-type]
    ext = Extension("io.example/client-side")
    async with Client(front, mode=down, extensions=[ext]) as client:  # type: ignore[arg-type]
        r = await client.call_tool("sees_extension")
    assert r.content[0].text == "True"  # type: ignore[union-attr]


async def test_a_client_instance_or_a_factory_is_a_target() -> None:
    upstream = upstream_server()
    made: list[Client] = []

    def factory() -> Client:
        made.append(Client(upstream, mode="legacy"))
        return made[-1]

    for target in (Client(upstream, mode="modern"), factory):
        async with Client(proxy(target), elicitation=answer_elicitation) as client:
            r = await client.call_tool("test_elicitation", {"message": "who?"})
            assert "ada@example.org" in r.content[0].text  # type: ignore[union-attr]
    assert made  # the factory made the upstream connections


def test_mcpkit_server_proxy_is_callable_however_it_was_imported() -> None:
    import mcpkit.server
    import mcpkit.server.proxy.options  # a submodule import binds the package

    assert callable(mcpkit.server.proxy)
    server = mcpkit.server.proxy(Server("x"))
    assert isinstance(server, Server)
    from mcpkit.server import ProxyLimits

    assert ProxyLimits().max_inflight_per_client == 8


def test_mcpkit_proxy_is_callable_however_it_was_imported() -> None:
    import mcpkit.proxy.lists  # a submodule import binds the package

    assert callable(mcpkit.proxy)
    assert isinstance(mcpkit.proxy(Server("x")), Server)
    assert mcpkit.proxy.ProxyLimits is ProxyLimits


def test_the_old_proxy_path_warns_and_gives_the_same_names() -> None:
    """``mcpkit.server.proxy`` moved to ``mcpkit.proxy`` (issue 27): the old path keeps
    every public name for one release, each read with a ``DeprecationWarning``."""
    import mcpkit.proxy
    import mcpkit.proxy.options
    import mcpkit.server.proxy as old
    import mcpkit.server.proxy.options as old_options

    for name in ("Proxy", "ProxyLimits", "UpstreamEraError", "proxy"):
        with pytest.warns(DeprecationWarning, match=f"moved to mcpkit.proxy.{name}"):
            assert getattr(old, name) is getattr(mcpkit.proxy, name)
    with pytest.warns(DeprecationWarning, match="mcpkit.proxy.options.ProxyLimits"):
        assert old_options.ProxyLimits is mcpkit.proxy.options.ProxyLimits
    with pytest.warns(DeprecationWarning, match=r"mcpkit.proxy\(target\)"):
        assert isinstance(old(Server("x")), Server)
    with pytest.raises(AttributeError):
        _ = old.forward_call


def test_the_old_names_on_mcpkit_server_warn_at_the_users_line() -> None:
    """``from mcpkit.server import ProxyLimits`` warns at the line that wrote it (so
    Python's default filters show it in the user's own module), and a star import
    of ``mcpkit.server`` no longer pulls the moved names."""
    import mcpkit.server

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from mcpkit.server import ProxyLimits as Old
    assert Old is ProxyLimits
    moved = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert [w.filename for w in moved] == [__file__] * len(moved)
    assert moved
    assert all("mcpkit.proxy.ProxyLimits" in str(w.message) for w in moved)
    assert not {"proxy", "ProxyLimits"} & set(mcpkit.server.__all__)


async def test_idle_upstream_connections_are_bounded_in_all() -> None:
    front = proxy(
        upstream_server(), mode="legacy", proxy_limits=ProxyLimits(max_idle_connections=2)
    )
    state: Any = front.proxy  # type: ignore[attr-defined]
    variants: list[JSON] = [
        {"roots": ["file:///a"]},
        {"sampling": answer_sampling},
        {"elicitation": answer_elicitation},
        {"roots": ["file:///a"], "sampling": answer_sampling},
        {},
    ]
    async with Client(front, mode="legacy") as keep_alive:  # holds the proxy's lifespan
        for options in variants:  # a different capability set each: its own connection
            async with Client(front, mode="legacy", **options) as client:
                assert not (await client.call_tool("test_simple_text")).is_error
        assert state.upstream.idle_count() == 2
        assert not (await keep_alive.call_tool("test_simple_text")).is_error


async def test_upstream_subscriptions_are_bounded_in_all() -> None:
    limits = ProxyLimits(max_upstream_subscriptions=2)
    front = proxy(upstream_server(), mode="legacy", proxy_limits=limits)
    async with Client(front, mode="legacy") as client:
        await client.subscribe("test://watched-resource")
        await client.subscribe("test://static-text")
        await client.subscribe("test://static-text")  # already held: no new one
        with pytest.raises(JSONRPCError) as info:
            await client.subscribe("test://template/1/data")
    assert info.value.code == -32602
    assert "max_upstream_subscriptions" in info.value.message
