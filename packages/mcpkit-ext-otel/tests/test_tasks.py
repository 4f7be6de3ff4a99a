"""Tasks (the ext-tasks extension, used here by the tests only): a task's work continues
the trace of the ``tools/call`` that created it (through the trace context the tasks
extension stores on the task record), and ``tasks/*`` polls are their own spans linked to
it, on both eras."""

from __future__ import annotations

import pytest
from harness import Telemetry
from opentelemetry.trace import SpanKind

from mcpkit.client import Client
from mcpkit.ext.otel import instrument
from mcpkit.ext.tasks import InMemoryTaskStore, TaskClient, Tasks
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


def task_server(telemetry: Telemetry) -> Server:
    server = Server("jobs")
    tasks = Tasks(InMemoryTaskStore(), poll_interval_ms=10).install(server)
    inner = telemetry.tracer_provider.get_tracer("job-backend")

    @tasks.tool(task_support="required")
    async def crunch(n: int) -> int:  # pyright: ignore[reportUnusedFunction]
        """Work that runs as a task."""
        with inner.start_as_current_span("crunching"):
            return n * 2

    instrument(server, tracer_provider=telemetry.tracer_provider)
    return server


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_task_work_continues_the_creating_trace_and_polls_link_to_it(
    telemetry: Telemetry, mode: str
) -> None:
    server = task_server(telemetry)
    agent = telemetry.tracer_provider.get_tracer("agent")
    async with server.lifespan():
        client = Client(server, mode=mode)  # type: ignore[arg-type]
        instrument(client, tracer_provider=telemetry.tracer_provider)
        async with client:
            helper = TaskClient(client)
            with agent.start_as_current_span("agent"):
                created = await helper.call_tool("crunch", {"n": 21})
                final = await helper.wait(created)
    assert final.status == "completed"
    spans = telemetry.spans()
    creating = [s for s in spans if s.name == "tools/call crunch" and s.kind is SpanKind.SERVER]
    work = [s for s in spans if s.name == "tools/call crunch" and s.kind is SpanKind.INTERNAL]
    assert len(creating) == 1
    assert len(work) == 1
    assert creating[0].context is not None
    assert work[0].context is not None
    # the work is a child of the creating request's server span: the same trace
    assert work[0].context.trace_id == creating[0].context.trace_id
    assert work[0].parent is not None
    assert work[0].parent.span_id == creating[0].context.span_id
    crunching = telemetry.span("crunching")
    assert crunching.parent is not None
    assert crunching.parent.span_id == work[0].context.span_id
    polls = [s for s in spans if s.name == "tasks/get" and s.kind is SpanKind.SERVER]
    assert polls
    for poll in polls:
        assert [link.context.span_id for link in poll.links] == [creating[0].context.span_id]
