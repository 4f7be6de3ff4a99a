"""nox session ``build``: every distribution built, checked, and installed as users
install it, from a package index.

Rules:
1. The distributions are the workspace's members (``tools/workspace.py``), never a list
   kept here: a new member is built and installed without an edit.
2. Each is built (wheel and sdist, ``uv build``), its metadata checked with twine and the
   wheels' contents with ``tools/check_wheels.py``; then ``mcpkit-core`` alone, synced from
   the lock with no group, must hold no auth stack and import no extension
   (``tools/check_isolation.py``).
3. Then the same wheels and sdists are served by pypiserver on loopback and each
   distribution is installed by name alone into a fresh environment, pip and uv
   alternately, with provenance, isolation, a smoke of its docs' first example and the
   range check (``tools/index_install.py``). pypiserver and its WSGI server are pinned
   here and installed into the session; a failure to install them fails the session.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent.parent
INDEX_SERVER = ("pypiserver==2.4.2", "waitress>=3.0")
"""Rule 3: the local package index (pypiserver picks waitress, a threaded server, when
it is installed: installs run four at a time)."""


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every distribution; metadata checked with twine, contents with
    `tools/check_wheels.py`; `mcpkit-core` alone holds no auth stack and imports no
    extension (`tools/check_isolation.py`); then every distribution installed by name from
    a loopback index, pip and uv alternately (`tools/index_install.py`)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from workspace import distributions

    session.install("twine>=6", "build", *INDEX_SERVER)
    out = Path(session.create_tmp()) / "dist"
    shutil.rmtree(out, ignore_errors=True)  # check_wheels wants one wheel per distribution
    for dist in distributions():
        session.log(f"building {dist.name}")
        session.run("uv", "build", "--quiet", "--out-dir", str(out / dist.name), str(dist.path))
        built = sorted([*(out / dist.name).glob("*.whl"), *(out / dist.name).glob("*.tar.gz")])
        session.run("twine", "check", "--strict", *map(str, built), silent=True)
    session.run("python", str(ROOT / "tools" / "check_wheels.py"), str(out))
    # mcpkit-core alone (no dependency group) in its own environment: no auth stack is
    # installed, core imports no extension, the `mcpkit` command starts.
    core_only = Path(session.create_tmp()) / "core-only"
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--package",
        "mcpkit-core",
        "--no-default-groups",
        env={"UV_PROJECT_ENVIRONMENT": str(core_only)},
    )
    python = str(core_only / "bin" / "python")
    session.run(python, str(ROOT / "tools" / "check_isolation.py"), external=True)
    work = Path(session.create_tmp()) / "index-install"
    session.run("python", str(ROOT / "tools" / "index_install.py"), str(out), str(work))
