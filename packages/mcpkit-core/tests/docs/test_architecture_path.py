"""docs/architecture.md's measured request path is the one the code takes today
(issue 27): the ``request-path`` block equals what ``tools/request_path.py --markdown``
prints, so the page cannot drift from the code."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tools"))

import request_path  # noqa: E402
from docs_blocks import block  # noqa: E402


def test_the_documented_request_path_is_the_traced_one() -> None:
    traced = {era: anyio.run(request_path.trace, era) for era in request_path.ERAS}
    assert block("docs/architecture.md", "request-path") == request_path.markdown(traced)


def test_the_trace_sees_the_tool_run_on_both_eras() -> None:
    for era in request_path.ERAS:
        tracer = anyio.run(request_path.trace, era)
        assert "mcpkit.server.tools" in tracer.stays
        assert request_path.figures(tracer)["modules"] == len(set(tracer.stays))


class _NullTracer:
    """A tracer that records nothing: the request then runs inside the tracing layer."""

    @contextlib.contextmanager
    def handle(self, message: Any) -> Generator[None]:
        yield

    @contextlib.contextmanager
    def send(self, message: Any) -> Generator[None]:
        yield


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("era", request_path.ERAS)
def test_the_path_runs_straight(era: str, traced: bool) -> None:
    """Issue 27: the front end is entered once, tracing is a layer the front end enters
    (never one that calls back into it), a request without requestState never enters
    MRTR, and nothing on a lower floor calls up into a higher one."""
    tracer = anyio.run(request_path.trace, era, _NullTracer() if traced else None)
    stays = tracer.stays
    assert stays.count("mcpkit.server.frontend") == 1
    assert stays.count("mcpkit.server.tracing") == (1 if traced else 0)
    assert "mcpkit.server.mrtr" not in stays
    assert tracer.climbs == []


def test_a_clock_tick_during_the_traced_call_is_not_on_the_path() -> None:
    """Rule 4 of tools/request_path.py: on a loaded machine the coarse clock's timer can
    fire while the traced call waits for its thread; what runs under it (here a due whose
    callback enters mcpkit.core.jsonrpc) is not a stay, while the same call made by the
    request itself is."""
    from mcpkit.core import jsonrpc
    from mcpkit.server.http.clock import coarse_clock

    async def run() -> tuple[list[str], list[str]]:
        clock = coarse_clock(0.001)
        clock.at(0.0, lambda: jsonrpc.dumps({"tick": 1}))
        ticked = anyio.Event()
        clock.at(0.0, ticked.set)
        tracer = request_path.PathTracer()
        sys.setprofile(tracer)
        try:
            await ticked.wait()  # the tick fires and runs both dues
            under_tick = list(tracer.stays)
            jsonrpc.dumps({"request": 1})  # called by the traced task itself
        finally:
            sys.setprofile(None)
        return under_tick, tracer.stays

    under_tick, stays = anyio.run(run)
    assert under_tick == []
    assert stays == ["mcpkit.core.jsonrpc"]
