"""Handler failures (issue 13 §3): logged with their traceback and an error id on the
server, generic (with the same id) for the client, on every handler kind and both eras;
``ToolError`` and argument errors still reach the client; ``expose_errors=True`` turns
the details back on; ``configure_logging`` and ``Server.run``'s logging rule."""

from __future__ import annotations

import io
import logging
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dx_helpers import ERAS, Era, ask
from http_helpers import body_of, headers, initialize, mcp_http, modern_headers, modern_meta
from peer import Peer, connect

from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.server import Context, Server, ToolError, configure_logging
from mcpkit.server.logs import LOG_FORMAT

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
SECRET = "db password is hunter2"
ERROR_ID = re.compile(r"error id ([0-9a-f]{8})")


def failing_server(*, expose_errors: bool = False) -> Server:
    server = Server("failing", expose_errors=expose_errors)

    @server.tool
    def crash() -> str:
        raise RuntimeError(SECRET)

    @server.tool
    def refuse() -> str:
        raise ToolError("the printer is on fire")

    @server.tool
    def typed(n: int) -> str:
        return str(n)

    @server.prompt
    def bad_prompt() -> str:
        raise RuntimeError(SECRET)

    @server.prompt
    def refusing_prompt() -> str:
        raise ToolError("no such greeting today")

    @server.resource("mem://broken")
    def broken() -> str:
        raise RuntimeError(SECRET)

    @server.resource("mem://item/{n}")
    def item(n: int) -> str:
        return str(n)

    @server.completion(prompt="bad_prompt")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        raise RuntimeError(SECRET)

    async def custom(ctx: Context) -> JSON:
        raise RuntimeError(SECRET)

    server.add_method("example.com/custom", custom)
    return server


def failure_id(message: str, caplog: pytest.LogCaptureFixture, what: str) -> str:
    """The error id in ``message``, checked against the one ERROR record logged for it."""
    assert SECRET not in message
    found = ERROR_ID.search(message)
    assert found is not None, message
    records = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert len(records) == 1
    record = records[0]
    assert record.name == "mcpkit.server"
    assert record.levelno == logging.ERROR
    assert what in record.getMessage()
    assert record.exc_info is not None
    assert SECRET in str(record.exc_info[1])
    return found.group(1)


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    async with connect(failing_server()) as p:
        yield p


@pytest.mark.parametrize("era", ERAS)
async def test_a_crashing_tool_answers_an_error_id_not_its_text(
    peer: Peer, era: Era, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit")
    result = await ask(peer, era, "tools/call", name="crash", arguments={})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "'crash'" in text
    failure_id(text, caplog, "Tool 'crash'")


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("method", "params", "what"),
    [
        ("prompts/get", {"name": "bad_prompt"}, "prompts/get"),
        ("resources/read", {"uri": "mem://broken"}, "resources/read"),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "bad_prompt"},
                "argument": {"name": "x", "value": ""},
            },
            "completion/complete",
        ),
        ("example.com/custom", {}, "example.com/custom"),
    ],
)
async def test_every_other_handler_kind_answers_internal_error_with_an_id(
    peer: Peer,
    era: Era,
    method: str,
    params: JSON,
    what: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit")
    with pytest.raises(JSONRPCError) as failed:
        await ask(peer, era, method, **params)
    assert failed.value.code == INTERNAL_ERROR
    failure_id(failed.value.message, caplog, what)


@pytest.mark.parametrize("era", ERAS)
async def test_an_extension_middleware_that_raises_is_reported_the_same_way(
    era: Era, caplog: pytest.LogCaptureFixture
) -> None:
    server = failing_server()

    async def faulty(ctx: Context, call_next: Any) -> JSON:
        if ctx.method == "tools/list":
            raise RuntimeError(SECRET)
        return await call_next(ctx)

    server.add_middleware(faulty)
    caplog.set_level(logging.ERROR, "mcpkit")
    async with connect(server) as p:
        with pytest.raises(JSONRPCError) as failed:
            await ask(p, era, "tools/list")
    assert failed.value.code == INTERNAL_ERROR
    failure_id(failed.value.message, caplog, "tools/list")


@pytest.mark.parametrize("era", ERAS)
async def test_tool_error_and_argument_errors_still_reach_the_client(peer: Peer, era: Era) -> None:
    refused = await ask(peer, era, "tools/call", name="refuse", arguments={})
    assert refused["content"] == [{"type": "text", "text": "the printer is on fire"}]
    assert refused["isError"] is True
    invalid = await ask(peer, era, "tools/call", name="typed", arguments={"n": "many"})
    assert invalid["isError"] is True  # SEP-1303: a tool execution error the model sees
    assert "n:" in invalid["content"][0]["text"]
    assert "many" in invalid["content"][0]["text"]
    with pytest.raises(JSONRPCError) as prompt_refused:
        await ask(peer, era, "prompts/get", name="refusing_prompt")
    assert prompt_refused.value.code == INTERNAL_ERROR
    assert prompt_refused.value.message == "no such greeting today"


@pytest.mark.parametrize("era", ERAS)
async def test_a_template_variable_of_the_wrong_type_is_invalid_params(
    peer: Peer, era: Era
) -> None:
    """It was an internal error; the message names the variable."""
    with pytest.raises(JSONRPCError) as bad:
        await ask(peer, era, "resources/read", uri="mem://item/seven")
    assert bad.value.code == INVALID_PARAMS
    assert "n:" in bad.value.message
    assert (await ask(peer, era, "resources/read", uri="mem://item/7"))["contents"][0][
        "text"
    ] == "7"


@pytest.mark.parametrize("era", ERAS)
async def test_expose_errors_sends_the_type_and_text(
    era: Era, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit")
    async with connect(failing_server(expose_errors=True)) as p:
        result = await ask(p, era, "tools/call", name="crash", arguments={})
        with pytest.raises(JSONRPCError) as failed:
            await ask(p, era, "resources/read", uri="mem://broken")
    text = result["content"][0]["text"]
    assert f"RuntimeError: {SECRET}" in text
    assert ERROR_ID.search(text) is not None
    assert f"RuntimeError: {SECRET}" in failed.value.message


async def test_over_http_the_client_gets_the_id_and_not_the_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit")
    async with mcp_http(failing_server()) as (client, url, _):
        sid = await initialize(client, url)
        legacy = await client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "prompts/get",
                "params": {"name": "bad_prompt"},
            },
            headers=headers(sid, mcp_protocol_version="2025-11-25"),
        )
        modern = await client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "crash", "arguments": {}, "_meta": modern_meta()},
            },
            headers=modern_headers("tools/call", "crash"),
        )
    error = body_of(legacy)["error"]
    assert error["code"] == INTERNAL_ERROR
    failure_id(error["message"], caplog, "prompts/get")
    result = body_of(modern)["result"]
    assert result["isError"] is True
    failure_id(result["content"][0]["text"], caplog, "Tool 'crash'")


# -- configure_logging ------------------------------------------------------------------


@pytest.fixture
def clean_mcpkit_logger() -> Any:
    """The ``mcpkit`` logger without handlers, restored afterwards."""
    log = logging.getLogger("mcpkit")
    saved = (log.handlers[:], log.level)
    log.handlers.clear()
    yield log
    log.handlers[:] = saved[0]
    log.setLevel(saved[1])


def test_configure_logging_installs_one_stderr_handler(
    clean_mcpkit_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    err, out = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    configure_logging("debug")
    configure_logging("WARNING")
    configure_logging(logging.INFO)
    assert len(clean_mcpkit_logger.handlers) == 1
    assert clean_mcpkit_logger.level == logging.INFO
    logging.getLogger("mcpkit.server").info("visible %s", "line")
    logging.getLogger("mcpkit.server").debug("hidden")
    assert out.getvalue() == ""
    assert "INFO" in err.getvalue()
    assert "mcpkit.server: visible line" in err.getvalue()
    assert "hidden" not in err.getvalue()
    assert LOG_FORMAT.startswith("%(asctime)s")
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("chatty")


RUN_SCRIPT = """
import logging, sys
from mcpkit.server import Server
if sys.argv[1] == "configured":
    logging.basicConfig(level=logging.WARNING)
Server("s").run()  # stdin is empty: serving ends at once
handlers = logging.getLogger("mcpkit").handlers
print(len(handlers), [type(h).__name__ for h in handlers])
"""


@pytest.mark.parametrize(("mode", "expected"), [("plain", "1"), ("configured", "0")])
def test_run_configures_logging_only_when_nobody_did(mode: str, expected: str) -> None:
    """``Server.run`` installs the stderr handler unless the application configured
    logging first (``logs`` rule 2); nothing goes to stdout but the protocol."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, mode],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split(" ", 1)[0] == expected, (done.stdout, done.stderr)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("annotated", [True, False])
async def test_a_return_value_that_cannot_be_sent_is_a_tool_error_with_an_id(
    era: Era, annotated: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # Bytes that are not UTF-8 fail while the result is built, after the tool returned:
    # that used to escape as a -32603 protocol error instead of the tool's own error.
    caplog.set_level(logging.ERROR, "mcpkit")
    server = Server("binary")

    def picture() -> dict[str, bytes]:
        return {"png": b"\x89PNG\xff"}

    if not annotated:
        del picture.__annotations__["return"]
    server.add_tool(picture)
    async with connect(server) as p:
        result = await ask(p, era, "tools/call", name="picture", arguments={})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "Tool 'picture' result failed with an internal error" in text
    found = ERROR_ID.search(text)
    assert found is not None, text
    records = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert len(records) == 1
    assert records[0].levelno == logging.ERROR
    assert records[0].exc_info is not None


@pytest.mark.parametrize("transport", ["sse", "stdi", "websocket"])
def test_run_refuses_an_unknown_transport_before_serving(transport: str) -> None:
    # It used to serve Streamable HTTP for any transport but "stdio" (a typo'd "stdi"
    # started an HTTP server). The port is held so that serving could not succeed.
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(ValueError, match=rf"unknown transport '{transport}'; use 'stdio'"):
            Server("s").run(transport, host="127.0.0.1", port=port)  # type: ignore[arg-type]
