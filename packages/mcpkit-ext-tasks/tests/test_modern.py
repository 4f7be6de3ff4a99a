"""The 2026-07-28 tasks extension on the wire (SEP-2663), through the in-memory client."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from helpers import TERMINAL, Endless, connect, poll

from mcpkit.core import Stability
from mcpkit.core.engine import InboundRequest
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext import tasks
from mcpkit.ext.tasks import EXTENSION_ID, InMemoryTaskStore, Tasks, begin, current_task
from mcpkit.ext.tasks.demo import build_server
from mcpkit.server.app import Server
from mcpkit.server.context import Context
from mcpkit.server.frontend import handle_modern

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
ENVELOPE = ("taskId", "status", "result", "error", "inputRequests")


async def test_extension_is_advertised_with_no_settings_and_no_tasks_capability(
    tasks_server: Server,
) -> None:
    async with connect(tasks_server) as client:
        discovered = await client.session.request("server/discover")
        caps = discovered["capabilities"]
        read_back = client.server_extension(EXTENSION_ID)
        assert tasks.server_supports(client)
    # SEP-2663: "No extension-specific settings are currently defined; an empty object
    # indicates support" (the official TypeScript tasks client accepts only {}); the
    # version and stability travel beside it, in the result's _meta under our key
    assert caps["extensions"][EXTENSION_ID] == {}
    about = {"specVersion": "2026-07-28", "stability": "experimental"}
    assert discovered["_meta"]["io.mcpkit/extensions"] == {EXTENSION_ID: about}
    assert read_back is not None
    assert dict(read_back.config) == {}
    assert read_back.stability is Stability.EXPERIMENTAL
    assert read_back.spec_version == "2026-07-28"
    assert "tasks" not in caps


async def test_the_extension_is_not_advertised_to_handshake_era_sessions(
    tasks_server: Server,
) -> None:
    """Issue 11 §8: tasks/update is -32601 on the handshake era, so the v2 entry must
    not be there; the 2025-11-25 tasks capability still is."""
    for version in ("2025-11-25", "2025-06-18"):
        async with connect(tasks_server, mode="legacy", protocol_version=version) as old:
            caps = old.server_capabilities
            assert not tasks.server_supports(old)
            assert old.server_extension(EXTENSION_ID) is None
            with pytest.raises(JSONRPCError) as missing:
                await old.session.request("tasks/update", {"taskId": "x", "inputResponses": {}})
        assert EXTENSION_ID not in caps.get("extensions", {}), version
        assert missing.value.code == -32601
        assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


@pytest.mark.parametrize("declared", [True, False])
async def test_client_supports_is_the_typed_negotiation_check(declared: bool) -> None:
    server = Server("helper")
    seen: list[bool] = []

    @server.tool()
    async def probe(ctx: Context) -> str:
        seen.append(tasks.client_supports(ctx))
        return "ok"

    async with connect(server, declare=declared) as client:
        await client.call_tool("probe", {})
    async with connect(server, mode="legacy", declare=declared) as client:
        await client.call_tool("probe", {})
    assert seen == [declared, declared]


async def test_sync_only_tool_answers_synchronously(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        result = await client.session.request(
            "tools/call", {"name": "greet", "arguments": {"name": "World"}}
        )
    assert result["resultType"] == "complete"
    assert "taskId" not in result
    assert result["content"] == [{"type": "text", "text": "Hello, World!"}]


async def test_create_task_result_is_flat_and_readable_at_once(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 5, "label": "a"}}
        )
        task = await s.request("tasks/get", {"taskId": created["taskId"]})
        await s.request("tasks/cancel", {"taskId": created["taskId"]})
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert isinstance(created["ttlMs"], int)
    assert created["ttlMs"] > 0
    assert isinstance(created["pollIntervalMs"], int)
    assert created["pollIntervalMs"] > 0
    assert created["createdAt"].endswith("Z")
    assert created["lastUpdatedAt"].endswith("Z")
    for absent in ("task", "result", "error", "inputRequests", "requestState", "ttl"):
        assert absent not in created
    assert task["taskId"] == created["taskId"]
    assert task["resultType"] == "complete"
    assert task["status"] == "working"


async def test_completed_task_inlines_the_tool_result(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "b"}}
        )
        task = await poll(s, created["taskId"])
    assert task["status"] == "completed"
    assert task["result"]["content"] == [{"type": "text", "text": "b: computed in 0.1s"}]
    assert "io.modelcontextprotocol/related-task" not in task["result"].get("_meta", {})
    assert "error" not in task
    assert "inputRequests" not in task


async def test_tool_error_is_completed_with_is_error(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        created = await client.session.request("tools/call", {"name": "failing_job"})
        task = await poll(client.session, created["taskId"])
    assert task["status"] == "completed"
    assert task["result"]["isError"] is True


async def test_protocol_error_is_failed_with_the_error_and_no_result(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        created = await client.session.request("tools/call", {"name": "protocol_error_job"})
        task = await poll(client.session, created["taskId"])
    assert task["status"] == "failed"
    assert task["error"] == {
        "code": -32603,
        "message": "protocol_error_job: simulated internal failure",
    }
    assert "result" not in task


async def test_task_only_tool_without_the_extension_is_32021(tasks_server: Server) -> None:
    async with connect(tasks_server, declare=False) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.session.request("tools/call", {"name": "failing_job"})
    assert info.value.code == -32021
    assert info.value.data == {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}}


async def test_per_request_declaration_decides_task_creation(tasks_server: Server) -> None:
    args = {"name": "slow_compute", "arguments": {"seconds": 0, "label": "c"}}
    async with connect(tasks_server, declare=False) as client:
        sync = await client.session.request("tools/call", args)
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
        }
        task = await client.session.request("tools/call", {**args, "_meta": meta}, envelope=False)
    assert sync["resultType"] == "complete"
    assert sync["content"] == [{"type": "text", "text": "c: computed in 0s"}]
    assert "taskId" not in sync
    assert task["resultType"] == "task"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {"taskId": "gate-test"}),
        ("tasks/update", {"taskId": "gate-test", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "gate-test"}),
    ],
)
async def test_tasks_methods_without_the_extension_are_32021(
    tasks_server: Server, method: str, params: JSON
) -> None:
    async with connect(tasks_server, declare=False) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.session.request(method, params)
    assert info.value.code == -32021


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_unknown_task_id_is_32602(tasks_server: Server, method: str) -> None:
    async with connect(tasks_server) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.session.request(
                method, {"taskId": "tasks-conformance-nonexistent-12345", "inputResponses": {}}
            )
    assert info.value.code == -32602


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_removed_v1_methods_are_method_not_found(tasks_server: Server, method: str) -> None:
    async with connect(tasks_server) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.session.request(method, {"taskId": "x"})
    assert info.value.code == -32601


async def test_cancel_acks_empty_stops_the_tool_and_is_idempotent() -> None:
    endless = Endless()
    async with connect(endless.server) as client:
        s = client.session
        created = await s.request("tools/call", {"name": "forever"})
        ack = await s.request("tasks/cancel", {"taskId": created["taskId"]})
        with anyio.fail_after(5):
            await endless.stopped.wait()
        task = await poll(s, created["taskId"])
        again = await s.request("tasks/cancel", {"taskId": created["taskId"]})
    for answer in (ack, again):
        assert answer["resultType"] == "complete"
        assert not any(k in answer for k in ENVELOPE)
    assert task["status"] == "cancelled"


async def test_input_required_then_update_resumes_and_unknown_keys_are_ignored(
    tasks_server: Server,
) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request(
            "tools/call", {"name": "confirm_delete", "arguments": {"filename": "x.txt"}}
        )
        parked = await poll(s, created["taskId"], {"input_required"})
        (key, request), *_ = parked["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        ignored = await s.request(
            "tasks/update",
            {"taskId": created["taskId"], "inputResponses": {"unknown-key": {"ignored": True}}},
        )
        still = await s.request("tasks/get", {"taskId": created["taskId"]})
        ack = await s.request(
            "tasks/update",
            {
                "taskId": created["taskId"],
                "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            },
        )
        done = await poll(s, created["taskId"])
    assert ignored["resultType"] == ack["resultType"] == "complete"
    assert not any(k in ack for k in ENVELOPE)
    assert still["status"] == "input_required"
    assert "requestState" not in parked
    assert done["result"]["content"][0]["text"] == "Deleted x.txt"


async def test_partial_fulfillment_keeps_the_task_waiting(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request("tools/call", {"name": "multi_input"})
        tid = created["taskId"]
        parked = await poll(s, tid, {"input_required"})
        first, second = sorted(parked["inputRequests"])
        answer = {"action": "accept", "content": {"name": "partial-1", "confirm": True}}
        await s.request("tasks/update", {"taskId": tid, "inputResponses": {first: answer}})
        half = await s.request("tasks/get", {"taskId": tid})
        await s.request("tasks/update", {"taskId": tid, "inputResponses": {second: answer}})
        done = await poll(s, tid)
    assert half["status"] == "input_required"
    assert set(half["inputRequests"]) == {second}
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "name=partial-1, confirm=True"


async def test_mrtr_rounds_run_before_the_task_is_created(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        first = await s.request("tools/call", {"name": "test_tool_with_task"})
        second = await s.request(
            "tools/call",
            {
                "name": "test_tool_with_task",
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
                "requestState": first["requestState"],
            },
        )
        done = await poll(s, second["taskId"])
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    assert set(first["inputRequests"]) == {"user_name"}
    assert second["resultType"] == "task"
    assert "requestState" not in second
    assert "inputRequests" not in second
    assert "Alice" in done["result"]["content"][0]["text"]


async def test_one_tool_serves_both_paths_and_sees_its_task() -> None:
    server = Server("both")
    tasks = Tasks().install(server)
    seen: list[str | None] = []

    @tasks.tool(task_support="optional", preamble=True)
    async def maybe(ctx: Context, finish_early: bool = False) -> str:
        if finish_early:
            return "early"
        handle = await begin(ctx)
        seen.append(handle.task_id if handle else None)
        current = current_task(ctx)
        if current is not None:
            await current.set_status("in the task")
        return "late"

    async with connect(server) as declaring, connect(server, declare=False) as plain:
        early = await declaring.session.request(
            "tools/call", {"name": "maybe", "arguments": {"finish_early": True}}
        )
        sync = await plain.session.request("tools/call", {"name": "maybe"})
        created = await declaring.session.request("tools/call", {"name": "maybe"})
        done = await poll(declaring.session, created["taskId"])
    assert early["resultType"] == "complete"
    assert early["content"][0]["text"] == "early"
    assert sync["content"][0]["text"] == "late"
    assert seen == [None, created["taskId"]]
    assert done["result"]["content"][0]["text"] == "late"


async def test_progress_inside_a_task_becomes_the_status_message(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30, "label": "p"}}
        )
        with anyio.fail_after(10):
            while True:
                task = await s.request("tasks/get", {"taskId": created["taskId"]})
                if task.get("statusMessage"):
                    break
                await anyio.sleep(0.02)
        await s.request("tasks/cancel", {"taskId": created["taskId"]})
    assert task["statusMessage"].endswith("/300: p: working")


async def test_another_principal_cannot_read_update_or_cancel_a_task(tasks_server: Server) -> None:
    async with (
        connect(tasks_server, principal="alice") as alice,
        connect(tasks_server, principal="mallory") as mallory,
    ):
        created = await alice.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30, "label": "s"}}
        )
        tid = created["taskId"]
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            with pytest.raises(JSONRPCError) as info:
                await mallory.session.request(method, {"taskId": tid, "inputResponses": {}})
            assert info.value.code == -32602
        task = await alice.session.request("tasks/get", {"taskId": tid})
        await alice.session.request("tasks/cancel", {"taskId": tid})
    assert task["status"] == "working"


async def test_legacy_task_param_is_ignored_on_2026(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        result = await client.session.request(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"name": "legacy-hint"},
                "task": {"ttl": 60000, "pollInterval": 100},
            },
        )
    assert result["resultType"] == "complete"
    assert "taskId" not in result
    assert "task" not in result


async def test_listen_streams_notifications_for_listed_own_tasks_only(
    tasks_server: Server,
) -> None:
    async with (
        connect(tasks_server, principal="alice") as alice,
        connect(tasks_server, principal="mallory") as mallory,
    ):
        mine = await alice.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "n"}}
        )
        other = await alice.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "o"}}
        )
        wanted = [mine["taskId"], other["taskId"]]
        async with (
            alice.listen(extra={"taskIds": [mine["taskId"]]}) as sub,
            mallory.listen(extra={"taskIds": wanted}) as spy,
        ):
            assert sub.acknowledged == {"taskIds": [mine["taskId"]]}
            statuses: list[JSON] = []
            with anyio.fail_after(10):
                async for note in sub:
                    assert note.method == "notifications/tasks"
                    statuses.append(note.params)
                    if note.params["status"] in TERMINAL:
                        break
            with anyio.move_on_after(0.3):
                async for note in spy:
                    pytest.fail(f"another principal's task leaked: {note}")
    assert {s["taskId"] for s in statuses} == {mine["taskId"]}
    assert statuses[-1]["status"] == "completed"
    assert statuses[-1]["result"]["content"][0]["text"] == "n: computed in 0.2s"


async def test_listen_for_task_ids_without_the_extension_is_32021(tasks_server: Server) -> None:
    async with connect(tasks_server, declare=False) as client:
        with pytest.raises(JSONRPCError) as info:
            async with client.listen(extra={"taskIds": ["x"]}):
                pass
    assert info.value.code == -32021


async def test_expired_task_is_gone_and_its_runner_stops() -> None:
    now = [1_000_000.0]
    store = InMemoryTaskStore(clock=lambda: now[0])
    endless = Endless(store, ttl_ms=1_000, watch_interval_s=0.05)
    async with connect(endless.server) as client:
        created = await client.session.request("tools/call", {"name": "forever"})
        now[0] += 2
        with pytest.raises(JSONRPCError) as info:
            await client.session.request("tasks/get", {"taskId": created["taskId"]})
        with anyio.fail_after(5):
            await endless.stopped.wait()
    assert info.value.code == -32602
    assert len(store) == 0


async def test_a_task_waiting_for_input_stops_when_it_expires() -> None:
    now = [1_000_000.0]
    store = InMemoryTaskStore(clock=lambda: now[0])
    server = Server("ttl-input")
    tasks = Tasks(store, ttl_ms=1_000, watch_interval_s=0.05).install(server)
    stopped = anyio.Event()

    @tasks.tool(task_support="required")
    async def ask(ctx: Context) -> str:
        try:
            await ctx.elicit("Anything?", {"type": "object", "properties": {}})
        finally:
            stopped.set()
        return "answered"

    async with connect(server) as client:
        created = await client.session.request("tools/call", {"name": "ask"})
        parked = await poll(client.session, created["taskId"], {"input_required"})
        now[0] += 2
        with anyio.fail_after(5):
            await stopped.wait()
    assert parked["status"] == "input_required"
    assert len(store) == 0


async def test_unfinished_tasks_fail_when_the_server_stops() -> None:
    store = InMemoryTaskStore()
    server = build_server(store)
    async with connect(server) as client:
        created = await client.session.request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60, "label": "z"}}
        )
    record = await store.get(created["taskId"])
    assert record is not None
    assert record.status == "failed"
    assert record.error is not None
    assert record.error["code"] == -32603


class _Channel:
    async def notify(self, method: str, params: JSON | None) -> None:
        return None

    async def request(self, method: str, params: JSON | None, **options: Any) -> JSON:
        raise AssertionError("no requests expected")


async def test_task_creation_outside_the_server_lifespan_is_32603_not_an_orphan() -> None:
    store = InMemoryTaskStore()
    server = build_server(store)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
    }
    request = InboundRequest(1, "tools/call", {"name": "failing_job", "_meta": meta}, _Channel())
    with pytest.raises(JSONRPCError) as info:
        await handle_modern(server, request)
    assert info.value.code == -32603
    assert "lifespan" in info.value.message
    assert len(store) == 0
