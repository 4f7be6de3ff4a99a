"""``tasks/update`` answers are checked against the task's outstanding input requests
(issue 11 §5; ``mcpkit.ext.tasks.modern`` rule 6): a bad one is -32602 and is not stored,
so the task keeps waiting for a good one."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import connect, poll

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"action": "accept", "content": {"confirm": "yes"}}, "content.confirm"),
        ({"action": "accept", "content": "x"}, "content"),
        ({"roots": []}, "action: required field is missing"),
    ],
)
async def test_a_bad_answer_is_refused_and_the_task_keeps_waiting(
    tasks_server: Server, answer: JSON, problem: str
) -> None:
    async with connect(tasks_server) as client:
        s = client.session
        created = await s.request(
            "tools/call", {"name": "confirm_delete", "arguments": {"filename": "x.txt"}}
        )
        tid = created["taskId"]
        parked = await poll(s, tid, {"input_required"})
        (key, _), *_ = parked["inputRequests"].items()
        with pytest.raises(JSONRPCError) as err:
            await s.request("tasks/update", {"taskId": tid, "inputResponses": {key: answer}})
        still = await s.request("tasks/get", {"taskId": tid})
        good = {"action": "accept", "content": {"confirm": True}}
        await s.request("tasks/update", {"taskId": tid, "inputResponses": {key: good}})
        done = await poll(s, tid)
    assert err.value.code == INVALID_PARAMS
    assert err.value.data["inputKey"] == key
    assert any(problem in p for p in err.value.data["problems"])
    assert still["status"] == "input_required"
    assert key in still["inputRequests"]
    assert done["result"]["content"][0]["text"] == "Deleted x.txt"
