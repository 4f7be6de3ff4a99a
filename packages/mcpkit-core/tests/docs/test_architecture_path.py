"""docs/architecture.md's measured request path is the one the code takes today
(issue 27): the ``request-path`` block equals what ``tools/request_path.py --markdown``
prints, so the page cannot drift from the code."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

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
