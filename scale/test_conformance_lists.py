"""The conformance runs through the balancer (scale/conformance_runs.py) are the ones the
single-server sessions run (noxfile.py): same runs, same tasks scenarios."""

from __future__ import annotations

import ast
from typing import Any

import conformance_runs
from cluster import ROOT

WANTED = ("ALPHA12", "CONFORMANCE_SERVER_RUNS", "TASKS_SCENARIOS")


def noxfile_constants() -> dict[str, Any]:
    """The noxfile's module-level constants named in WANTED (evaluated alone: the
    noxfile itself imports nox, which this environment does not have)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    namespace: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in WANTED for t in node.targets
        ):
            exec(compile(ast.Module([node], []), "noxfile.py", "exec"), namespace)
    return namespace


def test_same_runs_and_scenarios_as_the_single_server_sessions() -> None:
    constants = noxfile_constants()
    assert tuple(constants["CONFORMANCE_SERVER_RUNS"]) == conformance_runs.SERVER_RUNS
    assert tuple(constants["TASKS_SCENARIOS"]) == conformance_runs.TASKS_SCENARIOS
