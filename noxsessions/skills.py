"""nox sessions of mcpkit-ext-skills (the Skills extension, SEP-2640).

Rules:
1. ``ext-skills`` installs mcpkit-ext-skills alone with its ``test`` group (common rule 1)
   and runs its tests.
2. ``conformance-skills`` runs the official suite's seven ``sep-2640-*`` scenarios of
   :data:`SUITE` by name: the three server scenarios against ``mcpkit skills serve
   examples/skills`` over streamable HTTP on loopback, at ``--spec-version 2026-07-28``
   (the revision the extension is written against; ``--force`` because the suite files
   extension scenarios off its spec timeline and would otherwise not run them), and the
   four client scenarios with ``conformance/skills_client.py`` inside a loopback-only
   network namespace.
3. A scenario counts only when its checks ran: at least one of its own ``sep-2640-*``
   checks succeeded, and every check recorded is ``SUCCESS`` (no FAILURE, no WARNING, no
   SKIPPED). Against a peer without the extension every ``sep-2640-*`` check is SKIPPED
   and the suite still prints PASSED (its generic ``wire-schema-valid`` check passes: 1/1,
   or 0/0). The expected-failures list is empty.
4. The guard of rule 3 is itself checked each run: one server scenario runs against
   ``mcpkit demo`` (no skills extension) and must be judged "not run".
   Logs: ``.nox/conformance-skills/tmp/logs/``.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import nox

from noxsessions.common import logs_dir, loopback_prefix, pytest, sync, xdist_workers

ROOT = Path(__file__).resolve().parent.parent
SUITE = "conformance@0.2.0-alpha.12"
SERVER_SCENARIOS = (
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
)
CLIENT_SCENARIOS = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)


@nox.session(name="ext-skills")
def ext_skills(session: nox.Session) -> None:
    """mcpkit-ext-skills alone: its tests with only mcpkit-core, PyYAML and its `test` group."""
    sync(session, "mcpkit-ext-skills", "test")
    pytest(session, "packages/mcpkit-ext-skills/tests", workers=xdist_workers())


def scenario_problems(out_dir: Path, name: str = "") -> tuple[Counter[str], list[str]]:
    """Rule 3: the check counts of one scenario's output directory, and why it does not
    count as passed (empty when every check ran and succeeded): harness rule 4 with the
    scenario's own ``sep-2640-*`` checks, plus any check neither SUCCESS nor SKIPPED."""
    import harness  # conformance/harness.py (on sys.path in the session)

    counts = Counter(harness.check_counts(out_dir))
    problems = harness.unrun_checks(out_dir, name, own="sep-2640-")
    problems += [f"{n} {k}" for k, n in sorted(counts.items()) if k not in ("SUCCESS", "SKIPPED")]
    return counts, problems


def _run(argv: list[str], out: Path, log: Path) -> int:
    argv = [*argv, "-o", str(out)]
    with log.open("wb") as sink:
        return subprocess.run(
            argv, stdout=sink, stderr=subprocess.STDOUT, timeout=600, check=False
        ).returncode


@nox.session(name="conformance-skills")
def conformance_skills(session: nox.Session) -> None:
    """The seven sep-2640 scenarios of conformance 0.2.0-alpha.12: three server scenarios
    against `mcpkit skills serve examples/skills`, four client scenarios with
    `conformance/skills_client.py`; each must run every check and pass it (rules 2-4)."""
    sys.path.insert(0, str(ROOT / "conformance"))
    import harness  # conformance/harness.py: ports and served processes

    sync(session, "mcpkit-ext-skills")
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    prefix = loopback_prefix(session)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    cli = [python, "-m", "mcpkit.cli.main"]
    server_run = [python, toolchain, "run", SUITE, "--", "server"]
    failures: list[str] = []

    def judge(name: str, status: int, out: Path) -> None:
        counts, problems = scenario_problems(out, name)
        if status != 0:
            problems.append(f"exit status {status}")
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no checks"
        session.log(f"{name}: {shown}" + (f"  <- {'; '.join(problems)}" if problems else ""))
        if problems:
            failures.append(f"{name} ({'; '.join(problems)}; see {logs / (name + '.txt')})")

    serve = [*cli, "skills", "serve", str(ROOT / "examples" / "skills"), "--transport", "http"]
    serve += ["--host", "127.0.0.1", "--port", "0"]
    with harness.served(serve, logs / "skills-server.log") as url:
        for name in SERVER_SCENARIOS:
            argv = [*server_run, "--url", url, "--scenario", name]
            argv += ["--spec-version", "2026-07-28", "--force"]
            judge(name, _run(argv, logs / name, logs / f"{name}.txt"), logs / name)
    command = f"{python} {ROOT / 'conformance' / 'skills_client.py'}"
    for name in CLIENT_SCENARIOS:
        argv = [*prefix, python, toolchain, "run", SUITE, "--", "client"]
        argv += ["--command", command, "--scenario", name]
        judge(name, _run(argv, logs / name, logs / f"{name}.txt"), logs / name)
    # Rule 4: the guard must call a run against a server without the extension "not run".
    demo = [*cli, "demo", "--host", "127.0.0.1", "--port", "0"]
    with harness.served(demo, logs / "control-demo.log") as url:
        out = logs / "control-without-extension"
        argv = [*server_run, "--url", url, "--scenario", SERVER_SCENARIOS[0]]
        argv += ["--spec-version", "2026-07-28", "--force"]
        _run(argv, out, logs / "control-without-extension.txt")
    counts, problems = scenario_problems(out, SERVER_SCENARIOS[0])
    shown = f"{problems[:2]} and {len(problems) - 2} more" if len(problems) > 2 else problems
    session.log(f"control (mcpkit demo, no extension): {dict(counts)} -> {shown}")
    if "not run: no sep-2640- check succeeded" not in problems:
        failures.append("the 'not run' guard did not flag a server without the extension")
    if failures:
        session.error("conformance-skills: " + "; ".join(failures))
