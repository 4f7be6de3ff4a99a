"""nox session of the multi-replica tests: real redis-server and HAProxy from apt.

Rules:
1. ``scale`` installs mcpkit-core with its ``scale`` group (the ``redis`` and ``fast``
   extras, the tasks extension) and runs ``scale/``; ``redis-server``, ``haproxy`` and
   ``nginx`` (the documented variant) are installed with apt when missing, and the
   session fails, never skips, when it cannot.
2. Without test paths after ``--``, the official conformance suites then run through
   HAProxy in front of three replicas (``scale/conformance_runs.py``: the runs of
   ``conformance-server`` against ``mcpkit demo`` replicas, the scenarios of
   ``conformance-tasks`` against tasks-demo replicas on Redis); any failure fails the
   session. Node comes from ``conformance/toolchain.py``. Logs:
   ``.nox/scale/tmp/logs/``.
3. ``MCPKIT_SOAK_S`` (seconds) lengthens the soak test (default 60).
4. Without test paths, ``scale/`` runs in three pytest-xdist workers, a file per worker
   at a time: the whole session stays within about 6 minutes.
"""

from __future__ import annotations

from pathlib import Path

import nox

from noxsessions.common import ensure_apt, logs_dir, pytest, sync

ROOT = Path(__file__).resolve().parent.parent


@nox.session(name="scale")
def scale(session: nox.Session) -> None:
    """Several replicas on Redis behind a real load balancer (scale/): the tests, then the
    conformance suites through the balancer."""
    programs = ensure_apt(
        session, {"redis-server": "redis-server", "haproxy": "haproxy", "nginx": "nginx"}
    )
    sync(session, "mcpkit-core", "scale")
    session.env["MCPKIT_REDIS_SERVER"] = programs["redis-server"]
    session.env["MCPKIT_HAPROXY"] = programs["haproxy"]
    session.env["MCPKIT_NGINX"] = programs["nginx"]
    named = [a for a in session.posargs if not a.startswith("-")]
    if named and any(Path(a.split("::")[0]).exists() for a in named):
        pytest(session, "scale")
        return  # rule 2: tests named, the suites are not run
    # rule 4: three pytest-xdist workers, one test file each at a time (a file's tests share
    # its cluster); the tests mostly wait on processes starting and on timers
    session.run(
        "python",
        "-m",
        "pytest",
        "-n",
        "3",
        "--dist",
        "loadfile",
        "scale",
        *session.posargs,
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    toolchain = str(ROOT / "conformance" / "toolchain.py")
    session.run("python", toolchain, "ensure", silent=True)
    session.run("python", str(ROOT / "scale" / "conformance_runs.py"), str(logs_dir(session)))
