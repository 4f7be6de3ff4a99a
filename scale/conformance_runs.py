"""The official conformance suites through HAProxy in front of three replicas (issue 17).

Run by the nox session ``scale`` with the session's Python::

    python scale/conformance_runs.py LOGS_DIR

Rules:
1. The server runs of ``conformance-server`` (0.1.16 ``--suite all`` with zero failures
   and zero warnings; 0.2.0-alpha.12 at 2025-11-25 and at 2026-07-28 with zero failures
   in every scenario, scored or not, except the tasks extension's) run against the
   balancer in front of three ``mcpkit demo`` replicas sharing Redis and one secret.
2. The tasks scenarios (``conformance-tasks``'s list) run against the balancer in front
   of three tasks-demo replicas whose task store is the shared Redis: zero failures,
   zero warnings.
3. The runs go at once (each client is independent, the clusters are shared); each is
   bounded (10 minutes). The exit status is 1 when anything failed, with one line per
   failing run naming its log.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "conformance")]

import cluster  # noqa: E402  (scale/cluster.py)
import harness as conformance_harness  # noqa: E402  (conformance/harness.py: verdicts)

ALPHA12 = "conformance@0.2.0-alpha.12"
SERVER_RUNS = (
    # (label, tool, arguments, zero warnings too)
    ("0.1.16-all", "conformance@0.1.16", ("--suite", "all"), True),
    ("alpha12-2025-11-25", ALPHA12, ("--requirements", "2025-11-25"), False),
    ("alpha12-2026-07-28", ALPHA12, ("--requirements", "2026-07-28"), False),
)
"""The same runs as the noxfile's CONFORMANCE_SERVER_RUNS (a test checks they agree)."""
TASKS_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
"""The noxfile's TASKS_SCENARIOS (a test checks they agree)."""
RUN_TIMEOUT_S = 600
TOOLCHAIN = str(ROOT / "conformance" / "toolchain.py")


def _run(argv: list[str], log: Path) -> int:
    with log.open("wb") as out:
        try:
            return subprocess.run(
                argv, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S, check=False
            ).returncode
        except subprocess.TimeoutExpired:
            return -1


def server_run(
    url: str, logs: Path, label: str, tool: str, extra: tuple[str, ...], strict: bool
) -> tuple[str, str | None]:
    """One run of rule 1; returns (summary line, problem or None)."""
    out = logs / label
    argv = [sys.executable, TOOLCHAIN, "run", tool, "--", "server", "--url", url, *extra]
    argv += ["-o", str(out)]
    if strict:
        baseline = logs / "expected-failures.yml"
        baseline.write_text("server: []\n")
        argv += ["--expected-failures", str(baseline)]
    status = _run(argv, logs / f"{label}.txt")
    counts = conformance_harness.check_counts(out)
    failing = conformance_harness.failing_scenarios(out, ("server-tasks-",))
    line = f"{label}: exit {status}; checks " + ", ".join(
        f"{k} {v}" for k, v in sorted(counts.items())
    )
    if failing:
        line += f"; failing: {', '.join(failing)}"
    bad = status != 0 or failing or (strict and counts.get("WARNING", 0) > 0) or not counts
    return line, (f"{label} (see {logs / (label + '.txt')})" if bad else None)


def tasks_run(url: str, logs: Path, scenario: str) -> tuple[str, str | None]:
    """One scenario of rule 2."""
    out = logs / scenario
    argv = [sys.executable, TOOLCHAIN, "run", ALPHA12, "--", "server", "--url", url]
    argv += ["--scenario", scenario, "-o", str(out)]
    status = _run(argv, logs / f"{scenario}.txt")
    counts = conformance_harness.check_counts(out)
    line = f"{scenario}: exit {status}; checks " + (
        ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
    )
    bad = status != 0 or counts.get("FAILURE", 0) or counts.get("WARNING", 0) or not counts
    return line, (f"{scenario} (see {logs / (scenario + '.txt')})" if bad else None)


def main(logs: Path) -> int:
    logs.mkdir(parents=True, exist_ok=True)
    results: list[tuple[str, str | None]] = []
    with (
        cluster.running(logs / "demo-cluster", kind=cluster.DEMO) as demo,
        cluster.running(logs / "tasks-cluster", kind=cluster.TASKS_DEMO) as tasks,
        ThreadPoolExecutor(max_workers=4) as pool,
    ):
        futures = [pool.submit(server_run, demo.url, logs, *run) for run in SERVER_RUNS]
        futures += [pool.submit(tasks_run, tasks.url, logs, s) for s in TASKS_SCENARIOS]
        results = [f.result() for f in futures]
        served = [(c.workdir.name, len(c.replicas), c.served_by()) for c in (demo, tasks)]
    for line, _ in results:
        print(line, flush=True)
    for name, _, counts in served:
        print(f"{name}: responses per replica {counts}", flush=True)
    problems = [p for _, p in results if p]
    lazy = [name for name, replicas, counts in served if len(counts) < replicas]
    if lazy:
        problems.append(f"a replica served nothing in {', '.join(lazy)}: not balanced")
    if problems:
        print("FAILED through the balancer: " + "; ".join(problems), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
