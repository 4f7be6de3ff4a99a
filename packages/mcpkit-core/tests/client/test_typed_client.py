"""Typed client APIs (issue 13 §2, §3): ``call_tool(..., result_type=)``, progress
callbacks with ``(progress, total, message)``, ``on_log`` on 2026-07-28 without
``log_level``, and a client handler that raises giving the same error on both eras.
Real mcpkit server and client, in memory, both eras."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcpkit.client import Client, HandlerFailedError, ToolCallError, ToolOutputError
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.types import CreateMessageRequestParams, ElicitRequestFormParams, TextContent
from mcpkit.server import Server, ToolError
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
MODES = ["legacy", "modern"]


class Weather(BaseModel):
    city: str
    celsius: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


def build() -> Server:
    server = Server("typed-client")

    @server.tool()
    def weather(city: str) -> Weather:
        return Weather(city=city, celsius=21.5)

    @server.tool()
    def point() -> dict[str, int]:
        return {"x": 1, "y": 2}

    @server.tool()
    def count() -> int:
        return 7

    @server.tool(structured_output=False)
    def words() -> str:
        return '["a", "b"]'  # JSON text only, as a list return without outputSchema

    @server.tool()
    def plain() -> str:
        return "no structure"

    @server.tool(structured_output=False)
    def blocks() -> list[Any]:
        return [TextContent(text="a"), TextContent(text="b")]

    @server.tool()
    def broken() -> str:
        raise ToolError("bad input")

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 3, "one")
        await ctx.report_progress(2)
        await ctx.report_progress(3, 3, "done")
        return "ok"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.debug("hidden at info")
        await ctx.info("visible")
        await ctx.warning("also visible")
        return "ok"

    @server.tool()
    async def think(ctx: Context) -> str:
        return (await ctx.sample("hi", max_tokens=5)).text or ""

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return str(answer["action"])

    @server.tool()
    async def roots(ctx: Context) -> int:
        return len(await ctx.list_roots())

    @server.tool()
    async def custom(ctx: Context) -> str:
        out = await ctx.request_input({"c": {"method": "x-acme/thing", "params": {}}})
        return str(out)

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_result_type_validates_structured_content(mode: str) -> None:
    async with Client(build(), mode=mode) as client:
        w = await client.call_tool("weather", {"city": "Oslo"}, result_type=Weather)
        assert w == Weather(city="Oslo", celsius=21.5)
        assert await client.call_tool("point", result_type=Point) == Point(1, 2)
        # a wrapped non-object return ({"result": 7}) is unwrapped for a non-object type
        assert await client.call_tool("count", result_type=int) == 7
        assert await client.call_tool("words", result_type=list[str]) == ["a", "b"]
        with pytest.raises(ToolOutputError, match="celsius"):
            await client.call_tool("point", result_type=Weather)
        # no structuredContent: one text block is read as JSON, else as the text
        assert await client.call_tool("plain", result_type=str) == "no structure"
        with pytest.raises(ToolOutputError, match="not one text block"):
            await client.call_tool("blocks", result_type=list[str])
        with pytest.raises(ToolCallError, match="bad input") as err:
            await client.call_tool("broken", result_type=str)
        assert err.value.result.is_error is True
        # without result_type nothing changes
        raw = await client.call_tool("weather", {"city": "Oslo"})
        assert raw.structured_content == {"city": "Oslo", "celsius": 21.5}


@pytest.mark.parametrize("mode", MODES)
async def test_progress_callback_gets_progress_total_message(mode: str) -> None:
    got: list[tuple[float, float | None, str | None]] = []
    old: list[JSON] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append((progress, total, message))

    async def one_arg(params: JSON) -> None:
        old.append(params)

    async with Client(build(), mode=mode) as client:
        await client.call_tool("slow", on_progress=on_progress)
        await client.call_tool("slow", on_progress=one_arg)
    assert got == [(1, 3, "one"), (2, None, None), (3, 3, "done")]
    assert [p["progress"] for p in old] == [1, 2, 3]
    assert old[0]["message"] == "one"
    assert "progressToken" in old[0]


@pytest.mark.parametrize("mode", MODES)
async def test_on_log_receives_logs_without_log_level(mode: str) -> None:
    logs: list[JSON] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async with Client(build(), mode=mode, on_log=on_log) as client:
        await client.call_tool("chatty")
        await anyio.sleep(0.05)
    levels = [p["level"] for p in logs]
    assert "info" in levels
    assert "warning" in levels
    if mode == "modern":
        assert "debug" not in levels  # the default level is "info"
    async with Client(build(), mode=mode, on_log=on_log, log_level="error") as client:
        logs.clear()
        await client.call_tool("chatty")
    assert logs == []


async def test_modern_without_on_log_asks_for_no_logs() -> None:
    seen: list[JSON] = []
    server = build()

    async def record(ctx: Context, *, call_next: Any) -> JSON:
        seen.append(dict(ctx.meta))
        return await call_next(ctx)

    server.add_middleware(record)
    async with Client(server, mode="modern") as client:
        await client.call_tool("plain")
    assert seen
    assert all("io.modelcontextprotocol/logLevel" not in m for m in seen)


async def _boom(*_: Any) -> Any:
    raise RuntimeError("secret database password in this text")


HANDLERS: dict[str, tuple[str, str, JSON]] = {
    "sampling": ("think", "sampling/createMessage", {"sampling": _boom}),
    "elicitation": ("ask", "elicitation/create", {"elicitation": _boom}),
    "roots": ("roots", "roots/list", {"roots": _boom}),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(HANDLERS))
async def test_a_raising_handler_is_the_same_error_on_both_eras(
    mode: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    tool, method, options = HANDLERS[kind]
    caplog.set_level(logging.ERROR, logger="mcpkit.client")
    async with Client(build(), mode=mode, **options) as client:
        with pytest.raises(JSONRPCError) as err:
            await client.call_tool(tool)
    assert err.value.code == INTERNAL_ERROR
    message = err.value.message
    assert message.startswith(f"Internal error: the client's {method} handler failed (error id ")
    assert "secret" not in message
    error_id = message.rsplit("error id ", 1)[1].rstrip(")")
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged
    assert logged[0].exc_info is not None
    if mode == "modern":  # raised locally: the original is kept as the cause
        assert isinstance(err.value, HandlerFailedError)
        assert isinstance(err.value.__cause__, RuntimeError)


async def test_a_raising_custom_request_handler_gets_the_generic_error() -> None:
    async with Client(build(), mode="legacy") as client:
        client.add_request_handler("x-acme/thing", _boom)
        with pytest.raises(JSONRPCError) as err:
            await client.call_tool("custom")
    assert err.value.code == INTERNAL_ERROR
    assert "the client's x-acme/thing handler failed (error id" in err.value.message
    assert "secret" not in err.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_error_details_turns_the_exception_text_back_on(mode: str) -> None:
    async with Client(build(), mode=mode, sampling=_boom, error_details=True) as client:
        with pytest.raises(JSONRPCError) as err:
            await client.call_tool("think")
    assert "RuntimeError: secret database password" in err.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_a_deliberate_jsonrpc_error_passes_unchanged(mode: str) -> None:
    async def refuse(params: ElicitRequestFormParams) -> Any:
        raise JSONRPCError(-1, "User rejected the form")

    async def unused(params: CreateMessageRequestParams) -> Any:
        raise AssertionError

    async with Client(build(), mode=mode, elicitation=refuse, sampling=unused) as client:
        with pytest.raises(JSONRPCError) as err:
            await client.call_tool("ask")
    assert err.value.code == -1
    assert err.value.message == "User rejected the form"


@pytest.mark.parametrize("mode", MODES)
async def test_two_argument_and_plain_def_progress_callbacks_are_called(mode: str) -> None:
    # Both used to fail at every notification (a TypeError in the client log, nothing
    # delivered): a (progress, total) callback got the params dict alone, and a plain
    # def's None was awaited.
    two: list[tuple[float, float | None]] = []
    plain: list[tuple[float, float | None, str | None]] = []

    async def on_two(progress: float, total: float | None) -> None:
        two.append((progress, total))

    def on_plain(progress: float, total: float | None, message: str | None) -> None:
        plain.append((progress, total, message))

    async with Client(build(), mode=mode) as client:
        await client.call_tool("slow", on_progress=on_two)
        await client.call_tool("slow", on_progress=on_plain)
        with pytest.raises(TypeError, match="takes no positional argument"):
            await client.call_tool("slow", on_progress=lambda: None)  # type: ignore[arg-type]
    assert two == [(1, 3), (2, None), (3, 3)]
    assert plain == [(1, 3, "one"), (2, None, None), (3, 3, "done")]
