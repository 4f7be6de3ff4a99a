"""Each distribution at its lowest declared dependencies: the bounds we declare are true.

Usage: ``python tools/lowest.py WORKDIR [--full] [--dist NAME ...] [-- PYTEST ARGS]``
(the nox sessions ``lowest`` and ``lowest-full`` run it). Exits non-zero, listing every problem.

Rules:
1. The distributions are the workspace's members (``tools/workspace.py``).
2. Resolution happens in fresh virtual environments under ``WORKDIR`` with
   ``uv pip ... --resolution lowest-direct``; the tracked ``uv.lock`` is read (rule 4),
   never written, and the tracked tree is never edited. A requirement on another
   ``mcpkit-*`` distribution is satisfied from its workspace directory.
3. Bounds (:func:`untrue_bounds`): the distribution with every extra, resolved at
   lowest-direct (``uv pip compile``), must get each direct dependency at exactly the
   lower bound it declares. A higher version means the bound cannot be installed (a
   release that does not exist, or another requirement raising it): raise the bound.
   Every direct dependency must declare a lower bound.
4. Tests: the distribution (no extras, as its own nox session installs it) plus its
   ``test`` dependency group, at lowest-direct, with the test tools (:data:`TOOLS`:
   pytest, its plugins, hypothesis) constrained to the versions in ``uv.lock``. The
   marked run leaves out the peer SDKs (:data:`PEERS`: they require newer releases of our
   own dependencies, e.g. ``mcp`` needs a newer pydantic and starlette), so each runtime
   dependency must be installed at exactly its bound there; the full run keeps them and
   names each dependency they raise.
5. By default the tests marked ``lowest`` and the docs tests (``-m lowest``; each
   package's ``conftest.py`` registers the marker) run, only the modules that mark some
   collected; ``--full`` runs all of them. Two distributions run side by side, each
   one's output printed whole when it ends.

Only the standard library: ``tools/tests/test_lowest.py`` imports it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from workspace import ROOT, Dependency, Distribution, distributions, normalise, version_key

TOOLS = re.compile(r"^(pytest|pytest-.+|hypothesis|execnet|pluggy|iniconfig)$")
"""Test tools and their own machinery: kept at their locked versions (rule 4)."""
PEERS = frozenset({"mcp"})
"""Test-only peers left out of the marked run (rule 4); tests marked ``lowest`` do not
import them."""


def locked_versions(lock_file: Path) -> dict[str, str]:
    """Package name -> version from a ``uv.lock``."""
    data = tomllib.loads(lock_file.read_text())
    return {normalise(p["name"]): str(p["version"]) for p in data["package"] if "version" in p}


def as_argument(req: Dependency, members: dict[str, Distribution]) -> str:
    """Rule 2: a requirement as a ``uv pip`` argument; a workspace member as its directory."""
    extras = f"[{','.join(req.extras)}]" if req.extras else ""
    marker = f" ; {req.marker}" if req.marker else ""
    if req.name in members:
        return f"{members[req.name].path}{extras}{marker}"
    return f"{req.name}{extras}{','.join(req.specifiers)}{marker}"


def workspace_closure(reqs: Iterable[Dependency], members: dict[str, Distribution]) -> list[str]:
    """The directories of the workspace members ``reqs`` need, directly or through
    another member (each with the extras asked of it)."""
    wanted: dict[str, set[str]] = {}
    todo = [r for r in reqs if r.name in members]
    while todo:
        req = todo.pop()
        seen = wanted.setdefault(req.name, set())
        new = set(req.extras) - seen
        if seen and not new:
            continue
        seen |= new
        dist = members[req.name]
        todo += [r for r in dist.dependencies if r.name in members]
        for extra in new:
            todo += [r for r in dist.extras.get(extra, ()) if r.name in members]
    return [
        f"{members[name].path}[{','.join(sorted(extras))}]" if extras else str(members[name].path)
        for name, extras in sorted(wanted.items())
    ]


def untrue_bounds(dist: Distribution, resolved: dict[str, str]) -> list[str]:
    """Rule 3: each direct dependency (extras included) of ``dist`` that is not resolved
    at exactly its declared lower bound, or declares none; workspace members and
    requirements whose marker excludes this interpreter (absent from ``resolved``) are
    not judged."""
    problems: list[str] = []
    all_reqs = [*dist.dependencies, *(r for rs in dist.extras.values() for r in rs)]
    for req in all_reqs:
        if req.name.startswith("mcpkit-"):
            continue
        lower = req.lower
        if lower is None:
            problems.append(f"{dist.name}: {req.name} declares no lower bound")
            continue
        got = resolved.get(req.name)
        if got is not None and version_key(got) != version_key(lower):
            problems.append(
                f"{dist.name}: {req.name}>={lower} resolves to {got} at lowest-direct: "
                f"raise the bound to {got}"
            )
    return problems


def parse_pins(text: str) -> dict[str, str]:
    """``name==version`` lines of a ``uv pip compile``/``uv pip freeze`` output."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line and " @ " not in line:
            name, _, version = line.partition("==")
            pins[normalise(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


def _uv(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["uv", "--no-config", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )


def check_distribution(
    dist: Distribution,
    members: dict[str, Distribution],
    work: Path,
    full: bool,
    pytest_args: tuple[str, ...] = (),
) -> list[str]:
    """Rules 3-5 for one distribution; returns its problems."""
    python = sys.executable
    lowest = ["--resolution", "lowest-direct", "--quiet"]
    base = ["--python", python, *lowest]
    everything = [*dist.dependencies, *(r for rs in dist.extras.values() for r in rs)]
    extras = ",".join(sorted(dist.extras))
    top = f"{dist.path}[{extras}]" if extras else str(dist.path)
    args = [top, *workspace_closure(everything, members)]
    compiled = _uv(
        "pip", "compile", *base, "--no-header", "--no-annotate", "-", stdin=input_of(args)
    )
    if compiled.returncode != 0:
        return [f"{dist.name}: lowest-direct resolution failed:\n{compiled.stderr[-3000:]}"]
    problems = untrue_bounds(dist, parse_pins(compiled.stdout))
    # Rule 4: the test environment.
    locked = locked_versions(ROOT / "uv.lock")
    venv = work / dist.name
    shutil.rmtree(venv, ignore_errors=True)
    made = _uv("venv", "--quiet", "--python", python, str(venv))
    if made.returncode != 0:
        return [*problems, f"{dist.name}: uv venv failed: {made.stderr[-2000:]}"]
    constraints = work / f"{dist.name}.tools.txt"
    constraints.write_text(
        "".join(f"{n}=={v}\n" for n, v in sorted(locked.items()) if TOOLS.match(n))
    )
    test_group = [r for r in dist.test_group if full or r.name not in PEERS]
    test_reqs = [as_argument(r, members) for r in test_group if r.name not in members]
    # Workspace members editable, as `uv sync` installs them for each nox session.
    local = [str(dist.path), *workspace_closure([*dist.dependencies, *test_group], members)]
    install = [arg for path in dict.fromkeys(local) for arg in ("-e", path)]
    env = {"VIRTUAL_ENV": str(venv)}
    into = ["--python", str(venv / "bin" / "python"), *lowest]
    done = _uv("pip", "install", *into, "-c", str(constraints), *install, *test_reqs, env=env)
    if done.returncode != 0:
        return [*problems, f"{dist.name}: lowest-direct install failed:\n{done.stderr[-3000:]}"]
    frozen = parse_pins(_uv("pip", "freeze", "--python", str(venv / "bin" / "python")).stdout)
    out: list[str] = [f"== {dist.name} at lowest-direct:"]
    for req in dist.dependencies:
        if req.name.startswith("mcpkit-") or req.name not in frozen:
            continue
        note = ""
        if req.lower and version_key(frozen[req.name]) != version_key(req.lower):
            note = f"  (raised from {req.lower} by the test group)"
            if not full:
                problems.append(
                    f"{dist.name}: {req.name} installed at {frozen[req.name]}, "
                    f"not its bound {req.lower}: the marked tests do not prove it"
                )
        out.append(f"   {req.name}=={frozen[req.name]}{note}")
    tests = list(pytest_args) or ([str(dist.path / "tests")] if full else marked_files(dist))
    selection = ["-n", "2"] if full else ["-m", "lowest"]
    ran = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *selection,
            *tests,
        ],
        cwd=str(dist.path),
        # as in a nox session: the environment is the project's (mcpkit install reads it)
        env={
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "VIRTUAL_ENV": str(venv),
            "UV_PROJECT_ENVIRONMENT": str(venv),
        },
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    out.append(ran.stdout + ran.stderr)
    print("\n".join(out), flush=True)  # whole, as distributions run side by side
    if ran.returncode != 0:
        problems.append(f"{dist.name}: tests at lowest-direct failed (exit {ran.returncode})")
    return problems


def marked_files(dist: Distribution) -> list[str]:
    """Rule 5: the test modules that mark tests ``lowest``, collected alone (the others
    may import a peer SDK the marked run leaves out)."""
    found = [
        str(p)
        for p in sorted((dist.path / "tests").rglob("test_*.py"))
        if re.search(r"\bpytest\.mark\.lowest\b", p.read_text("utf-8"))
    ]
    if not found:
        raise SystemExit(f"{dist.name}: no test is marked `lowest`")
    return found


def input_of(args: list[str]) -> str:
    """``uv pip compile -`` reads its requirements from standard input: one a line."""
    return "\n".join(args) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--full", action="store_true", help="every test, not only `lowest`")
    parser.add_argument("--dist", action="append", default=[], help="only these distributions")
    argv = sys.argv[1:] if argv is None else argv
    pytest_args = tuple(argv[argv.index("--") + 1 :]) if "--" in argv else ()
    opts = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    members = {d.name: d for d in distributions()}
    unknown = [n for n in opts.dist if normalise(n) not in members]
    if unknown:
        parser.error(
            f"not a workspace distribution: {', '.join(unknown)} (one of {', '.join(members)})"
        )
    chosen = [members[normalise(n)] for n in opts.dist] if opts.dist else list(members.values())
    opts.workdir = opts.workdir.resolve()  # tests run from each distribution's folder
    opts.workdir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    # Two distributions at a time: most of each run waits on the network and subprocesses.
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(check_distribution, d, members, opts.workdir, opts.full, pytest_args)
            for d in chosen
        ]
        for run in runs:
            problems += run.result()
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
