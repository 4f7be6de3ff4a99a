"""Tasks over real streamable HTTP: uvicorn on loopback in-process, and two spawned
server processes sharing one Redis store (create on one, read/answer/cancel on the other).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from helpers import TERMINAL, two_replicas

from mcpkit.client import Client
from mcpkit.ext.tasks import EXTENSION_ID, TaskClient, enable_task_results
from mcpkit.ext.tasks.client import TaskCancelledError
from mcpkit.ext.tasks.demo import build_server
from mcpkit.server import Server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]
JSON = dict[str, Any]


@contextlib.asynccontextmanager
async def serve_in_process(served: Server | None = None) -> AsyncIterator[str]:
    """``served`` (default: the tasks demo) under uvicorn on a free 127.0.0.1 port;
    yields the endpoint URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = (served or build_server()).http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


class Raw:
    """Hand-written 2026-07-28 POSTs, headers under the test's control."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.ids = 0

    async def post(self, method: str, params: JSON, headers: dict[str, str]) -> httpx2.Response:
        self.ids += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
        }
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        body["params"] = {**params, "_meta": meta}
        base = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
        }
        return await self.http.post(self.url, json=body, headers={**base, **headers})


async def test_tasks_methods_route_on_mcp_name_equal_to_the_task_id() -> None:
    async with serve_in_process() as url, httpx2.AsyncClient(timeout=10) as http:
        raw = Raw(http, url)
        args = {"name": "slow_compute", "arguments": {"seconds": 30, "label": "h"}}
        created = (await raw.post("tools/call", args, {"Mcp-Name": "slow_compute"})).json()
        tid = created["result"]["taskId"]
        good = await raw.post("tasks/get", {"taskId": tid}, {"Mcp-Name": tid})
        wrong = await raw.post("tasks/get", {"taskId": tid}, {"Mcp-Name": "another-task"})
        missing = await raw.post("tasks/get", {"taskId": tid}, {})
        cancel = await raw.post("tasks/cancel", {"taskId": tid}, {"Mcp-Name": tid})
    assert good.status_code == 200
    assert good.json()["result"]["taskId"] == tid
    for refused in (wrong, missing):
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32020
    assert cancel.json()["result"]["resultType"] == "complete"


async def test_client_over_http_waits_for_tasks_and_answers_their_input() -> None:
    async def elicit(params: Any) -> JSON:
        return {"action": "accept", "content": {"confirm": True, "name": "Http"}}

    async with serve_in_process() as url, Client(url, mode="modern", elicitation=elicit) as c:
        enable_task_results(c)
        slow = await c.call_tool("slow_compute", {"seconds": 0.1, "label": "h"})
        asked = await c.call_tool("confirm_delete", {"filename": "h.txt"})
        mrtr = await c.call_tool("test_tool_with_task")
    assert slow.content[0].text == "h: computed in 0.1s"  # type: ignore[union-attr]
    assert asked.content[0].text == "Deleted h.txt"  # type: ignore[union-attr]
    assert mrtr.content[0].text == "Hello, Http! (from a task)"  # type: ignore[union-attr]


async def _poll(tasks: TaskClient, task_id: str, until: set[str]) -> str:
    with anyio.fail_after(15):
        while True:
            status = (await tasks.get(task_id)).status
            if status in until or status in TERMINAL:
                return status
            await anyio.sleep(0.05)


async def test_two_processes_on_one_redis_serve_one_task(redis_url: str) -> None:
    async def elicit(params: Any) -> JSON:
        raise AssertionError("answered through tasks/update, by hand")

    with two_replicas(redis_url) as (one, two):
        async with (
            Client(one.url, mode="modern", elicitation=elicit) as a,
            Client(two.url, mode="modern", elicitation=elicit) as b,
        ):
            on_a, on_b = TaskClient(a), TaskClient(b)
            # created on A, finished result read on B
            quick = await on_a.call_tool("slow_compute", {"seconds": 0.2, "label": "ab"})
            result = await on_b.result(quick)
            # created on A, input answered on B, A's runner resumes
            asked = await on_a.call_tool("confirm_delete", {"filename": "x"})
            assert await _poll(on_b, asked["taskId"], {"input_required"}) == "input_required"
            state = await on_b.get(asked["taskId"])
            (key,) = state.input_requests
            await on_b.update(
                asked["taskId"], {key: {"action": "accept", "content": {"confirm": True}}}
            )
            answered = await on_a.result(asked)
            # created on A, cancelled on B, A's runner stops and the task ends cancelled
            slow = await on_a.call_tool("slow_compute", {"seconds": 60, "label": "c"})
            assert (await on_b.get(slow["taskId"])).status == "working"
            await on_b.cancel(slow["taskId"])
            with pytest.raises(TaskCancelledError):
                await on_a.result(slow)
            final = await on_a.get(slow["taskId"])
            # created and cancelled on A: a listener on B hears it through Redis
            watched = await on_a.call_tool("slow_compute", {"seconds": 60, "label": "w"})
            async with on_b.listen([watched["taskId"]]) as notes:
                await on_a.cancel(watched["taskId"])
                with anyio.fail_after(10):
                    async for note in notes:
                        if note.params["status"] in TERMINAL:
                            heard = note.params
                            break
    assert result["content"][0]["text"] == "ab: computed in 0.2s"
    assert answered["content"][0]["text"] == "Deleted x"
    assert final.status == "cancelled"
    assert heard["taskId"] == watched["taskId"]
    assert heard["status"] == "cancelled"
