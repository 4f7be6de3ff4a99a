"""Helpers every nox session shares: installing a distribution alone, running pytest,
a fresh logs directory, and Debian packages for the real services tests start.

Rules:
1. ``sync`` installs one workspace member alone (``uv sync --locked --package``), with only
   the dependency groups named: a missing dependency declaration fails its session.
2. ``ensure_apt`` installs the Debian packages whose programs are missing, with apt-get (as
   root, or with password-less sudo), and fails the session when it cannot: a test that
   needs a real service never skips.
3. Paths named after ``--`` replace a session's default test paths and run in one process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

SBIN_DIRS = ("/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
"""Where Debian puts the programs ``ensure_apt`` checks (``/usr/sbin`` is not on every
user's PATH: haproxy and nginx live there)."""


def sync(session: nox.Session, package: str, *groups: str) -> None:
    """Install ``package`` (a workspace member) alone, plus its dependency ``groups``."""
    args = ["uv", "sync", "--locked", "--package", package, "--no-default-groups"]
    for group in groups:
        args += ["--group", group]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def pytest(session: nox.Session, *paths: str, workers: int = 0) -> None:
    """Run pytest over ``paths``; positional arguments after ``--`` that name files or
    directories replace them (``uv run nox -s core -- packages/mcpkit-core/tests/http -x``),
    options are passed through.

    ``workers``: with no paths named, the tests run in that many pytest-xdist worker
    processes (the distribution's ``test`` group has ``pytest-xdist``); 0 = in this
    process. ``-n N`` among the options overrides it (``-- -n 0``: one process, in order).
    Every test is written to run beside others: free ports, its own temporary files and
    processes, bounds at least 5x what it measures."""
    args = list(session.posargs)
    if any(Path(a.split("::")[0]).exists() for a in args if not a.startswith("-")):
        paths, workers = (), 0
    if any(a.startswith(("-n", "--numprocesses")) for a in args):
        workers = 0  # the caller chose
    parallel = ["-n", str(workers)] if workers > 0 else []
    session.run(
        "python", "-m", "pytest", *parallel, *paths, *args, env={"PYTHONDONTWRITEBYTECODE": "1"}
    )


def xdist_workers() -> int:
    """Worker processes for a whole distribution's tests: two per CPU (most tests wait on
    sockets, processes and timers rather than compute: core's 2253 tests take 292 s with
    2 workers and 179 s with 4 on 2 CPUs), at least 2, at most 8."""
    import os

    return min(8, max(2, 2 * (os.cpu_count() or 1)))


def logs_dir(session: nox.Session) -> Path:
    """A fresh ``logs`` directory under the session's tmp dir."""
    logs = Path(session.create_tmp()) / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    return logs


def find_program(name: str) -> str | None:
    """The path of program ``name``: on PATH, or in one of ``SBIN_DIRS``; None when absent."""
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN_DIRS:
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    return None


def ensure_apt(session: nox.Session, programs: dict[str, str]) -> dict[str, str]:
    """Make sure each program of ``programs`` (program name -> Debian package) is installed,
    or fail the session (rule 2): the missing packages are installed with one
    ``apt-get install``, after ``apt-get update`` when the package lists do not know them.
    Returns program name -> its path. Never a warning: a skipped test would pass for the
    wrong reason."""
    missing = sorted({pkg for prog, pkg in programs.items() if find_program(prog) is None})
    if missing:
        if shutil.which("apt-get") is None:
            session.error(f"{', '.join(missing)} not installed and there is no apt-get")
        sudo: list[str] = []
        if os.geteuid() != 0:
            if shutil.which("sudo") is None:
                session.error(f"{', '.join(missing)} not installed; installing needs root or sudo")
            sudo = ["sudo", "-n"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = [*sudo, "apt-get", "install", "-y", "--no-install-recommends", *missing]
        outputs: list[str] = []
        for argv in (install, [*sudo, "apt-get", "update"], install):
            done = subprocess.run(argv, env=env, capture_output=True, timeout=900, check=False)
            outputs.append(
                f"$ {' '.join(argv)} -> {done.returncode}\n{done.stderr.decode()[-2000:]}"
            )
            if argv is install and done.returncode == 0:
                break
        session.log(f"apt-get install {' '.join(missing)}: done")
        absent = [prog for prog in programs if find_program(prog) is None]
        if absent:
            session.error(f"apt-get could not install {', '.join(absent)}:\n" + "\n".join(outputs))
    return {prog: find_program(prog) or prog for prog in programs}


NO_NETNS = (
    "no loopback-only network namespace here (`unshare -n` needs root or user namespaces); "
    "the peers listen on all interfaces, so they are not started. Run as root (CI does), or "
    "set MCPKIT_ALLOW_ALL_INTERFACES=1 to run them without a namespace."
)


def loopback_prefix(session: nox.Session) -> list[str]:
    """argv prefix that runs a command in a fresh loopback-only network namespace; skips
    the session (or, with MCPKIT_ALLOW_ALL_INTERFACES=1, runs without one) where that is
    impossible."""
    if shutil.which("unshare") and shutil.which("ip"):
        probe = subprocess.run(
            ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, check=False
        )
        if probe.returncode == 0:
            return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "netns"]
    if os.environ.get("MCPKIT_ALLOW_ALL_INTERFACES") == "1":
        session.warn("running WITHOUT a network namespace: " + NO_NETNS)
        return []
    session.skip(NO_NETNS)
    return []
