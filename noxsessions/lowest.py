"""nox sessions ``lowest`` and ``lowest-full``: each distribution's tests at the lowest
dependencies it declares (``uv pip --resolution lowest-direct``), so its lower bounds
are true.

Rules:
1. ``lowest`` (in the default run): for each distribution, its bounds resolved with every
   extra, then its tests marked ``lowest`` (the docs tests and the tests of each
   dependency surface) in a fresh environment at lowest-direct; test tools stay at their
   locked versions (``tools/lowest.py``).
2. ``lowest-full`` (opt-in, ``uv run nox -s lowest-full``): the same with every test.
3. Neither reads nor writes the tracked ``uv.lock`` for resolution; the environments live
   in the session's tmp dir. ``-- --dist NAME`` narrows to one distribution.
4. The Redis tests run against a real ``redis-server`` (installed when missing).
"""

from __future__ import annotations

from pathlib import Path

import nox

from noxsessions.common import ensure_apt
from noxsessions.release import PACKAGING

ROOT = Path(__file__).resolve().parent.parent


def _run(session: nox.Session, *mode: str) -> None:
    ensure_apt(session, {"redis-server": "redis-server"})
    session.install(PACKAGING)  # tools/workspace.py reads requirements with it
    work = Path(session.create_tmp()) / "lowest"
    tool = str(ROOT / "tools" / "lowest.py")
    session.run("python", tool, str(work), *mode, *session.posargs)


@nox.session
def lowest(session: nox.Session) -> None:
    """Each distribution's bounds at lowest-direct, and its tests marked `lowest` there."""
    _run(session)


@nox.session(name="lowest-full", default=False)
def lowest_full(session: nox.Session) -> None:
    """Each distribution's whole test suite at lowest-direct (opt-in)."""
    _run(session, "--full")
