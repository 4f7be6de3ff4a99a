"""The 2025-11-25 experimental tasks (frozen surface) on handshake-era sessions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from helpers import connect, poll

from mcpkit.client.middleware import IncomingMessage
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.tasks import EXTENSION_ID, InMemoryTaskStore, Tasks
from mcpkit.ext.tasks.demo import register
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
RELATED = "io.modelcontextprotocol/related-task"


async def accept_all(params: Any) -> JSON:
    return {"action": "accept", "content": {"confirm": True, "name": "Ada"}}


async def test_initialize_declares_the_tasks_capability_only_on_2025(tasks_server: Server) -> None:
    async with connect(tasks_server, mode="legacy") as old:
        legacy_caps = old.server_capabilities
    async with connect(tasks_server) as new:
        modern_caps = (await new.session.request("server/discover"))["capabilities"]
    assert legacy_caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "tasks" not in modern_caps


async def test_task_augmented_call_then_get_and_result(tasks_server: Server) -> None:
    async with connect(tasks_server, mode="legacy") as client:
        s = client.session
        created = await s.request(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "v1"}, "task": {}},
        )
        task = created["task"]
        got = await s.request("tasks/get", {"taskId": task["taskId"]})
        result = await s.request("tasks/result", {"taskId": task["taskId"]})
        done = await s.request("tasks/get", {"taskId": task["taskId"]})
    assert task["status"] == "working"
    assert task["ttl"] == 3_600_000
    assert task["pollInterval"] == 200
    assert "ttlMs" not in task
    assert "resultType" not in created
    assert got["taskId"] == task["taskId"]
    assert "result" not in got
    assert result["content"] == [{"type": "text", "text": "v1: computed in 0.1s"}]
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert done["status"] == "completed"


async def test_requested_ttl_is_honoured_up_to_the_maximum() -> None:
    server = Server("ttl")
    tasks = Tasks(max_ttl_ms=10_000).install(server)

    @tasks.tool()
    async def job() -> str:
        return "ok"

    async with connect(server, mode="legacy") as client:
        short = await client.session.request("tools/call", {"name": "job", "task": {"ttl": 5}})
        long_ = await client.session.request("tools/call", {"name": "job", "task": {"ttl": 10**9}})
    assert short["task"]["ttl"] == 5
    assert long_["task"]["ttl"] == 10_000


async def test_tool_error_is_failed_on_2025_and_result_is_the_tool_result(
    tasks_server: Server,
) -> None:
    async with connect(tasks_server, mode="legacy") as client:
        s = client.session
        created = await s.request("tools/call", {"name": "failing_job", "task": {}})
        result = await s.request("tasks/result", {"taskId": created["task"]["taskId"]})
        task = await s.request("tasks/get", {"taskId": created["task"]["taskId"]})
    assert result["isError"] is True
    assert task["status"] == "failed"
    assert task["statusMessage"]


async def test_tasks_result_of_a_protocol_error_is_that_error(tasks_server: Server) -> None:
    async with connect(tasks_server, mode="legacy") as client:
        created = await client.session.request(
            "tools/call", {"name": "protocol_error_job", "task": {}}
        )
        with pytest.raises(JSONRPCError) as info:
            await client.session.request("tasks/result", {"taskId": created["task"]["taskId"]})
    assert info.value.code == -32603
    assert info.value.message == "protocol_error_job: simulated internal failure"


async def test_task_support_is_enforced_with_method_not_found(tasks_server: Server) -> None:
    async with connect(tasks_server, mode="legacy") as client:
        with pytest.raises(JSONRPCError) as required:
            await client.session.request("tools/call", {"name": "failing_job"})
        with pytest.raises(JSONRPCError) as forbidden:
            await client.session.request(
                "tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}}
            )
    assert required.value.code == -32601
    assert forbidden.value.code == -32601


async def test_cancel_returns_the_cancelled_task_and_refuses_terminal_ones(
    tasks_server: Server,
) -> None:
    async with connect(tasks_server, mode="legacy") as client:
        s = client.session
        created = await s.request(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 60, "label": "c"}, "task": {}},
        )
        tid = created["task"]["taskId"]
        cancelled = await s.request("tasks/cancel", {"taskId": tid})
        with pytest.raises(JSONRPCError) as again:
            await s.request("tasks/cancel", {"taskId": tid})
    assert cancelled["status"] == "cancelled"
    assert again.value.code == -32602
    assert "terminal" in again.value.message


async def test_tasks_list_pages_over_this_sessions_tasks_only() -> None:
    server = Server("list", page_size=2)
    tasks = Tasks().install(server)

    @tasks.tool()
    async def job() -> str:
        return "ok"

    async with connect(server, mode="legacy") as one, connect(server, mode="legacy") as two:
        mine = [
            (await one.session.request("tools/call", {"name": "job", "task": {}}))["task"]["taskId"]
            for _ in range(3)
        ]
        theirs = await two.session.request("tools/call", {"name": "job", "task": {}})
        page1 = await one.session.request("tasks/list")
        page2 = await one.session.request("tasks/list", {"cursor": page1["nextCursor"]})
        other = await two.session.request("tasks/list")
        with pytest.raises(JSONRPCError) as bad:
            await one.session.request("tasks/list", {"cursor": "forged"})
        with pytest.raises(JSONRPCError) as foreign:
            await one.session.request("tasks/get", {"taskId": theirs["task"]["taskId"]})
    assert [t["taskId"] for t in page1["tasks"] + page2["tasks"]] == mine
    assert "nextCursor" not in page2
    assert [t["taskId"] for t in other["tasks"]] == [theirs["task"]["taskId"]]
    assert bad.value.code == -32602
    assert foreign.value.code == -32602


async def test_input_is_relayed_through_tasks_result_with_related_task_meta(
    tasks_server: Server,
) -> None:
    seen: list[JSON] = []

    async def capture(message: IncomingMessage, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if message.method == "elicitation/create":
            seen.append(dict(message.params or {}))
        return await call_next(message)

    async with connect(tasks_server, mode="legacy", elicitation=accept_all) as client:
        client.add_receive_middleware(capture)
        s = client.session
        created = await s.request(
            "tools/call", {"name": "confirm_delete", "arguments": {"filename": "f"}, "task": {}}
        )
        tid = created["task"]["taskId"]
        parked = await poll(s, tid, {"input_required"})
        result = await s.request("tasks/result", {"taskId": tid})
    assert parked["status"] == "input_required"
    assert result["content"][0]["text"] == "Deleted f"
    assert len(seen) == 1
    assert seen[0]["_meta"][RELATED] == {"taskId": tid}


async def test_status_and_progress_notifications_reach_the_creating_session(
    tasks_server: Server,
) -> None:
    statuses: list[JSON] = []
    progress: list[JSON] = []

    async def on_status(params: JSON | None) -> None:
        statuses.append(params or {})

    async def on_progress(params: JSON) -> None:
        return None

    async def capture(message: IncomingMessage, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if message.method == "notifications/progress":  # after the call: outlives the request
            progress.append(dict(message.params or {}))
        return await call_next(message)

    async with connect(tasks_server, mode="legacy") as client:
        client.add_notification_handler("notifications/tasks/status", on_status)
        client.add_receive_middleware(capture)
        created = await client.session.request(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "n"}, "task": {}},
            on_progress=on_progress,
            progress_token="tok-1",
        )
        tid = created["task"]["taskId"]
        with anyio.fail_after(10):
            while not any(s.get("status") == "completed" for s in statuses):
                await anyio.sleep(0.02)
    assert all(s["taskId"] == tid for s in statuses)
    assert "ttl" in statuses[-1]
    assert progress, "progress with the original token reaches the session"
    assert {p["progressToken"] for p in progress} == {"tok-1"}
    assert all(p["_meta"][RELATED] == {"taskId": tid} for p in progress)


async def test_each_surface_installs_independently_over_one_store() -> None:
    store = InMemoryTaskStore()
    v1_only, v2_only, both = Server("v1"), Server("v2"), Server("both")
    register(v1_only, Tasks(store, modern=False).install(v1_only))
    register(v2_only, Tasks(store, legacy=False).install(v2_only))
    register(both, Tasks(store, modern=False).install(both))
    Tasks(store, legacy=False).install(both)

    async with connect(v1_only) as new:
        caps = (await new.session.request("server/discover"))["capabilities"]
        with pytest.raises(JSONRPCError) as gone:
            await new.session.request("tasks/get", {"taskId": "x"})
    assert EXTENSION_ID not in caps.get("extensions", {})
    assert gone.value.code == -32601

    async with connect(v2_only, mode="legacy") as old:
        assert "tasks" not in old.server_capabilities
        sync = await old.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
        )
    assert "task" not in sync
    assert sync["content"]

    async with connect(both, mode="legacy") as old, connect(both) as new:
        legacy_task = await old.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
        )
        modern_task = await new.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}
        )
        legacy_done = await old.session.request(
            "tasks/result", {"taskId": legacy_task["task"]["taskId"]}
        )
        modern_done = await poll(new.session, modern_task["taskId"])
    assert legacy_done["content"]
    assert modern_done["status"] == "completed"
    assert len(store) == 2
