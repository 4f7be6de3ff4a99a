"""The tasks extension through ``mcpkit.server.proxy``: its methods (``tasks/get``,
``tasks/update``, ``tasks/cancel`` ...), its result type and its capability entry are
unknown to the proxy and forwarded verbatim (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import connect

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.tasks import TaskClient, call_tool_as_task, enable_task_results
from mcpkit.ext.tasks.client import TaskState
from mcpkit.ext.tasks.demo import build_server
from mcpkit.server import proxy

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


async def test_a_task_result_cannot_cross_to_a_handshake_era_client() -> None:
    """The tasks extension is a 2026-07-28 one: its ``resultType: "task"`` has no
    handshake-era form, so the proxy answers an error naming it, never a result that
    silently lost its type."""
    front = proxy(build_server(), mode="modern")
    async with connect(front, mode="legacy", elicitation=answer) as client:
        assert "tasks" not in client.server_capabilities  # no 2025-11-25 tasks to offer
        with pytest.raises(JSONRPCError) as info:
            await client.request(
                "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "x"}}
            )
        assert info.value.code == -32603
        assert "resultType 'task'" in info.value.message
