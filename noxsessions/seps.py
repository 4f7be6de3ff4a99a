"""Conformance per SEP: ``uv run nox -s "conformance(sep='2663')"`` runs exactly the
official suite's scenarios that exercise one SEP, server and client side.

Rules:
1. One parametrized session, one entry per ``sep-NNNN`` key of ``conformance/seps.toml``
   (``uv run nox -l`` lists them). Not a default session: the default conformance
   sessions already run every one of these scenarios once (``conformance/sep_map.py`` rule
   4, checked by ``tools/tests/test_seps.py``), so ``uv run nox`` runs none twice.
2. A SEP session runs each of its scenarios in exactly the cells the default sessions
   run it in (suite version, ``--spec-version``, peer): the same demo server, tasks
   demo, skills server, ``conformance/client.py`` and ``conformance/skills_client.py``,
   served on loopback port 0 (``conformance/harness.py``); clients run inside a
   loopback-only network namespace.
3. A cell fails on a non-zero exit, a FAILURE check, a WARNING where its default session
   fails on warnings (0.1.16, tasks, skills), and on a SKIPPED check not listed with a
   reason in ``[allowed_skips]`` or no succeeded check at all (harness rule 4: the
   suite's PASSED for 0/0 does not count).
   Logs: ``.nox/conformance-sep-NNNN/tmp/logs/``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nox

from noxsessions.common import logs_dir, loopback_prefix

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conformance"))

import harness  # noqa: E402  (conformance/harness.py: served processes, verdicts)
import sep_map  # noqa: E402  (conformance/sep_map.py: the table and its cells)

TABLE = sep_map.load()
PEER_DISTRIBUTIONS = {
    "demo": "mcpkit-core",
    "tasks-demo": "mcpkit-ext-tasks",
    "skills-server": "mcpkit-ext-skills",
    "client": "mcpkit-ext-auth",
    "skills-client": "mcpkit-ext-skills",
}
"""The distribution each peer needs installed."""
STRICT_SESSIONS = frozenset({"conformance-tasks", "conformance-skills"})
"""Default sessions that fail on a WARNING (as do the 0.1.16 runs)."""
CELLS_AT_ONCE = 2


def _server_argv(python: str, peer: str) -> list[str]:
    cli = [python, "-m", "mcpkit.cli.main"]
    if peer == "demo":
        argv = [*cli, "demo"]
    elif peer == "tasks-demo":
        argv = [*cli, "run", "mcpkit.ext.tasks.demo:build_server", "--transport", "http"]
    elif peer == "skills-server":
        argv = [*cli, "skills", "serve", str(ROOT / "examples" / "skills"), "--transport", "http"]
    else:
        raise ValueError(f"no server peer {peer!r}")
    return [*argv, "--host", "127.0.0.1", "--port", "0"]


CLIENT_SCRIPTS = {"client": "client.py", "skills-client": "skills_client.py"}


@contextlib.contextmanager
def _servers(python: str, peers: set[str], logs: Path) -> Generator[dict[str, str]]:
    """The server peers among ``peers``, each started once; yields peer -> URL."""
    with contextlib.ExitStack() as stack:
        urls = {
            peer: stack.enter_context(
                harness.served(_server_argv(python, peer), logs / f"{peer}.log")
            )
            for peer in sorted(peers - set(CLIENT_SCRIPTS))
        }
        yield urls


def judge(cell: sep_map.Cell, status: int, out: Path) -> tuple[str, list[str]]:
    """Rule 3 for one cell: its summary line and its problems."""
    counts = harness.check_counts(out)
    problems = harness.unrun_checks(out, cell.scenario, TABLE.allowed_skips)
    if status != 0:
        problems.append(f"exit status {status}")
    if counts.get("FAILURE", 0):
        problems.append(f"{counts['FAILURE']} FAILURE")
    strict = cell.version == "0.1.16" or cell.session in STRICT_SESSIONS
    if strict and counts.get("WARNING", 0):
        problems.append(f"{counts['WARNING']} WARNING")
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no checks"
    return shown, problems


def _label(cell: sep_map.Cell) -> str:
    at = f"@{cell.revision}" if cell.revision else ""
    return f"{cell.side} {cell.scenario} ({cell.version}{at}, {cell.peer}; as in {cell.session})"


@nox.session(name="conformance", default=False)
@nox.parametrize("sep", [key.sep for key in TABLE.sep_keys()])
def conformance(session: nox.Session, sep: str) -> None:
    """The official suite's scenarios of one SEP (conformance/seps.toml), server and
    client side, in every cell the default sessions run them in; every check must run
    and pass (rules 1-3)."""
    key = TABLE.keys[f"sep-{sep}"]
    snaps = {version: sep_map.snapshot(version) for version in TABLE.pinned}
    cells = sep_map.sep_cells(TABLE, sep_map.default_cells(TABLE, snaps), key.name)
    if not cells:
        session.error(f"{key.name}: no cell to run (conformance/seps.toml)")
    peers = {cell.peer for cell in cells}
    dists = sorted({PEER_DISTRIBUTIONS[peer] for peer in peers})
    args = ["uv", "sync", "--locked", "--no-default-groups"]
    for dist in dists:
        args += ["--package", dist]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})
    logs = logs_dir(session)
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    prefix = loopback_prefix(session) if peers & set(CLIENT_SCRIPTS) else []
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    session.log(f"{key.name} ({key.title}): {len(cells)} cells, peers {', '.join(sorted(peers))}")

    def one(numbered: tuple[int, sep_map.Cell], urls: dict[str, str]) -> tuple[str, list[str]]:
        number, cell = numbered
        out = logs / f"{number:02d}-{cell.scenario.replace('/', '_')}"
        argv = [python, toolchain, "run", f"conformance@{cell.version}", "--", cell.side]
        if cell.peer in CLIENT_SCRIPTS:
            command = f"{python} {ROOT / 'conformance' / CLIENT_SCRIPTS[cell.peer]}"
            argv = [*prefix, *argv, "--command", command]
        else:
            argv += ["--url", urls[cell.peer]]
        argv += ["--scenario", cell.scenario, "-o", str(out)]
        if cell.revision:
            argv += ["--spec-version", cell.revision, "--force"]
        with out.with_suffix(".txt").open("wb") as log:
            status = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, timeout=600, check=False
            ).returncode
        shown, problems = judge(cell, status, out)
        line = f"{_label(cell)}: {shown}" + (f"  <- {'; '.join(problems)}" if problems else "")
        return line, [f"{_label(cell)}: {p} (see {out}.txt)" for p in problems]

    with (
        _servers(python, peers, logs) as urls,
        ThreadPoolExecutor(max_workers=CELLS_AT_ONCE) as pool,
    ):
        results = list(pool.map(one, enumerate(cells), [urls] * len(cells)))
    failures: list[str] = []
    for line, problems in results:
        session.log(line)
        failures += problems
    if failures:
        session.error(f"conformance(sep='{sep}'): " + "; ".join(failures))
