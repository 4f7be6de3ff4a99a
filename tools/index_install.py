"""Install every distribution as users do: by name alone, from a package index.

Usage: ``python tools/index_install.py DIST_DIR WORKDIR`` in an environment with
``pypiserver`` (the nox ``build`` session), where ``DIST_DIR`` holds one folder per
distribution with its wheel and sdist. Exits non-zero, listing every problem.

Rules:
1. The index: ``pypiserver`` on 127.0.0.1, on a port chosen by
   ``conformance/harness.py`` (``start_fresh``: retried when taken, never a fixed one),
   serving every built wheel and sdist; a name it does not hold is redirected to the
   public index (``--fallback-url``, :data:`PUBLIC`), where third-party packages come from.
2. Each distribution goes into its own fresh virtual environment by name alone,
   alternately with ``pip install NAME`` and ``uv pip install NAME``. No index is merged
   with ours (dependency confusion): pip is given our index only (the fallback reaches the
   public one for names we do not hold), with its configuration files and ``PIP_*`` index
   variables ignored; uv is given our index first and the public one as default with
   ``--index-strategy first-index``, its configuration ignored.
3. Provenance (:func:`provenance_problems`): every ``mcpkit-*`` distribution installed is
   one we built: the same version, and every file our wheel's ``RECORD`` lists installed
   with the same hash; pip's install report also names our index and our wheel's sha256.
4. Isolation: the ``mcpkit-*`` distributions installed are the one asked for and
   ``mcpkit-core``, nothing else.
5. Smoke: the environment imports the distribution's packages and serves its docs page's
   first example over stdio (``tools/smoke_example.py``); third-party packages the page's
   install block names (``pip install ...``, and the distribution's own extras) are
   installed first, as its readers do; an example that needs generated code first
   (:data:`SMOKE_SETUP`: protogen) has the page's generator command run before it.
6. Ranges (:func:`range_check`): a scratch copy of core one minor up and of the extension
   with the fewest dependencies requiring exactly that minor (``>=0.2,<0.3``), built from
   copies (the tracked tree is never edited), are served with our builds by a second index.
   That extension with our core pinned is refused by each resolver (non-zero exit, its
   conflict message) and is not installed; unpinned it installs with the new core; and
   our own build of it, installed by name there, keeps the core its range allows.

Standard library plus ``packaging`` (through ``tools/workspace.py``), and
``conformance/harness.py`` (the index process).
"""

from __future__ import annotations

import argparse
import csv
import email.parser
import hashlib
import importlib.metadata
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from docs_blocks import block, fences
from workspace import ROOT, Distribution, distributions, normalise, version_key

sys.path.insert(0, str(ROOT / "conformance"))
import harness

PUBLIC = "https://pypi.org/simple/"
"""The public index third-party packages come from (rule 1)."""
PIP_ENV_DROPPED = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX")
"""Rule 2: the pip settings that would add or replace an index."""
SMOKE = ROOT / "tools" / "smoke_example.py"


class SmokeSetup(NamedTuple):
    """What a page's first example needs first, as its user would do it: the page's
    docs-block ``block`` (one command) run with the environment's console scripts, in a
    scratch folder holding a copy of ``copies`` (repository folders), then ``path``
    (folders of that scratch folder) on ``PYTHONPATH``."""

    block: str
    copies: tuple[str, ...]
    path: tuple[str, ...]


SMOKE_SETUP = {
    # The generated module must exist before the example imports it.
    "mcpkit-exp-protogen": SmokeSetup(
        "protogen-cli", ("examples/protogen",), ("gen", "examples/protogen")
    ),
}
SMOKE_ENV = {"OTEL_SDK_DISABLED": "true"}
"""The otel example exports to an OTLP collector; none runs here (its SDK makes no-op
tracers). No other example reads it."""
PARALLEL = 4


class Built(NamedTuple):
    """A distribution's built wheel: name (normalised), version, path, sha256 of the file,
    and its RECORD (path -> hash) without the ``.dist-info`` entries."""

    name: str
    version: str
    wheel: Path
    sha256: str
    record: dict[str, str]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_built(wheel: Path) -> Built:
    """The facts rule 3 compares, from a wheel file."""
    with zipfile.ZipFile(wheel) as archive:
        record_name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        metadata = archive.read(record_name.replace("RECORD", "METADATA")).decode()
        rows = csv.reader(io.StringIO(archive.read(record_name).decode()))
        record = {row[0]: row[1] for row in rows if row and ".dist-info/" not in row[0]}
    fields = email.parser.HeaderParser().parsestr(metadata)  # core metadata is RFC 822
    return Built(normalise(fields["Name"]), fields["Version"], wheel, sha256_file(wheel), record)


def packages_of(built: Built) -> list[str]:
    """The import packages a wheel ships: each ``__init__.py`` whose parent package has
    none in the wheel (``mcpkit`` and ``mcpkit.ext`` are namespace packages)."""
    inits = {p.rsplit("/", 1)[0] for p in built.record if p.endswith("/__init__.py")}
    tops = sorted(p for p in inits if p.rsplit("/", 1)[0] not in inits)
    return [p.replace("/", ".") for p in tops]


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def installed(venv: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """Distribution name -> (version, RECORD path -> hash) of an environment."""
    found: dict[str, tuple[str, dict[str, str]]] = {}
    for info in site_packages(venv).glob("*.dist-info"):
        dist = importlib.metadata.Distribution.at(info)
        rows = csv.reader(io.StringIO(dist.read_text("RECORD") or ""))
        found[normalise(dist.metadata["Name"])] = (
            dist.version,
            {row[0]: row[1] for row in rows if len(row) > 1},
        )
    return found


def provenance_problems(
    asked: str,
    present: dict[str, tuple[str, dict[str, str]]],
    built: dict[str, Built],
    pip_report: dict[str, object] | None = None,
    index_url: str = "",
) -> list[str]:
    """Rules 3 and 4 for the environment that installed ``asked``: ``present`` is
    :func:`installed`; ``pip_report`` pip's ``--report`` (None for uv)."""
    problems: list[str] = []
    ours = {n for n in present if n.startswith("mcpkit-")}
    allowed = {asked, "mcpkit-core"}
    if asked not in ours:
        problems.append(f"{asked} is not installed")
    for extra in sorted(ours - allowed):
        problems.append(f"installing {asked} also installed {extra}")
    for name in sorted(ours & allowed):
        version, record = present[name]
        mine = built.get(name)
        if mine is None:
            problems.append(f"{name} {version} was not built here")
            continue
        if version != mine.version:
            problems.append(f"{name} {version} installed, {mine.version} built")
        changed = sorted(p for p, h in mine.record.items() if record.get(p) != h)
        if changed:
            problems.append(f"{name}: {len(changed)} files differ from our wheel: {changed[:3]}")
    if pip_report is not None:
        items = pip_report.get("install", [])
        assert isinstance(items, list)
        for item in items:
            meta, info = item["metadata"], item["download_info"]
            name = normalise(meta["name"])
            if not name.startswith("mcpkit-"):
                continue
            url = urlsplit(str(info.get("url", "")))
            digest = str(info.get("archive_info", {}).get("hashes", {}).get("sha256", ""))
            ours = urlsplit(index_url)
            if (url.scheme, url.netloc) != (ours.scheme, ours.netloc):
                problems.append(f"pip took {name} from {url.geturl()}, not our index")
            mine = built.get(name)
            if mine is not None and digest != mine.sha256:
                problems.append(f"pip installed {name} with sha256 {digest}, ours is {mine.sha256}")
    return problems


def docs_page(name: str, root: Path = ROOT) -> Path:
    """The page whose first example a distribution's smoke runs: core's is
    ``docs/server.md``; ``mcpkit-ext-NAME`` and ``mcpkit-exp-NAME``'s is
    ``docs/extensions/NAME.md``."""
    if name == "mcpkit-core":
        return root / "docs" / "server.md"
    return root / "docs" / "extensions" / f"{name.split('-', 2)[2]}.md"


def first_example(page: Path) -> str:
    """The first Python block marked ``# docs-example:``; ``LookupError`` when none."""
    for found in fences(page):
        if found.lang == "python" and found.body.startswith("# docs-example:"):
            return found.body
    raise LookupError(f"{page} has no `# docs-example:` Python block")


def third_party_installs(page: Path, name: str = "") -> list[str]:
    """Rule 5: the non-``mcpkit`` packages named by ``pip install`` lines of the page's
    first block that has any, and distribution ``name`` with extras (``name[codegen]``:
    the extras bring third-party packages; no other mcpkit distribution is named)."""
    for found in fences(page):
        lines = [line for line in found.body.splitlines() if "pip install" in line]
        if not lines:
            continue
        names: list[str] = []
        for line in lines:
            words = shlex.split(line.split("pip install", 1)[1], comments=True)
            own = (f"{name}[",) if name else ()
            names += [w for w in words if not w.startswith(("-", "mcpkit")) or w.startswith(own)]
        return names
    return []


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Rule 2: this environment without pip's index settings, its configuration files
    ignored."""
    env = {k: v for k, v in os.environ.items() if k not in PIP_ENV_DROPPED}
    env.pop("VIRTUAL_ENV", None)
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return {**env, **(extra or {})}


def run(
    argv: list[str], log: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> int:
    """Run ``argv`` in ``cwd``, its output appended to ``log``; its exit status."""
    started = time.monotonic()
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env or clean_env(),
        cwd=str(cwd),
        timeout=900,
        check=False,
    )
    took = time.monotonic() - started
    log.append(
        f"$ {shlex.join(argv)}  -> {done.returncode} in {took:.1f} s\n{done.stdout}{done.stderr}"
    )
    return done.returncode


def new_venv(path: Path, log: list[str], seed: bool) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    seeded = ["--seed"] if seed else []
    argv = ["uv", "--no-config", "venv", "--quiet", *seeded, "--python", sys.executable, str(path)]
    if run(argv, log) != 0:
        raise RuntimeError(f"could not create {path}")
    return path / "bin" / "python"


def installer(tool: str, python: Path, index_url: str) -> Callable[..., list[str]]:
    """Rule 2: the argv prefix installing into ``python``'s environment from our index."""

    def argv(*more: str) -> list[str]:
        if tool == "pip":
            pip = [str(python), "-m", "pip", "install", "--no-compile"]
            return [*pip, "--index-url", index_url, *more]
        return [
            "uv", "--no-config", "pip", "install", "--python", str(python),
            "--index", index_url, "--default-index", PUBLIC,
            "--index-strategy", "first-index", *more,
        ]  # fmt: skip

    return argv


def install_one(
    name: str, tool: str, built: dict[str, Built], index_url: str, work: Path
) -> tuple[list[str], list[str]]:
    """Rules 2-5 for one distribution; returns (log, problems)."""
    log: list[str] = []
    started = time.monotonic()
    python = new_venv(work / f"venv-{name}", log, seed=tool == "pip")
    venv = python.parent.parent
    command = installer(tool, python, index_url)
    report_file = work / f"{name}.pip-report.json"
    report = ["--report", str(report_file)] if tool == "pip" else []
    if run(command(*report, name), log) != 0:
        return log, [f"{tool} install {name} failed"]
    pip_report = json.loads(report_file.read_text()) if tool == "pip" else None
    problems = provenance_problems(name, installed(venv), built, pip_report, index_url)
    page = docs_page(name)
    needs = third_party_installs(page, name)
    if needs and run(command(*needs), log) != 0:
        problems.append(f"{tool} install {' '.join(needs)} (from {page.name}) failed")
    imports = "; ".join(f"import {p}" for p in packages_of(built[name]))
    if run([str(python), "-c", imports], log) != 0:
        problems.append(f"{name}: `{imports}` failed")
    example = work / f"{name}-example.py"
    example.write_text(first_example(page))
    env = clean_env(SMOKE_ENV)
    setup = SMOKE_SETUP.get(name)
    if setup is not None:
        scratch = work / f"{name}-setup"
        for folder in setup.copies:
            shutil.copytree(ROOT / folder, scratch / folder, dirs_exist_ok=True)
        argv = shlex.split(block(page, setup.block), comments=True)
        argv[0] = str(python.parent / argv[0])  # the console script of this environment
        if run(argv, log, cwd=scratch) != 0:
            problems.append(f"{name}: `{shlex.join(argv)}` ({setup.block}) failed")
        env["PYTHONPATH"] = os.pathsep.join(str(scratch / p) for p in setup.path)
    if run([str(python), str(SMOKE), str(example)], log, env) != 0:
        problems.append(f"{name}: the first example of {page.relative_to(ROOT)} failed over stdio")
    log.append(f"{name}: {tool} install, checks and smoke in {time.monotonic() - started:.1f} s")
    return log, [f"{name} ({tool}): {p}" for p in problems]


def serve_index(folders: list[Path], log_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Rule 1: pypiserver on loopback over ``folders``; the process and its simple URL."""
    server = shutil.which("pypi-server", path=str(Path(sys.executable).parent)) or "pypi-server"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [server, "run", "-i", "127.0.0.1", "-p", str(port), "--fallback-url", PUBLIC]
        argv += map(str, folders)
        with log_file.open("ab") as sink:
            return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)

    proc, port = harness.start_fresh(start, "pypi-server", log_file)
    return proc, f"http://127.0.0.1:{port}/simple/"


def bump_minor(version: str) -> str:
    """``0.1.3`` -> ``0.2.0``."""
    major, minor = [*version_key(version), 0, 0][:2]
    return f"{major}.{minor + 1}.0"


def edited_pyproject(text: str, version: str, core_range: str | None) -> str:
    """A copy's ``pyproject.toml`` at ``version`` and, when given, requiring
    ``mcpkit-core`` in ``core_range`` (extras kept). ``ValueError`` when the file does
    not have exactly one ``version`` line."""
    text, count = re.subn(r'^version = "[^"]*"$', f'version = "{version}"', text, flags=re.M)
    if count != 1:
        raise ValueError(f"expected one version line, found {count}")
    if core_range is not None:
        text = re.sub(r'"mcpkit-core(\[[^\]]*\])?[^"]*"', rf'"mcpkit-core\1{core_range}"', text)
    return text


def build_copy(dist: Distribution, version: str, core_range: str | None, work: Path) -> Path:
    """Rule 6: a wheel of a scratch copy of ``dist`` at ``version``."""
    copy = work / "scratch" / dist.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(dist.path, copy, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    project = copy / "pyproject.toml"
    project.write_text(edited_pyproject(project.read_text(), version, core_range))
    out = work / "range-index"
    argv = ["uv", "--no-config", "build", "--quiet", "--wheel", "--out-dir", str(out), str(copy)]
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    return out


RESOLVER_REFUSED = {"pip": "ResolutionImpossible", "uv": "No solution found"}


def range_check(
    built: dict[str, Built], index_dir: Path, work: Path
) -> tuple[list[str], list[str]]:
    """Rule 6; returns (log, problems)."""
    log: list[str] = []
    members = {d.name: d for d in distributions()}
    extensions = [
        d for d in members.values() if any(r.name == "mcpkit-core" for r in d.dependencies)
    ]
    chosen = min(extensions, key=lambda d: (len(d.dependencies), d.name))
    core = built["mcpkit-core"].version
    newer = bump_minor(core)
    major, minor = map(int, newer.split(".")[:2])
    needs = f">={major}.{minor},<{major}.{minor + 1}"
    build_copy(members["mcpkit-core"], newer, None, work)
    range_dir = build_copy(chosen, newer, needs, work)
    log.append(f"range check: {chosen.name} {newer} needs mcpkit-core{needs}; ours is {core}")
    problems: list[str] = []
    proc, url = serve_index([index_dir, range_dir], work / "range-index.log")
    try:
        for tool in ("pip", "uv"):
            python = new_venv(work / f"venv-range-{tool}", log, seed=tool == "pip")
            command = installer(tool, python, url)
            at = len(log)
            status = run(command(f"{chosen.name}=={newer}", f"mcpkit-core=={core}"), log)
            said = "".join(log[at:])
            if status == 0 or RESOLVER_REFUSED[tool] not in said:
                problems.append(f"{tool} did not refuse {chosen.name} {newer} with core {core}")
            if chosen.name in installed(python.parent.parent):
                problems.append(f"{tool} left {chosen.name} installed after refusing it")
        python = new_venv(work / "venv-range-ok", log, seed=False)
        command = installer("uv", python, url)
        if run(command(f"{chosen.name}=={newer}"), log) != 0:
            problems.append(f"{chosen.name} {newer} alone did not install (control)")
        elif installed(python.parent.parent).get("mcpkit-core", ("?",))[0] != newer:
            problems.append(f"{chosen.name} {newer} did not bring mcpkit-core {newer}")
        python = new_venv(work / "venv-range-ours", log, seed=False)
        command = installer("uv", python, url)
        if run(command(chosen.name, f"{chosen.name}=={built[chosen.name].version}"), log) != 0:
            problems.append(f"our {chosen.name} did not install next to core {newer}")
        elif (got := installed(python.parent.parent)["mcpkit-core"][0]) != core:
            problems.append(f"our {chosen.name} took mcpkit-core {got}: its range allows it")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    return log, [f"range: {p}" for p in problems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist_dir", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="every command's output")
    opts = parser.parse_args(argv)
    work: Path = opts.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    index_dir = work / "index"
    index_dir.mkdir(parents=True)
    built: dict[str, Built] = {}
    for wheel in sorted(opts.dist_dir.glob("*/*.whl")):
        info = read_built(wheel)
        built[info.name] = info
        for artefact in wheel.parent.iterdir():
            shutil.copy2(artefact, index_dir / artefact.name)
    missing = sorted({d.name for d in distributions()} - set(built))
    if missing or "mcpkit-core" not in built:
        print(f"PROBLEM: no wheel in {opts.dist_dir} for {', '.join(missing)}", file=sys.stderr)
        return 1
    started = time.monotonic()
    problems: list[str] = []
    proc, url = serve_index([index_dir], work / "index.log")
    try:
        names = sorted(built)
        tools = ["pip" if i % 2 == 0 else "uv" for i in range(len(names))]
        with ThreadPoolExecutor(PARALLEL) as pool:
            jobs = [
                pool.submit(install_one, n, t, built, url, work)
                for n, t in zip(names, tools, strict=True)
            ]
            ranged = pool.submit(range_check, built, index_dir, work)
            for job in [*jobs, ranged]:
                log, found = job.result()
                problems += found
                for entry in log:
                    if found or entry.startswith(("mcpkit", "range check")) or opts.verbose:
                        print(entry, flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    print(f"index installs: {len(built)} distributions in {time.monotonic() - started:.1f} s")
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
