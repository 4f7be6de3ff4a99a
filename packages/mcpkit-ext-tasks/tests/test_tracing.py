"""Trace context on task records (runtime rule 9, model rule 6; SEP-414): the record
keeps the creating request's context in memory and in Redis, the task's work runs with
it current and is reported to the server's tracer as work linked to it, and ``tasks/*``
requests about the task link to it."""

from __future__ import annotations

import contextlib
import itertools
import json
import uuid
from collections.abc import AsyncIterator, Generator
from typing import Any

import pytest
from helpers import connect, poll

from mcpkit.core import tracing
from mcpkit.core.tracing import TraceContext, TracedMessage
from mcpkit.ext.tasks import InMemoryTaskStore, Tasks, TaskStore
from mcpkit.ext.tasks.model import TaskRecord
from mcpkit.ext.tasks.redis_store import RedisTaskStore
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = TraceContext(f"00-{TRACE_ID}-00f067aa0ba902b7-01", "rojo=00f067aa0ba902b7", "k=v")


class Recorder:
    """A tracer giving every handled message (and task work) a span of its own."""

    def __init__(self) -> None:
        self.messages: list[TracedMessage] = []
        self._ids = itertools.count(1)

    @contextlib.contextmanager
    def handle(self, message: TracedMessage) -> Generator[None]:
        parent = message.trace_context
        trace_id = parent.trace_id if parent is not None else "1" * 32
        message.span_context = TraceContext(f"00-{trace_id}-{next(self._ids):016x}-01")
        yield
        self.messages.append(message)

    @contextlib.contextmanager
    def send(self, message: TracedMessage) -> Generator[None]:
        yield
        self.messages.append(message)

    def of(self, kind: str, method: str) -> list[TracedMessage]:
        return [m for m in self.messages if (m.kind, m.method) == (kind, method)]


@contextlib.asynccontextmanager
async def store_of(kind: str, request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    if kind == "memory":
        yield InMemoryTaskStore()
        return
    url = request.getfixturevalue("redis_url")
    store = RedisTaskStore(url, namespace=f"tracing:{uuid.uuid4().hex}")
    try:
        yield store
    finally:
        await store.aclose()


def traced_server(store: TaskStore) -> Server:
    server = Server("traced-tasks")
    tasks = Tasks(store).install(server)

    @tasks.tool(task_support="optional")
    async def where(ctx: Context) -> str:
        current = tracing.current()
        return json.dumps({"current": current.traceparent if current else None})

    return server


def _current_in(task: JSON) -> str | None:
    return json.loads(task["result"]["content"][0]["text"])["current"]


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_the_record_keeps_the_creating_span_and_the_work_continues_it(
    kind: str, request: pytest.FixtureRequest
) -> None:
    async with store_of(kind, request) as store:
        server = traced_server(store)
        recorder = Recorder()
        server.set_tracer(recorder)
        async with connect(server) as client:
            with tracing.use(CALLER):
                created = await client.session.request(
                    "tools/call", {"name": "where", "arguments": {}}
                )
                done = await poll(client.session, created["taskId"])
            record = await store.get(created["taskId"])
    assert record is not None
    (call,) = recorder.of("request", "tools/call")
    assert call.trace_context == CALLER
    # the record holds the context of the tools/call span (read back from the store)
    assert record.trace_context == call.span_context
    (work,) = recorder.of("work", "tools/call")
    assert work.side == "server"
    assert work.link == record.trace_context
    assert work.trace_context == record.trace_context  # its parent
    assert work.era == "modern"
    assert work.transport["task_id"] == created["taskId"]
    assert work.result is not None
    assert work.result["content"]
    assert work.span_context is not None
    assert work.span_context.trace_id == TRACE_ID
    assert _current_in(done) == work.span_context.traceparent  # the tool ran in it
    polls = recorder.of("request", "tasks/get")
    assert polls
    assert all(p.link == record.trace_context for p in polls)


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_without_a_tracer_the_record_keeps_the_callers_context(
    kind: str, request: pytest.FixtureRequest
) -> None:
    async with store_of(kind, request) as store:
        server = traced_server(store)
        async with connect(server) as client:
            with tracing.use(CALLER):
                created = await client.session.request(
                    "tools/call", {"name": "where", "arguments": {}}
                )
            done = await poll(client.session, created["taskId"])
            untraced = await client.session.request(
                "tools/call", {"name": "where", "arguments": {}}
            )
            plain = await poll(client.session, untraced["taskId"])
            first, second = await store.get(created["taskId"]), await store.get(untraced["taskId"])
    assert first is not None
    assert second is not None
    assert first.trace_context == CALLER
    assert _current_in(done) == CALLER.traceparent
    assert second.trace_context is None
    assert _current_in(plain) is None


async def test_handshake_era_tasks_get_and_result_link_to_the_task() -> None:
    server = traced_server(InMemoryTaskStore())
    recorder = Recorder()
    server.set_tracer(recorder)
    async with connect(server, mode="legacy") as client:
        with tracing.use(CALLER):
            created = await client.session.request(
                "tools/call", {"name": "where", "arguments": {}, "task": {}}
            )
        task_id = created["task"]["taskId"]
        await client.session.request("tasks/get", {"taskId": task_id})
        result = await client.session.request("tasks/result", {"taskId": task_id})
    (call,) = recorder.of("request", "tools/call")
    (work,) = recorder.of("work", "tools/call")
    assert work.link == call.span_context
    assert work.era == "legacy"
    assert work.span_context is not None
    assert json.loads(result["content"][0]["text"])["current"] == work.span_context.traceparent
    for method in ("tasks/get", "tasks/result"):
        (message,) = recorder.of("request", method)
        assert message.link == call.span_context
        assert message.trace_context is None  # the poll itself carried nothing


def test_the_stored_form_round_trips_and_is_validated_when_read() -> None:
    record = TaskRecord(task_id="t", owner=None, era="modern", trace_context=CALLER)
    data = json.loads(json.dumps(record.to_json()))
    assert data["traceContext"] == CALLER.to_meta()
    assert TaskRecord.from_json(data).trace_context == CALLER
    data["traceContext"] = {"traceparent": "not-a-traceparent"}
    assert TaskRecord.from_json(data).trace_context is None
    del data["traceContext"]  # records stored before this field existed
    assert TaskRecord.from_json(data).trace_context is None
