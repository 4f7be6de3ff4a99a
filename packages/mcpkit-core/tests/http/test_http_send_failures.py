"""Send failures and server-side cancellation at the ASGI boundary (issue 11 §7): an SSE
response whose send fails in any way ends quietly (``sse`` rule 5), and a request task
that uvicorn cancels after its graceful-shutdown timeout is not an "Exception in ASGI
application" (``endpoint`` rule 5)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx2
import pytest
from http_helpers import headers, initialize, request, serve

from mcpkit.server import Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.http import http_app
from mcpkit.server.http.sse import Sink

pytestmark = pytest.mark.anyio


class BrokenSend:
    """An ASGI ``send`` that accepts ``ok`` messages, then raises ``error``."""

    def __init__(self, ok: int, error: Exception) -> None:
        self.ok = ok
        self.error = error
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        if len(self.sent) >= self.ok:
            raise self.error
        self.sent.append(message)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("Unexpected ASGI message 'http.response.body' sent"),
        anyio.BrokenResourceError(),
        ConnectionResetError("peer reset"),
    ],
)
@pytest.mark.parametrize("hold", [False, True])
async def test_a_failing_send_ends_the_sink_without_raising(
    error: Exception, hold: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # Regression: only OSError was handled in write() and end(); a RuntimeError or a
    # broken anyio stream was raised into the handler and out of the ASGI app.
    send = BrokenSend(1, error)
    sink = Sink(send)
    with caplog.at_level(logging.DEBUG, logger="mcpkit.server.http"):
        await sink.start(hold=hold)
        await sink.write(b"data: 1\n\n")
        await anyio.sleep(0.05)  # a held start is flushed from a task (sse rule 4)
        await sink.write(b"data: 2\n\n")
        await sink.end()
        with anyio.fail_after(5):
            await sink.done.wait()
    assert sink.ended
    assert send.sent[0]["type"] == "http.response.start"
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == (1 if isinstance(error, RuntimeError) else 0)


async def test_uvicorn_cancelling_a_slow_handler_at_shutdown_logs_no_asgi_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A tool whose cancellation cleanup outlives both the endpoint's grace and uvicorn's
    # timeout_graceful_shutdown: uvicorn cancels the request task itself.
    server: Server = build_demo_server()
    started = anyio.Event()

    @server.tool()
    async def stubborn() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(2.5)
        return "never"  # pragma: no cover

    app = http_app(server, shutdown_grace_s=0.1)
    answers: list[httpx2.Response | httpx2.HTTPError] = []
    with caplog.at_level(logging.INFO):
        async with (
            httpx2.AsyncClient(timeout=20) as client,
            anyio.create_task_group() as tg,
            serve(app, log_level="info", timeout_graceful_shutdown=1) as base,
        ):
            url = base + "/mcp"
            sid = await initialize(client, url)

            async def call() -> None:
                body = request(2, "tools/call", {"name": "stubborn"})
                try:
                    answers.append(await client.post(url, json=body, headers=headers(sid)))
                except httpx2.HTTPError as exc:
                    answers.append(exc)

            tg.start_soon(call)
            with anyio.fail_after(10):
                await started.wait()
        # leaving serve() stopped uvicorn, which cancelled the request task itself
    assert len(answers) == 1
    assert "timeout graceful shutdown exceeded" in caplog.text  # uvicorn did cancel it
    assert "Exception in ASGI application" not in caplog.text
    assert "CancelledError" not in caplog.text
    assert "cancelled by the ASGI server" in caplog.text
