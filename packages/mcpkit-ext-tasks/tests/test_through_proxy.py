"""The tasks extension through ``mcpkit.server.proxy``: its methods (``tasks/get``,
``tasks/update``, ``tasks/cancel`` ...), its result type and its capability entry are
unknown to the proxy and forwarded verbatim (issue 14)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from helpers import connect
from test_http import serve_in_process

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.tasks import EXTENSION_ID, TaskClient, call_tool_as_task, enable_task_results
from mcpkit.ext.tasks.client import TaskNotCreatedError, TaskState
from mcpkit.ext.tasks.demo import build_server
from mcpkit.proxy import proxy

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


async def answer(params: Any) -> JSON:
    return {"action": "accept", "content": {"confirm": True, "name": "Alice"}}


async def scenario(client: Any) -> list[Any]:
    """What a tasks client sees: a task made, waited for, one asking for input, and
    ``call_tool`` waiting for a task's result."""
    tasks = TaskClient(client)
    seen: list[Any] = [client.server_capabilities]
    created = await call_tool_as_task(client, "slow_compute", {"seconds": 0, "label": "p"})
    assert isinstance(created, TaskState)
    final = await tasks.wait(created.task_id)
    seen += [final.status, final.result]
    confirm = await tasks.call_tool("confirm_delete", {"filename": "a"})
    done = await tasks.wait(confirm)
    seen += [done.status, done.result]
    enable_task_results(client)
    r = await client.call_tool("slow_compute", {"seconds": 0.05, "label": "w"})
    seen.append(r.content[0].text)
    return seen


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_tasks_work_through_the_proxy_in_the_same_era(era: str) -> None:
    async with connect(build_server(), mode=era, elicitation=answer) as direct:
        want = await scenario(direct)
    front = proxy(build_server(), mode=era)  # type: ignore[arg-type]
    async with connect(front, mode=era, elicitation=answer) as client:
        got = await scenario(client)
    assert got == want
    assert got[-1] == "w: computed in 0.05s"
    assert got[1] == "completed"


async def test_a_task_result_never_reaches_a_handshake_era_client() -> None:
    """The tasks extension is a 2026-07-28 one: its ``resultType: "task"`` has no
    handshake-era form. Across the bridge the proxy neither advertises it to a
    handshake-era client nor declares it upstream on the client's behalf (issue 26;
    before, the upstream made a task and the client got -32603), so the upstream runs
    an ``optional`` tool at once and says a ``required`` one needs the extension."""
    front = proxy(build_server(), mode="modern")
    async with connect(front, mode="legacy", elicitation=answer) as client:
        assert "tasks" not in client.server_capabilities  # no 2025-11-25 tasks to offer
        assert EXTENSION_ID not in client.server_capabilities.get("extensions", {})
        done = await client.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "x"}}
        )
        assert done["content"][0]["text"] == "x: computed in 0s"
        with pytest.raises(JSONRPCError) as info:
            await client.request("tools/call", {"name": "failing_job", "arguments": {}})
        assert info.value.code == -32021
        assert EXTENSION_ID in info.value.data["requiredCapabilities"]["extensions"]


# -- issue 26: what a handshake-era client is shown matches what the proxy offers -------
def listed_support(tools: list[Any]) -> dict[str, str]:
    return {t.name: t.execution.task_support for t in tools if t.execution is not None}


async def test_a_handshake_era_client_sees_task_support_only_where_tasks_are_offered() -> None:
    """The default (adaptive) proxy reaches the dual-era demo in 2026-07-28, whose tasks
    cannot cross to the handshake era: no ``tasks`` capability, so no ``taskSupport``
    either (it was listed ``optional`` before). Pinned to the handshake era, both are
    forwarded as the upstream has them."""
    async with connect(proxy(build_server()), mode="legacy") as bridged:
        assert "tasks" not in bridged.server_capabilities
        assert listed_support(await bridged.list_tools()) == {}
    async with connect(proxy(build_server(), mode="legacy"), mode="legacy") as same:
        assert "call" in same.server_capabilities["tasks"]["requests"]["tools"]
        support = listed_support(await same.list_tools())
    assert support["slow_compute"] == "optional"
    assert support["failing_job"] == "required"
    async with connect(proxy(build_server()), mode="modern") as modern:  # rule 4: as is
        assert listed_support(await modern.list_tools())["slow_compute"] == "optional"


async def test_params_task_is_ignored_by_a_proxy_that_offers_no_tasks() -> None:
    """2025-11-25 tasks: a receiver without the capability processes the request
    normally, ignoring the task augmentation."""
    async with connect(proxy(build_server()), mode="legacy") as client:
        params = {"name": "slow_compute", "arguments": {"seconds": 0, "label": "t"}}
        result = await client.request("tools/call", {**params, "task": {}})
    assert "task" not in result
    assert result["content"][0]["text"] == "t: computed in 0s"


async def no_task_through_the_bridge(client: Any) -> None:
    """The issue's steps: a handshake-era ``TaskClient`` calls an ``optional`` tool
    through the default proxy, gets the tool's result at once, and is told so when it
    waits (before: "Method not found: tasks/get" over stdio, "Mcp-Name header is
    required for tasks/get" over HTTP)."""
    tasks = TaskClient(client)
    result = await tasks.call_tool("slow_compute", {"seconds": 0, "label": "b"})
    assert result["content"][0]["text"] == "b: computed in 0s"
    for waiting in (tasks.wait, tasks.result):
        with pytest.raises(TaskNotCreatedError) as told:
            await waiting(result)
        assert "without creating a task" in str(told.value)
        assert told.value.result == result


async def test_task_client_through_a_proxy_of_a_stdio_upstream_says_no_task_was_made() -> None:
    command = [sys.executable, "-m", "mcpkit.cli.main", "run", "mcpkit.ext.tasks.demo:build_server"]
    async with connect(proxy(command), mode="legacy", declare=False) as client:
        await no_task_through_the_bridge(client)


async def test_task_client_through_a_proxy_served_over_http_says_no_task_was_made() -> None:
    front = proxy(build_server())
    async with serve_in_process(front) as url, Client(url, mode="legacy", timeout_s=30) as client:
        await no_task_through_the_bridge(client)
