"""Check the built distributions: each wheel ships only its own part of ``mcpkit``.

Usage: ``python tools/check_wheels.py DIST_DIR`` where ``DIST_DIR`` holds one
sub-directory per distribution (as the nox ``build`` session lays them out), each with
that distribution's wheel and sdist. Exits non-zero, listing every problem, if any check
fails.

Rules:
1. ``mcpkit``, ``mcpkit.ext`` and ``mcpkit.experimental`` are PEP 420 namespace packages:
   no wheel may contain ``mcpkit/__init__.py``, ``mcpkit/ext/__init__.py`` or
   ``mcpkit/experimental/__init__.py``.
2. Each wheel owns a fixed subtree of the namespace and ships nothing else (besides its
   ``.dist-info``): ``mcpkit-core`` owns ``mcpkit/core``, ``mcpkit/server``,
   ``mcpkit/client``, ``mcpkit/proxy`` and ``mcpkit/cli``; ``mcpkit-ext-<name>`` owns only
   ``mcpkit/ext/<name>``; ``mcpkit-exp-<name>`` owns only ``mcpkit/experimental/<name>``.
   Any other distribution name is an error (add it here first).
3. Every typed package a wheel ships has its ``py.typed`` marker (PEP 561): for core,
   ``mcpkit/core``, ``mcpkit/server`` and ``mcpkit/proxy``, and ``mcpkit/client`` once
   it exists; for an
   extension, its own package.
4. No bytecode or ``__pycache__`` in wheels; no two wheels ship the same file.
5. Each distribution directory holds exactly one wheel and one sdist, whose names match
   the distribution in the wheel's metadata; the sdist contains ``pyproject.toml`` and a
   README.
6. The ``mcpkit-core`` wheel requires none of the auth stack, none of OpenTelemetry and
   none of protobuf/gRPC (``CORE_FORBIDDEN``: authlib, joserfc, pyjwt, cryptography,
   opentelemetry-api, opentelemetry-sdk, protobuf, grpcio, grpcio-tools), extras
   included; what it pulls transitively is checked by ``tools/check_isolation.py`` in an
   environment with core alone.
7. Only the distribution named in ``ONLY_IN`` requires protobuf, grpcio or grpcio-tools
   directly (mcpkit-exp-protogen), extras included. (mcpkit-ext-otel's OTLP exporter
   pulls protobuf transitively, through opentelemetry-proto: that is not a direct
   requirement.)
"""

from __future__ import annotations

import re
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

NAMESPACE_INITS = (
    "mcpkit/__init__.py",
    "mcpkit/ext/__init__.py",
    "mcpkit/experimental/__init__.py",
)
CORE_SUBTREES = ("mcpkit/core", "mcpkit/server", "mcpkit/client", "mcpkit/proxy", "mcpkit/cli")
CORE_TYPED = ("mcpkit/core", "mcpkit/server", "mcpkit/client", "mcpkit/proxy")
CORE_TYPED_REQUIRED = ("mcpkit/core", "mcpkit/server", "mcpkit/proxy")
CORE_FORBIDDEN = (
    "authlib",
    "joserfc",
    "pyjwt",
    "cryptography",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "protobuf",
    "grpcio",
    "grpcio-tools",
)
ONLY_IN = {
    "protobuf": "mcpkit-exp-protogen",
    "grpcio": "mcpkit-exp-protogen",
    "grpcio-tools": "mcpkit-exp-protogen",
}


def owned_subtrees(dist: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(subtrees the distribution owns, typed packages that need py.typed)`` (rule 2)."""
    if dist == "mcpkit-core":
        return CORE_SUBTREES, CORE_TYPED
    if m := re.fullmatch(r"mcpkit-ext-([a-z0-9_-]+)", dist):
        package = f"mcpkit/ext/{m.group(1).replace('-', '_')}"
        return (package,), (package,)
    if m := re.fullmatch(r"mcpkit-exp-([a-z0-9_-]+)", dist):
        package = f"mcpkit/experimental/{m.group(1).replace('-', '_')}"
        return (package,), (package,)
    return None


def _under(path: str, subtree: str) -> bool:
    return path == subtree or path.startswith(subtree + "/")


def check_wheel(wheel: Path, dist_dir_name: str) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        meta_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if meta_name is None:
            return [f"{wheel.name}: no .dist-info/METADATA"], set()
        metadata = HeaderParser().parsestr(zf.read(meta_name).decode("utf-8"))
    dist = str(metadata["Name"]).lower().replace("_", "-")
    if dist != dist_dir_name:
        problems.append(f"{wheel.name}: metadata names {dist!r}, built as {dist_dir_name!r}")
    for requirement in metadata.get_all("Requires-Dist") or []:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", str(requirement))
        name = re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""
        if dist == "mcpkit-core" and name in CORE_FORBIDDEN:  # rule 6
            problems.append(
                f"{wheel.name}: requires {requirement!r} (core has no auth stack, no "
                "OpenTelemetry and no protobuf/gRPC)"
            )
        elif name in ONLY_IN and dist != ONLY_IN[name]:  # rule 7
            problems.append(
                f"{wheel.name}: requires {requirement!r}; only {ONLY_IN[name]} may require it"
            )
    if not metadata["Version"]:
        problems.append(f"{wheel.name}: no Version in metadata")
    owned = owned_subtrees(dist)
    if owned is None:
        return [*problems, f"{wheel.name}: unknown distribution {dist!r}; add it to rule 2"], set()
    subtrees, typed = owned
    shipped: set[str] = set()
    for name in names:
        if name.split("/", 1)[0].endswith(".dist-info"):
            continue
        if name in NAMESPACE_INITS:
            problems.append(f"{wheel.name}: ships {name}; {name.rsplit('/', 1)[0]} is a namespace")
            continue
        if "__pycache__/" in name or name.endswith((".pyc", ".pyo")):
            problems.append(f"{wheel.name}: ships bytecode {name}")
            continue
        if not any(_under(name, s) for s in subtrees):
            problems.append(f"{wheel.name}: {name} is outside {', '.join(subtrees)}")
            continue
        shipped.add(name)
    for package in typed:
        present = any(_under(n, package) for n in shipped)
        required = package in CORE_TYPED_REQUIRED or dist != "mcpkit-core"
        if (present or required) and f"{package}/py.typed" not in shipped:
            problems.append(f"{wheel.name}: {package} has no py.typed (PEP 561)")
    return problems, shipped


def check_sdist(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    problems: list[str] = []
    if "pyproject.toml" not in members:
        problems.append(f"{sdist.name}: no pyproject.toml")
    if not any(m.lower().startswith("readme") for m in members):
        problems.append(f"{sdist.name}: no README")
    return problems


def main(dist_root: Path) -> int:
    problems: list[str] = []
    owners: dict[str, str] = {}
    dist_dirs = sorted(p for p in dist_root.iterdir() if p.is_dir())
    if not dist_dirs:
        problems.append(f"{dist_root}: no distributions built")
    for dist_dir in dist_dirs:
        wheels = sorted(dist_dir.glob("*.whl"))
        sdists = sorted(dist_dir.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            problems.append(
                f"{dist_dir.name}: expected one wheel and one sdist, "
                f"found {[w.name for w in wheels]} and {[s.name for s in sdists]}"
            )
        for wheel in wheels:
            found, shipped = check_wheel(wheel, dist_dir.name)
            problems += found
            for name in shipped:
                if name in owners:
                    problems.append(f"{name} is shipped by {owners[name]} and {wheel.name}")
                owners[name] = wheel.name
        for sdist in sdists:
            problems += check_sdist(sdist)
            prefix = dist_dir.name.replace("-", "_")
            if not sdist.name.startswith(prefix + "-"):
                problems.append(f"{sdist.name}: name does not match {dist_dir.name}")
    for problem in problems:
        print(f"check_wheels: {problem}", file=sys.stderr)
    if not problems:
        built = ", ".join(d.name for d in dist_dirs)
        print(f"check_wheels: {len(dist_dirs)} distribution(s) OK: {built}")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
