"""Client helpers: call allowing a task, poll, answer input, cancel, listen, and
``client.call_tool`` waiting for a task's result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from helpers import Endless, connect

from mcpkit.ext.tasks import TaskClient, call_tool_as_task, enable_task_results
from mcpkit.ext.tasks.client import (
    TaskCancelledError,
    TaskFailedError,
    TaskNotCreatedError,
    TaskState,
)
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


class Answers:
    """An elicitation handler that counts the questions it answered."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, params: Any) -> JSON:
        self.asked.append(params.message)
        return {"action": "accept", "content": {"confirm": True, "name": "Alice"}}


async def test_call_tool_as_task_gives_a_task_or_the_sync_result(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        task = await call_tool_as_task(client, "slow_compute", {"seconds": 0, "label": "t"})
        sync = await call_tool_as_task(client, "greet", {"name": "Bo"})
        assert isinstance(task, TaskState)
        await TaskClient(client).cancel(task.task_id)
    assert task.status == "working"
    assert task.poll_interval_ms == 200
    assert isinstance(sync, dict)
    assert sync["content"][0]["text"] == "Hello, Bo!"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_waiting_on_a_result_that_is_not_a_task_says_so(
    tasks_server: Server, era: str
) -> None:
    """Rule 6 (issue 26): the server answered at once; nothing is polled, and the error
    carries the answer (before: a tasks/get for task 'None')."""
    async with connect(tasks_server, mode=era) as client:
        tasks = TaskClient(client)
        sync = await tasks.call_tool("greet", {"name": "Bo"})
        for waiting in (tasks.wait, tasks.result):
            with pytest.raises(TaskNotCreatedError) as told:
                await waiting(sync)
            assert told.value.result == sync
            assert "the server answered without creating a task" in str(told.value)


async def test_wait_polls_to_the_end_answering_each_input_request_once(
    tasks_server: Server,
) -> None:
    answers = Answers()
    seen: list[str] = []
    async with connect(tasks_server, elicitation=answers) as client:
        tasks = TaskClient(client)
        created = await tasks.call_tool("confirm_delete", {"filename": "a"})
        final = await tasks.wait(created, on_status=lambda s: seen.append(s.status))
    assert final.status == "completed"
    assert final.result is not None
    assert final.result["content"][0]["text"] == "Deleted a"
    assert answers.asked == ["Delete a?"]
    assert seen[0] == "working"
    assert "input_required" in seen
    assert seen[-1] == "completed"


async def test_call_tool_waits_for_task_results_when_enabled(tasks_server: Server) -> None:
    answers = Answers()
    async with connect(tasks_server, elicitation=answers) as client:
        enable_task_results(client)
        mrtr_then_task = await client.call_tool("test_tool_with_task")
        job = await client.call_tool("slow_compute", {"seconds": 0.05, "label": "w"})
        tool_error = await client.call_tool("failing_job")
        with pytest.raises(TaskFailedError) as failed:
            await client.call_tool("protocol_error_job")
    assert mrtr_then_task.content[0].text == "Hello, Alice! (from a task)"  # type: ignore[union-attr]
    assert job.content[0].text == "w: computed in 0.05s"  # type: ignore[union-attr]
    assert tool_error.is_error is True
    assert failed.value.code == -32603
    assert answers.asked == ["What is your name?"]


async def test_a_cancelled_task_raises_for_the_waiting_caller() -> None:
    endless = Endless()
    async with connect(endless.server) as client:
        helper = TaskClient(client)
        created = await helper.call_tool("forever")
        outcome: list[BaseException] = []

        async def waiter() -> None:
            try:
                await helper.result(created)
            except TaskCancelledError as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            with anyio.fail_after(5):
                await endless.started.wait()
            await helper.cancel(created["taskId"])
    assert len(outcome) == 1
    assert isinstance(outcome[0], TaskCancelledError)


async def test_listen_yields_task_notifications(tasks_server: Server) -> None:
    async with connect(tasks_server) as client:
        helper = TaskClient(client)
        created = await helper.call_tool("slow_compute", {"seconds": 0.1, "label": "l"})
        states: list[TaskState] = []
        async with helper.listen([created["taskId"]]) as sub:
            with anyio.fail_after(10):
                async for note in sub:
                    states.append(TaskState.from_wire(note.params))
                    if states[-1].terminal:
                        break
    assert states[-1].status == "completed"
    assert states[-1].result is not None


async def test_helpers_drive_2025_tasks_too(tasks_server: Server) -> None:
    answers = Answers()
    async with connect(tasks_server, mode="legacy", elicitation=answers) as client:
        helper = TaskClient(client)
        created = await helper.call_tool("confirm_delete", {"filename": "old"})
        result = await helper.result(created)
        sync = await helper.call_tool("greet", {"name": "v1"})
    assert "task" in created
    assert result["content"][0]["text"] == "Deleted old"
    assert sync["content"][0]["text"] == "Hello, v1!"
    assert answers.asked == ["Delete old?"]


async def test_wait_on_2025_calls_tasks_result_to_receive_the_tasks_question(
    tasks_server: Server,
) -> None:
    """Regression (issue 11 §8): on 2025-11-25 an ``input_required`` task shows no
    ``inputRequests``; ``wait()`` polled forever and the question inside the task was
    never delivered. The spec: the requestor SHOULD call ``tasks/result`` then."""
    answers = Answers()
    seen: list[str] = []
    async with connect(tasks_server, mode="legacy", elicitation=answers) as client:
        helper = TaskClient(client)
        created = await helper.call_tool("confirm_delete", {"filename": "w"})
        with anyio.fail_after(10):
            final = await helper.wait(created, on_status=lambda s: seen.append(s.status))
        again = await helper.call_tool("multi_input")
        with anyio.fail_after(10):
            both = await helper.wait(again)
        result = await helper.result(again)
    assert "task" in created
    assert "input_required" in seen
    assert final.status == "completed"
    assert answers.asked[0] == "Delete w?"
    assert sorted(answers.asked[1:]) == ["Proceed?", "Your name?"]  # each asked once
    assert both.status == "completed"
    assert result["content"][0]["text"] == "name=Alice, confirm=True"
