"""The test matrix: one session per distribution, plus lint, types, build and the peers.

Rules:
1. Each distribution's session installs that distribution alone, with only its declared
   dependencies and its own ``test`` dependency group, from the lock file; a missing
   dependency declaration therefore fails there.
2. ``uv run nox`` (no arguments) runs the default sessions: everything CI runs.
3. Sessions that need Node.js get Node 22 from the npm registry via
   ``conformance/toolchain.py``; they need nothing else from the network.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
DISTRIBUTIONS = {
    "mcpkit-core": ROOT / "packages" / "mcpkit-core",
}


def sync(session: nox.Session, package: str, *groups: str) -> None:
    """Install ``package`` (a workspace member) alone, plus its dependency ``groups``."""
    args = ["uv", "sync", "--locked", "--package", package, "--no-default-groups"]
    for group in groups:
        args += ["--group", group]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def pytest(session: nox.Session, *paths: str) -> None:
    session.run(
        "python", "-m", "pytest", *paths, *session.posargs, env={"PYTHONDONTWRITEBYTECODE": "1"}
    )


@nox.session(name="core")
def core(session: nox.Session) -> None:
    """mcpkit-core alone: its tests, with only its declared dependencies."""
    sync(session, "mcpkit-core", "test")
    pytest(session, "packages/mcpkit-core/tests")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over every distribution, the conformance client and the benchmarks."""
    session.install("ruff>=0.14")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


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


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every distribution; metadata checked with twine."""
    session.install("twine>=6", "build")
    out = Path(session.create_tmp()) / "dist"
    for name, path in DISTRIBUTIONS.items():
        session.log(f"building {name}")
        session.run("uv", "build", "--out-dir", str(out / name), str(path))
        built = sorted([*(out / name).glob("*.whl"), *(out / name).glob("*.tar.gz")])
        session.run("twine", "check", "--strict", *map(str, built))
    session.run("python", str(ROOT / "tools" / "check_wheels.py"), str(out))
