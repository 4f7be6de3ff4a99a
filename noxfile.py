"""The test matrix: one session per distribution, plus lint, types, build and the peers.

Rules:
1. Each distribution's session installs that distribution alone, with only its declared
   dependencies and its own ``test`` dependency group, from the lock file; a missing
   dependency declaration therefore fails there.
2. ``uv run nox`` (no arguments) runs the default sessions: everything CI runs.
3. Sessions that need Node.js get Node 22 from the npm registry via
   ``conformance/toolchain.py``; they need nothing else from the network.
4. A session that needs a real service (``redis-server`` for ``ext-tasks``) installs it
   and fails when it cannot; it never skips the tests that need it.
5. A whole distribution's tests (``core``, ``ext-tasks``, ``ext-auth``, ``ext-otel``) run in
   pytest-xdist worker processes (two per CPU, 2 to 8); naming test paths after ``--`` runs
   them in one process, as does ``-- -n 0``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "conformance"))

sys.path.insert(0, str(ROOT))

import harness  # noqa: E402  (conformance/harness.py: ports, served processes, verdicts)
import sep_map  # noqa: E402  (conformance/sep_map.py: the SEP map, allowed skips)

from noxsessions.common import (  # noqa: E402  (sync, pytest, apt: shared by every session)
    ensure_apt,
    logs_dir,
    pytest,
    sync,
    xdist_workers,
)
from noxsessions.common import loopback_prefix as _loopback_prefix  # noqa: E402


@nox.session(name="core")
def core(session: nox.Session) -> None:
    """mcpkit-core alone: its tests, with only its declared dependencies."""
    sync(session, "mcpkit-core", "test")
    pytest(session, "packages/mcpkit-core/tests", workers=xdist_workers())


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over every distribution, the conformance client and the benchmarks; the static
    fault-kind checks (``tools/check_kinds.py``); the release checks
    (``noxsessions/release.py``); the tests of ``tools/``."""
    session.install("ruff>=0.14", "pytest>=8", *release.LINT_TOOLS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", str(ROOT / "tools" / "check_kinds.py"))
    release.lint_checks(session)  # fragments, ranges, release dry runs, actionlint
    session.run("pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tools" / "tests"))


@nox.session
def typecheck(session: nox.Session) -> None:
    """pyright in strict mode over every distribution's sources."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--all-packages",
        "--group",
        "dev",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )
    session.run("pyright")
    # The names users import stay importable (issue 27): tools/public_api.json.
    session.run("python", str(ROOT / "tools" / "public_api.py"), "--check")


# -- conformance-server: the official suite's server scenarios against `mcpkit demo` ------

ALPHA12 = "conformance@0.2.0-alpha.12"
SEP_TABLE = sep_map.load()
"""conformance/seps.toml: its ``allowed_skips`` are the SKIPPED checks a run may hold."""
CONFORMANCE_SERVER_RUNS = (
    # (label, tool, arguments, zero warnings too)
    ("0.1.16-all", "conformance@0.1.16", ("--suite", "all"), True),
    ("alpha12-2025-11-25", ALPHA12, ("--requirements", "2025-11-25"), False),
    ("alpha12-2026-07-28", ALPHA12, ("--requirements", "2026-07-28"), False),
)
UNSCORED_ELSEWHERE = ("server-tasks-",)
"""Scenarios whose failures this session does not judge: the tasks extension's scenarios
run against the tasks demo in `conformance-tasks`. Every other scenario, scored or not
(e.g. http-header-validation), must have no FAILURE."""


@nox.session(name="conformance-server")
def conformance_server(session: nox.Session) -> None:
    """The official conformance suite (0.1.16 all; 0.2.0-alpha.12 at 2025-11-25 and at
    2026-07-28) against `mcpkit demo` over streamable HTTP on loopback. 0.1.16 must show
    zero failures and zero warnings (an empty expected-failures list makes warnings fail);
    alpha.12 zero failures in every scenario, scored or not, except the tasks extension's
    (judged in `conformance-tasks`). Every check must run (harness rule 4: a SKIPPED one
    only when conformance/seps.toml lists it with a reason).
    Logs: `.nox/conformance-server/tmp/logs/`."""
    sync(session, "mcpkit-core")
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    # The SEP map's listing snapshots are what the pinned suites list (conformance/sep_map.py).
    session.run("python", str(ROOT / "conformance" / "sep_map.py"), "verify")
    baseline = logs / "expected-failures.yml"
    baseline.write_text("# Mechanics only: the server list stays empty.\nserver: []\n")
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    demo = [python, "-m", "mcpkit.cli.main", "demo", "--host", "127.0.0.1", "--port", "0"]
    failures: list[str] = []
    with harness.served(demo, logs / "demo-server.log") as url:
        for label, tool, extra, strict in CONFORMANCE_SERVER_RUNS:
            out = logs / label
            argv = [python, toolchain, "run", tool, "--", "server", "--url", url, *extra]
            argv += ["-o", str(out)]
            if strict:
                argv += ["--expected-failures", str(baseline)]
            with (logs / f"{label}.txt").open("wb") as log:
                status = subprocess.run(
                    argv, stdout=log, stderr=subprocess.STDOUT, timeout=1800, check=False
                ).returncode
            text = (logs / f"{label}.txt").read_text(errors="replace")
            summary = text[text.find("=== SUMMARY ===") :] if "SUMMARY" in text else text
            counts = harness.check_counts(out)
            session.log(
                f"{label}: exit {status}; checks "
                + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            )
            for line in summary.splitlines():
                if line.startswith(("Total", "Not scored", "  ✗", "✗")):
                    session.log(f"  {line}")
            failing = harness.failing_scenarios(out, UNSCORED_ELSEWHERE)
            if failing:
                session.log(f"  failing scenarios: {', '.join(failing)}")
            skip = tuple(p.removeprefix("server-") for p in UNSCORED_ELSEWHERE)
            unrun = harness.unrun_scenarios(out, SEP_TABLE.allowed_skips, skip)
            for problem in unrun:
                session.log(f"  {problem}")
            if status != 0 or failing or unrun or (strict and counts.get("WARNING", 0) > 0):
                failures.append(f"{label} (see {logs / (label + '.txt')})")
    if failures:
        session.error("conformance failures: " + "; ".join(failures))


# -- conformance-proxy: the same suite against the proxy fronting the demo, as a matrix ------

PROXY_FACTORY = "conformance/proxied.py:build_server"
RUN_ERA = {"0.1.16-all": "legacy", "alpha12-2025-11-25": "legacy", "alpha12-2026-07-28": "modern"}
"""The era each run of CONFORMANCE_SERVER_RUNS speaks to the server it tests."""
BRIDGE_BY_DESIGN = ROOT / "conformance" / "proxy-bridge-by-design.json"
"""Per run label, the scenarios that cannot pass through the era bridge, with why (the
same list is the table in docs/proxy.md, checked by tests/docs/test_docs_proxy.py)."""
PROXY_CELLS_AT_ONCE = 3
TASKS_DEMO = "mcpkit.ext.tasks.demo:build_server"


class ProxyCell(NamedTuple):
    """One conformance run against the proxy fronting a fresh upstream."""

    label: str  # the CONFORMANCE_SERVER_RUNS label, or "tasks"
    tool: str
    extra: tuple[str, ...]
    strict: bool  # zero warnings too
    upstream_mode: str  # the era the proxy speaks upstream: legacy or modern
    by_design: dict[str, str]  # scenario -> why it cannot pass (bridged cells only)
    upstream: str = "demo"  # "demo" (mcpkit demo) or "tasks" (the tasks demo)

    @property
    def name(self) -> str:
        return f"{self.label}.upstream-{self.upstream_mode}"

    def judges(self, scenario: str) -> bool:
        """The tasks scenarios are judged only in the tasks cell (UNSCORED_ELSEWHERE)."""
        is_tasks = f"server-{scenario}".startswith(UNSCORED_ELSEWHERE)
        return is_tasks if self.upstream == "tasks" else not is_tasks


def _proxy_cell(python: str, toolchain: str, logs: Path, cell: ProxyCell) -> tuple[str, list[str]]:
    """Run one cell: a fresh upstream, the proxy fronting it (speaking
    ``cell.upstream_mode`` upstream, served over streamable HTTP), one conformance run
    against the proxy. Returns its log lines and its problems: a failing scenario not in
    ``cell.by_design``, a listed one that passes (stale), a warning on a strict cell, or
    a non-zero exit not explained by them."""
    import time

    if cell.upstream == "tasks":
        upstream = [python, "-m", "mcpkit.cli.main", "run", TASKS_DEMO, "--transport", "http"]
    else:
        upstream = [python, "-m", "mcpkit.cli.main", "demo"]
    upstream += ["--host", "127.0.0.1", "--port", "0"]
    serve = [python, "-m", "mcpkit.cli.main", "run", PROXY_FACTORY, "--transport", "http"]
    serve += ["--host", "127.0.0.1", "--port", "0"]
    out = logs / cell.name
    started = time.monotonic()
    with (
        harness.served(
            upstream, logs / f"{cell.name}.upstream.log", start_timeout_s=120
        ) as upstream_url,
        harness.served(
            serve,
            logs / f"{cell.name}.proxy.log",
            env={
                "MCPKIT_PROXY_UPSTREAM": upstream_url,
                "MCPKIT_PROXY_UPSTREAM_MODE": cell.upstream_mode,
            },
            # Three cells start six processes at once; the proxy connects upstream
            # before it listens. A loaded two-core machine has taken 20 s.
            start_timeout_s=120,
        ) as url,
    ):
        argv = [python, toolchain, "run", cell.tool, "--", "server", "--url", url, *cell.extra]
        argv += ["-o", str(out)]
        if cell.strict:
            baseline = logs / f"{cell.name}.expected-failures.yml"
            listed = "".join(f"\n  - {name}" for name in sorted(cell.by_design))
            baseline.write_text(f"server:{listed or ' []'}\n")
            argv += ["--expected-failures", str(baseline)]
        with (logs / f"{cell.name}.txt").open("wb") as log:
            status = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, timeout=1800, check=False
            ).returncode
    judged = {n: c for n, c in harness.scenario_verdicts(out).items() if cell.judges(n)}
    failing = sorted(n for n, c in judged.items() if c.get("FAILURE", 0))
    warned = sorted(n for n, c in judged.items() if c.get("WARNING", 0) and n not in cell.by_design)
    totals: dict[str, int] = {}
    for counts in judged.values():
        for key, value in counts.items():
            totals[key] = totals.get(key, 0) + value
    lines = [
        f"{cell.name}: exit {status} in {time.monotonic() - started:.0f} s; "
        + f"{len(judged)} scenarios judged, checks "
        + (", ".join(f"{k} {v}" for k, v in sorted(totals.items())) or "none")
    ]
    unexpected = [n for n in failing if n not in cell.by_design]
    stale = sorted(n for n in cell.by_design if n not in failing)
    problems: list[str] = []
    if not judged:
        problems.append("no scenario ran")
    if unexpected:
        problems.append(f"failing: {', '.join(unexpected)}")
    if stale:
        problems.append(f"listed as failing by design but passing: {', '.join(stale)}")
    if cell.strict and warned:
        problems.append(f"warnings in {', '.join(warned)}")
    # The harness's exit status counts scored scenarios: the tasks ones are not scored,
    # and a bridged cell's by-design failures make it non-zero.
    if status != 0 and cell.upstream == "demo" and not (failing and not unexpected):
        problems.append(f"exit status {status}")
    if cell.by_design:
        lines.append(f"  failing by design (docs/proxy.md): {', '.join(sorted(cell.by_design))}")
    problems = [f"{cell.name}: {p} (see {logs / (cell.name + '.txt')})" for p in problems]
    return lines, problems


def _proxy_cells(listed: dict[str, dict[str, str]]) -> list[ProxyCell]:
    """Each run of CONFORMANCE_SERVER_RUNS twice (the upstream in the client's era, then
    in the other: the bridge), plus the tasks scenarios through the proxy to the tasks
    demo (extension methods the proxy does not know, forwarded verbatim)."""
    cells: list[ProxyCell] = []
    for label, tool, extra, strict in CONFORMANCE_SERVER_RUNS:
        same = RUN_ERA[label]
        other = "modern" if same == "legacy" else "legacy"
        cells.append(ProxyCell(label, tool, extra, strict, same, {}))
        cells.append(ProxyCell(label, tool, extra, strict, other, listed.get(label, {})))
    tasks_run = ("--requirements", "2026-07-28")
    cells.append(ProxyCell("tasks", ALPHA12, tasks_run, True, "modern", {}, upstream="tasks"))
    return cells


@nox.session(name="conformance-proxy")
def conformance_proxy(session: nox.Session) -> None:
    """The runs of `conformance-server` (0.1.16 all; alpha.12 at 2025-11-25 and at
    2026-07-28) against `mcpkit.proxy(...)` fronting `mcpkit demo`, served over
    streamable HTTP on loopback (`conformance/proxied.py`), as a matrix: the proxy
    speaking to the demo in the client's era, and in the other era (the era bridge).
    Same era: zero failures, as against the demo. Bridged: exactly the scenarios listed
    in `conformance/proxy-bridge-by-design.json` (and in docs/proxy.md) fail; every other
    one passes. The tasks scenarios are judged in one more cell, through the proxy to
    the tasks demo: zero failures and zero warnings, as in `conformance-tasks`. Cells run
    three at a time, each with its own upstream and proxy.
    Logs: `.nox/conformance-proxy/tmp/logs/`."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    sync(session, "mcpkit-ext-tasks")  # core, plus the tasks demo as an upstream
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    listed: dict[str, dict[str, str]] = json.loads(BRIDGE_BY_DESIGN.read_text())["bridged"]
    unknown = sorted(set(listed) - set(RUN_ERA))
    if unknown:
        session.error(f"{BRIDGE_BY_DESIGN.name} names unknown runs: {', '.join(unknown)}")
    with ThreadPoolExecutor(max_workers=PROXY_CELLS_AT_ONCE) as pool:
        results = list(
            pool.map(lambda cell: _proxy_cell(python, toolchain, logs, cell), _proxy_cells(listed))
        )
    problems: list[str] = []
    for lines, cell_problems in results:
        for line in lines:
            session.log(line)
        problems += cell_problems
    if problems:
        session.error("conformance through the proxy: " + "; ".join(problems))


# -- conformance-client and interop: the mcpkit client against peers nobody here wrote ----

CONFORMANCE_CLIENT_RUNS = (
    # (label, tool, arguments, expected-failures file in conformance/)
    ("0.1.16-all", "conformance@0.1.16", ("--suite", "all"), "expected-failures.yml"),
    (
        "alpha12-2025-11-25",
        "conformance@0.2.0-alpha.12",
        ("--requirements", "2025-11-25"),
        "expected-failures-2025-11-25.yml",
    ),
    (
        "alpha12-2026-07-28",
        "conformance@0.2.0-alpha.12",
        ("--requirements", "2026-07-28"),
        "expected-failures-2026-07-28.yml",
    ),
)


def _auth_scenarios(python: str, toolchain: str) -> list[str]:
    """Every client scenario named ``auth/*`` that alpha.12's ``conformance list`` prints."""
    import re

    listing = subprocess.run(
        [python, toolchain, "run", ALPHA12, "--", "list"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    return sorted(set(re.findall(r"^\s*-\s+(auth/[\w.-]+)", listing, re.MULTILINE)))


def _run_auth_scenarios(
    session: nox.Session, prefix: list[str], python: str, toolchain: str, logs: Path
) -> list[str]:
    """Alpha.12's every ``auth/*`` client scenario by name (``--scenario``), four at a time,
    each in its own loopback-only namespace; the failures (any FAILURE check, a non-zero
    exit, or no checks at all)."""
    from concurrent.futures import ThreadPoolExecutor

    command = f"{python} {ROOT / 'conformance' / 'client.py'}"
    names = _auth_scenarios(python, toolchain)
    base = logs / "alpha12-auth"

    def one(name: str) -> tuple[str, int, dict[str, dict[str, int]], list[str]]:
        slug = name.replace("/", "_")
        out = base / slug
        argv = [*prefix, python, toolchain, "run", ALPHA12, "--", "client"]
        argv += ["--command", command, "--scenario", name, "-o", str(out)]
        with (base / f"{slug}.txt").open("wb") as log:
            status = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, timeout=600, check=False
            ).returncode
        unrun = harness.unrun_scenarios(out, SEP_TABLE.allowed_skips)
        return name, status, harness.auth_verdicts(out), unrun

    base.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, names))
    failures: list[str] = []
    for name, status, verdicts, unrun in results:
        counts: dict[str, int] = {}
        for per in verdicts.values():
            for key, value in per.items():
                counts[key] = counts.get(key, 0) + value
        session.log(
            f"  {name}: exit {status}; "
            + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no checks")
        )
        for problem in unrun:
            session.log(f"    {problem}")
        if status != 0 or not verdicts or counts.get("FAILURE", 0) or unrun:
            failures.append(f"{name} (see {base / (name.replace('/', '_') + '.txt')})")
    session.log(f"alpha12 auth/*: {len(names)} scenarios by name, {len(failures)} failing")
    return failures


@nox.session(name="conformance-client")
def conformance_client(session: nox.Session) -> None:
    """The official suite's client scenarios against `conformance/client.py`: 0.1.16 all,
    0.2.0-alpha.12 at 2025-11-25 and at 2026-07-28, and every alpha.12 `auth/*` scenario
    by name, each inside a loopback-only network namespace. A FAILURE check in any `auth/*`
    scenario fails the session, scored or not (the harness's exit code counts only scored
    ones); the expected-failures files are empty; a warning fails 0.1.16; every check
    must run (harness rule 4: a SKIPPED one only when conformance/seps.toml lists it).
    Logs: `.nox/conformance-client/tmp/logs/`."""
    sync(session, "mcpkit-ext-auth")
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    prefix = _loopback_prefix(session)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    command = f"{python} {ROOT / 'conformance' / 'client.py'}"
    failures: list[str] = []
    for label, tool, extra, baseline in CONFORMANCE_CLIENT_RUNS:
        out = logs / label
        argv = [*prefix, python, toolchain, "run", tool, "--", "client", "--command", command]
        argv += [*extra, "--expected-failures", str(ROOT / "conformance" / baseline)]
        argv += ["-o", str(out)]
        with (logs / f"{label}.txt").open("wb") as log:
            status = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, timeout=1800, check=False
            ).returncode
        text = (logs / f"{label}.txt").read_text(errors="replace")
        counts = harness.check_counts(out)
        session.log(
            f"{label}: exit {status}; checks "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
        for line in text.splitlines():
            if line.startswith(("Total", "Not scored", "✓", "✗")) and "auth/" not in line:
                session.log(f"  {line}")
        bad_auth = [n for n, c in harness.auth_verdicts(out).items() if c.get("FAILURE", 0)]
        if bad_auth:
            session.log(f"  auth/* with FAILURE checks: {', '.join(bad_auth)}")
        unrun = harness.unrun_scenarios(out, SEP_TABLE.allowed_skips)
        for problem in unrun:
            session.log(f"  {problem}")
        if status != 0 or bad_auth or unrun:
            failures.append(f"{label} (see {logs / (label + '.txt')})")
    failures += _run_auth_scenarios(session, prefix, python, toolchain, logs)
    if failures:
        session.error("conformance-client failures: " + "; ".join(failures))


@nox.session
def interop(session: nox.Session) -> None:
    """The mcpkit client drives servers nobody here wrote: @modelcontextprotocol/
    server-everything (stdio and streamableHttp) and the official Python SDK's server
    (stdio and HTTP), inside a loopback-only network namespace (`interop/`); the official
    TypeScript tasks client (@modelcontextprotocol/ext-tasks) drives the tasks demo on both
    eras; the TypeScript SDK's OAuth client (v1 and v2) steps up against the development
    authorization server; the skills extension and the official SDK read each other's
    skills (`interop/test_skills_official.py`); and the comparison page's three servers
    (mcpkit, FastMCP, the official SDK) answer alike."""
    sync(session, "mcpkit-core", "test", "comparison", "interop")
    session.run("python", str(ROOT / "conformance" / "toolchain.py"), "ensure", silent=True)
    prefix = _loopback_prefix(session)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    session.run(
        *prefix,
        python,
        "-m",
        "pytest",
        str(ROOT / "interop"),
        str(
            ROOT
            / "packages"
            / "mcpkit-core"
            / "tests"
            / "client"
            / "test_client_official_server.py"
        ),
        *session.posargs,
        external=True,
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The benchmark suite, short (``bench/run.py --smoke``, a few minutes); not part of the
    default run and never a test. ``nox -s bench -- --quick`` (or ``--full``) for the
    measured table; see ``docs/performance.md``."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--no-default-groups",
        "--group",
        "bench",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )
    session.run("python", "bench/run.py", *(session.posargs or ["--smoke"]))


# -- mcpkit-ext-tasks: its tests alone (with a real redis-server) and its conformance run --


@nox.session(name="ext-tasks")
def ext_tasks(session: nox.Session) -> None:
    """mcpkit-ext-tasks alone: its tests with only mcpkit-core, its declared dependencies
    and its `test` group; the Redis store tests run against a real `redis-server` (the
    Debian package, installed here when missing) started by the tests on loopback."""
    sync(session, "mcpkit-ext-tasks", "test")
    ensure_apt(session, {"redis-server": "redis-server"})
    pytest(session, "packages/mcpkit-ext-tasks/tests", workers=xdist_workers())


@nox.session(name="ext-auth")
def ext_auth(session: nox.Session) -> None:
    """mcpkit-ext-auth alone: its tests with only mcpkit-core, its declared dependencies
    and its `test` group, against the development authorization server on loopback (the
    OAuth proxy's Redis store against a real `redis-server`, installed here when missing)."""
    sync(session, "mcpkit-ext-auth", "test")
    programs = ensure_apt(session, {"redis-server": "redis-server"})
    session.env["MCPKIT_REDIS_SERVER"] = programs["redis-server"]
    pytest(session, "packages/mcpkit-ext-auth/tests", workers=xdist_workers())


@nox.session(name="ext-otel")
def ext_otel(session: nox.Session) -> None:
    """mcpkit-ext-otel alone: its tests with only mcpkit-core, opentelemetry-api and its
    `test` group (the OpenTelemetry SDK and OTLP exporter are test-only)."""
    sync(session, "mcpkit-ext-otel", "test")
    pytest(session, "packages/mcpkit-ext-otel/tests", workers=xdist_workers())


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


@nox.session(name="conformance-tasks")
def conformance_tasks(session: nox.Session) -> None:
    """The conformance suite's tasks-* scenarios (0.2.0-alpha.12, SEP-2663) against the
    tasks demo (`mcpkit run mcpkit.ext.tasks.demo:build_server`) over streamable HTTP on
    loopback: zero failures and zero warnings, and every check run (a SKIPPED one only
    when conformance/seps.toml lists it with a reason: harness rule 4).
    Logs: `.nox/conformance-tasks/tmp/logs/`."""
    sync(session, "mcpkit-ext-tasks")
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    target = "mcpkit.ext.tasks.demo:build_server"
    serve = [python, "-m", "mcpkit.cli.main", "run", target, "--transport", "http"]
    serve += ["--host", "127.0.0.1", "--port", "0"]
    failures: list[str] = []
    totals: dict[str, int] = {}
    with harness.served(serve, logs / "tasks-demo-server.log") as url:
        for scenario in TASKS_SCENARIOS:
            out = logs / scenario
            argv = [python, toolchain, "run", ALPHA12, "--", "server", "--url", url]
            argv += ["--scenario", scenario, "-o", str(out)]
            with (logs / f"{scenario}.txt").open("wb") as log:
                status = subprocess.run(
                    argv, stdout=log, stderr=subprocess.STDOUT, timeout=600, check=False
                ).returncode
            counts = harness.check_counts(out)
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
            session.log(
                f"{scenario}: exit {status}; checks "
                + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none")
            )
            unrun = harness.unrun_checks(out, scenario, SEP_TABLE.allowed_skips)
            for problem in unrun:
                session.log(f"  {problem}")
            if status != 0 or counts.get("FAILURE", 0) or counts.get("WARNING", 0) or unrun:
                failures.append(f"{scenario} (see {logs / (scenario + '.txt')})")
    session.log("tasks-*: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    if failures:
        session.error("conformance-tasks failures: " + "; ".join(failures))


AUTH_SERVER_CLIENT_ID = "conformance-client"
AUTH_SERVER_SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")


def _run_authorization_suite(argv: list[str], issuer: str, log_path: Path) -> int:
    """Run the suite's `authorization` command, playing the browser
    (`harness.run_authorization_suite`): the authorization URL it prints is fetched (the
    development server consents at once and answers with a redirect to the suite's
    callback on 127.0.0.1), and the callback is then fetched. A watchdog kills it after
    10 minutes."""
    return harness.run_authorization_suite(argv, issuer + "/authorize", log_path)


@nox.session(name="conformance-auth-server")
def conformance_auth_server(session: nox.Session) -> None:
    """The conformance suite's authorization-server scenarios (0.2.0-alpha.12
    `authorization`: metadata endpoint, authorization code grant with PKCE, `resource`,
    RFC 9207 `iss`) against the development authorization server
    (`python -m mcpkit.ext.auth.devserver`) on loopback, with a pre-registered public
    client: zero failures and zero warnings. 0.1.16 has no authorization-server
    scenarios. Logs: `.nox/conformance-auth-server/tmp/logs/`."""
    sync(session, "mcpkit-ext-auth")
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    out = logs / "authorization"
    report = logs / "authorization.txt"
    # The server starts on port 0 and prints its issuer; the suite's callback port must be
    # named to both before they start: a run whose callback port was taken is run again
    # on a fresh one (conformance/harness.py rule 3), five times at most.
    for _ in range(5):
        shutil.rmtree(out, ignore_errors=True)  # a retried run's verdicts only
        (callback_port,) = harness.free_ports(1)
        serve = [python, "-m", "mcpkit.ext.auth.devserver", "--host", "127.0.0.1"]
        serve += ["--port", "0", "--client-id", AUTH_SERVER_CLIENT_ID]
        serve += ["--redirect-uri", f"http://127.0.0.1:{callback_port}/callback"]
        issued = re.compile(r"^issuer: (\S+)", re.MULTILINE)
        with harness.served(serve, logs / "auth-server.log", announced=issued) as issuer:
            argv = [python, toolchain, "run", ALPHA12, "--", "authorization", "--url", issuer]
            argv += ["--client-id", AUTH_SERVER_CLIENT_ID, "--port", str(callback_port)]
            argv += ["--resource", "http://127.0.0.1:8000/mcp", "-o", str(out)]
            status = _run_authorization_suite(argv, issuer, report)
        said = report.read_text(errors="replace").lower()
        if status == 0 or not any(mark in said for mark in harness.IN_USE):
            break
    counts = harness.check_counts(out)
    ran = sorted(p.parent.name for p in out.glob("*/checks.json"))
    session.log(
        f"authorization: exit {status}; checks "
        + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none")
    )
    missing = [s for s in AUTH_SERVER_SCENARIOS if not any(s in name for name in ran)]
    bad = sum(counts.get(k, 0) for k in ("FAILURE", "WARNING", "SKIPPED"))
    if status != 0 or bad or missing:
        session.error(
            f"conformance-auth-server failed (missing scenarios: {missing or 'none'}); "
            f"see {logs / 'authorization.txt'}"
        )


# -- the sessions of later distributions and features, one module each (noxsessions/) ------

from noxsessions import auth_idp, build, events, lowest, protogen, release, scale, seps, skills, ui  # noqa: E402, F401  (they register their sessions)
