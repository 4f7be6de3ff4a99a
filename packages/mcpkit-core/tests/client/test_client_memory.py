"""The client against an mcpkit Server in memory, on both eras (the same test body runs
pinned to the handshake era and to 2026-07-28, where the server's reverse calls become
MRTR rounds)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpkit.client import Client, InputRoundsExceededError, ToolOutputError
from mcpkit.core.engine import RequestTimeoutError
from mcpkit.core.extensions import Extension
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.server import Server
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
MODES = ["legacy", "modern"]
JSON = dict[str, Any]


def build_server(**options: Any) -> Server:
    server = Server("memory-test", "1.2.3", instructions="be nice", **options)

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(
        output_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }
    )
    async def bad_output() -> JSON:
        return {"n": 1}

    @server.tool(
        output_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }
    )
    async def failing_with_schema() -> JSON:
        from mcpkit.server.tools import ToolError

        raise ToolError("it broke")

    @server.tool()
    async def whoami(ctx: Context) -> JSON:
        return {"capabilities": dict(ctx.client_capabilities or {})}

    @server.tool()
    async def ask(ctx: Context) -> JSON:
        return await ctx.elicit(
            "Your details?",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "Ada"},
                    "age": {"type": "integer", "default": 36},
                    "admin": {"type": "boolean"},
                },
            },
        )

    @server.tool()
    async def think(ctx: Context) -> str:
        result = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], max_tokens=10
        )
        return str(result["content"]["text"])

    @server.tool()
    async def roots(ctx: Context) -> str:
        return ",".join(r["uri"] for r in await ctx.list_roots())

    @server.tool()
    async def slow(ctx: Context) -> str:
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, message=f"step {step}")
        await ctx.info("finished steps")
        return "done"

    @server.tool()
    async def nag(ctx: Context) -> str:
        n = 0
        while True:
            n += 1
            await ctx.elicit(f"again {n}", {"type": "object", "properties": {}}, key=f"k{n}")

    for i in range(5):
        server.add_tool(lambda i=i: f"tool {i}", name=f"extra_{i}")

    @server.resource("test://greeting")
    async def greeting() -> str:
        return "hello"

    @server.prompt()
    async def hello(name: str) -> str:
        """Say hello."""
        return f"Hello {name}"

    return server


async def sample(params: Any) -> JSON:
    return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}


async def accept_empty(params: Any) -> JSON:
    return {"action": "accept", "content": {"admin": True}}


def client(server: Server, mode: str, **options: Any) -> Client:
    return Client(server, mode=mode, timeout_s=10, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", MODES)
async def test_connect_reports_era_server_info_and_capabilities(mode: str) -> None:
    async with client(build_server(), mode) as c:
        assert c.era == mode
        assert c.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert c.server_info["name"] == "memory-test"
        assert c.instructions == "be nice"
        assert "tools" in c.server_capabilities


async def test_adaptive_mode_picks_2026_against_a_dual_era_server() -> None:
    async with Client(build_server()) as c:
        assert c.era == "modern"


@pytest.mark.parametrize("mode", MODES)
async def test_server_supports_extension_reads_advertised_extensions(mode: str) -> None:
    server = build_server(extensions=[Extension("com.example/widgets", config={"v": 1})])
    async with client(server, mode) as c:
        assert c.server_supports_extension("com.example/widgets")
        assert not c.server_supports_extension("com.example/other")


@pytest.mark.parametrize("mode", MODES)
async def test_list_tools_follows_every_cursor(mode: str) -> None:
    async with client(build_server(page_size=3), mode) as c:
        first = await c.list_tools_page()
        assert len(first.tools) == 3
        assert first.next_cursor is not None
        names = [t.name for t in await c.list_tools()]
        assert len(names) == len(set(names)) == 14
        assert {"add", "extra_4"} <= set(names)


@pytest.mark.parametrize("mode", MODES)
async def test_typed_calls_return_models(mode: str) -> None:
    async with client(build_server(), mode) as c:
        result = await c.call_tool("add", {"a": 2, "b": 40})
        assert result.structured_content == {"result": 42} or "42" in result.content[0].text  # type: ignore[union-attr]
        resource = await c.read_resource("test://greeting")
        assert resource.contents[0].text == "hello"  # type: ignore[union-attr]
        prompt = await c.get_prompt("hello", {"name": "Bob"})
        assert "Hello Bob" in str(prompt.messages[0].content)
        prompts = await c.list_prompts()
        assert [p.name for p in prompts] == ["hello"]
        await c.ping()


@pytest.mark.parametrize("mode", MODES)
async def test_output_schema_mismatch_raises_on_success_only(mode: str) -> None:
    server = build_server()

    async def corrupt(ctx: Context, *, call_next: Any) -> JSON:
        # An mcpkit tool cannot send a non-conforming result (the server checks it), so a
        # middleware stands in for a server that does not check.
        result: JSON = await call_next(ctx)
        if ctx.params.get("name") == "bad_output" and "structuredContent" in result:
            result["structuredContent"] = {"n": "not an integer"}
        return result

    server.add_middleware(corrupt)
    async with client(server, mode) as c:
        with pytest.raises(ToolOutputError, match="n: 'not an integer' is not of type 'integer'"):
            await c.call_tool("bad_output")
        failed = await c.call_tool("failing_with_schema")
        assert failed.is_error is True
        unchecked = await c.call_tool("bad_output", validate=False)
        assert unchecked.structured_content == {"n": "not an integer"}


@pytest.mark.parametrize("mode", MODES)
async def test_capabilities_are_declared_only_for_handlers_that_are_set(mode: str) -> None:
    async with client(build_server(), mode) as bare:
        caps = (await bare.call_tool("whoami")).structured_content["capabilities"]  # type: ignore[index]
        assert caps == {}
    ext = Extension("com.example/client-ext", config={"colour": "blue"})
    async with client(
        build_server(),
        mode,
        sampling=sample,
        elicitation=accept_empty,
        roots=["file:///w"],
        extensions=[ext],
    ) as full:
        caps = (await full.call_tool("whoami")).structured_content["capabilities"]  # type: ignore[index]
        assert caps["sampling"] == {}
        assert caps["elicitation"] == {"form": {}}
        assert caps["roots"] == {"listChanged": True}
        assert caps["extensions"] == {"com.example/client-ext": {"colour": "blue"}}


@pytest.mark.parametrize("mode", MODES)
async def test_elicitation_answer_is_filled_with_schema_defaults(mode: str) -> None:
    seen: list[Any] = []

    async def elicit(params: Any) -> JSON:
        seen.append(params)
        return {"action": "accept", "content": {"admin": True}}

    async with client(build_server(), mode, elicitation=elicit) as c:
        result = await c.call_tool("ask")
    assert seen[0].message == "Your details?"
    assert result.structured_content == {
        "action": "accept",
        "content": {"admin": True, "name": "Ada", "age": 36},
    }


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_roots_handlers_answer_the_server(mode: str) -> None:
    async with client(build_server(), mode, sampling=sample, roots=["file:///a", "file:///b"]) as c:
        assert (await c.call_tool("think")).content[0].text == "4"  # type: ignore[union-attr]
        assert (await c.call_tool("roots")).content[0].text == "file:///a,file:///b"  # type: ignore[union-attr]


async def test_mrtr_rounds_are_bounded() -> None:
    async with client(build_server(), "modern", elicitation=accept_empty, max_input_rounds=3) as c:
        with pytest.raises(InputRoundsExceededError, match="after 3 rounds"):
            await c.call_tool("nag")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("token", ["tok-1", 7])
async def test_progress_callback_gets_each_notification_for_its_token(
    mode: str, token: str | int
) -> None:
    updates: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        updates.append(params)

    async with client(build_server(), mode) as c:
        await c.call_tool("slow", on_progress=on_progress, progress_token=token)
    assert [u["progress"] for u in updates] == [1, 2, 3]
    assert all(u["progressToken"] == token for u in updates)
    assert updates[-1]["message"] == "step 3"


@pytest.mark.parametrize("mode", MODES)
async def test_log_messages_reach_on_log_after_set_log_level(mode: str) -> None:
    logs: list[JSON] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async with client(build_server(), mode, on_log=on_log) as c:
        await c.set_log_level("debug")
        await c.call_tool("slow")
    assert [entry["data"] for entry in logs] == ["finished steps"]
    assert logs[0]["level"] == "info"


def blocking_server(started: anyio.Event, cancelled: anyio.Event) -> Server:
    server = Server("blocking")

    @server.tool()
    async def block() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_raises_and_cancels_the_request_on_the_server(mode: str) -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    async with client(blocking_server(started, cancelled), mode) as c:
        with pytest.raises(RequestTimeoutError):
            await c.call_tool("block", timeout_s=0.2)
        with anyio.fail_after(5):
            await cancelled.wait()


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_an_awaited_call_sends_notifications_cancelled(mode: str) -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    async with client(blocking_server(started, cancelled), mode) as c:
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.call_tool, "block")
            await started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            await cancelled.wait()
        assert (await c.list_tools())[0].name == "block"


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_is_a_jsonrpc_error_naming_the_tool(mode: str) -> None:
    async with client(build_server(), mode) as c:
        with pytest.raises(JSONRPCError) as info:
            await c.call_tool("nope")
        assert info.value.code == -32602
        assert "nope" in info.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_send_and_receive_middleware_see_every_message(mode: str) -> None:
    sent: list[tuple[str, JSON]] = []
    received: list[str] = []
    async with client(build_server(), mode) as c:

        async def send_mw(request: Any, call_next: Any) -> JSON:
            request.params.setdefault("_meta", {})["com.example/trace"] = "t-1"
            sent.append((request.method, request.params))
            result = await call_next(request)
            return {**result, "seenByMiddleware": True}

        async def recv_mw(message: Any, call_next: Any) -> Any:
            received.append(message.method)
            return await call_next(message)

        c.add_send_middleware(send_mw)
        c.add_receive_middleware(recv_mw)
        result = await c.request("tools/call", {"name": "slow", "arguments": {}})
        await c.call_tool("slow", on_progress=lambda p: anyio.lowlevel.checkpoint())
    assert result["seenByMiddleware"] is True
    method, params = sent[0]
    assert method == "tools/call"
    assert params["_meta"]["com.example/trace"] == "t-1"
    if mode == "modern":
        assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "notifications/progress" in received


async def test_list_changed_invalidates_the_cache_and_calls_back_on_the_handshake_era() -> None:
    server = build_server()
    kinds: list[str] = []

    async def on_list_changed(kind: str) -> None:
        kinds.append(kind)

    async with client(server, "legacy", on_list_changed=on_list_changed) as c:
        before = {t.name for t in await c.list_tools()}
        server.add_tool(lambda: "new", name="fresh")
        with anyio.fail_after(5):
            while "tools" not in kinds:
                await anyio.sleep(0.01)
        after = {t.name for t in await c.list_tools()}
    assert after - before == {"fresh"}


async def test_modern_list_results_are_cached_for_ttl_and_invalidated_by_list_changed() -> None:
    from mcpkit.server.app import CacheHint

    server = build_server(cache_hints={"tools/list": CacheHint(60_000, "public")})
    calls: list[str] = []
    async with client(server, "modern") as c:

        async def count(request: Any, call_next: Any) -> JSON:
            calls.append(request.method)
            return await call_next(request)

        c.add_send_middleware(count)
        await c.list_tools()
        await c.list_tools()
        assert calls.count("tools/list") == 1
        await c.list_tools(use_cache=False)
        assert calls.count("tools/list") == 2
        async with c.listen(tools=True) as sub:
            assert sub.acknowledged == {"toolsListChanged": True}
            server.add_tool(lambda: "new", name="fresh")
            with anyio.fail_after(5):
                async for note in sub:
                    assert note.method == "notifications/tools/list_changed"
                    break
        names = {t.name for t in await c.list_tools()}
        assert "fresh" in names
        assert calls.count("tools/list") == 3


@pytest.mark.parametrize("mode", MODES)
async def test_listen_yields_resource_updates_on_both_eras(mode: str) -> None:
    server = build_server()
    async with client(server, mode) as c, c.listen(resource_uris=["test://greeting"]) as sub:
        server.notify_resource_updated("test://other")
        server.notify_resource_updated("test://greeting")
        with anyio.fail_after(5):
            async for note in sub:
                assert note.method == "notifications/resources/updated"
                assert note.uri == "test://greeting"
                break


async def test_subscribe_is_refused_locally_on_2026() -> None:
    from mcpkit.client import ClientError

    async with client(build_server(), "modern") as c:
        with pytest.raises(ClientError, match="listen"):
            await c.subscribe("test://greeting")


async def test_every_local_failure_is_a_client_error_and_keeps_its_engine_type() -> None:
    from mcpkit.client import ClientError, RequestTimeoutError
    from mcpkit.core import engine
    from mcpkit.server.demo import build_demo_server

    async with Client(build_demo_server()) as client:
        with pytest.raises(ClientError) as caught:
            await client.call_tool("sleep", {"seconds": 5}, timeout_s=0.2)
    assert isinstance(caught.value, RequestTimeoutError)
    assert isinstance(caught.value, engine.RequestTimeoutError)
    assert isinstance(caught.value, TimeoutError)


class _Front:
    """Not a Server: anything with ``serve_memory`` is a target (core.memory rule 6)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.opened = 0

    def serve_memory(self, *, serialize: bool = False, principal: Any = None) -> Any:
        self.opened += 1
        return self.server.serve_memory(serialize=serialize, principal=principal)


@pytest.mark.parametrize("mode", MODES)
async def test_any_memory_server_is_a_target_not_only_a_server(mode: str) -> None:
    """The client connects in memory through :class:`mcpkit.core.memory.MemoryServer`,
    without naming the server's classes (issue 27: client and server apart)."""
    from mcpkit.core.memory import MemoryServer

    front = _Front(build_server())
    assert isinstance(front, MemoryServer)
    assert isinstance(Server("x"), MemoryServer)
    async with Client(front, mode=mode) as client:
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
    assert front.opened == 1


def test_a_server_class_instead_of_an_instance_is_refused_at_once() -> None:
    """``Client(Server)`` (the class) is a TypeError naming the fix when the client is
    made, not a missing-``self`` error on connect."""
    with pytest.raises(TypeError, match=r"the class Server: give an instance \(Server\(\.\.\.\)\)"):
        Client(Server)
