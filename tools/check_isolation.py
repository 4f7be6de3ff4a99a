"""Check that ``mcpkit-core`` installed alone carries no auth stack, no OpenTelemetry and no
extension.

Usage: ``<python of an environment with mcpkit-core alone> tools/check_isolation.py``.
The nox ``build`` session syncs ``mcpkit-core`` without any dependency group into a fresh
environment (exactly what ``pip install mcpkit-core`` resolves from the lock) and runs this
there. Exits non-zero, listing every problem.

Rules:
1. None of the auth extension's crypto and OAuth distributions and none of OpenTelemetry's
   (``FORBIDDEN_DISTS``) is installed: neither core nor anything core depends on pulls
   them (core's tracing seam, ``mcpkit.core.tracing``, is dependency-free).
2. Importing every module of core's packages (``mcpkit.core``, ``mcpkit.server``,
   ``mcpkit.client``, ``mcpkit.proxy``, ``mcpkit.cli``) imports none of
   ``FORBIDDEN_MODULES`` (``yaml`` too: only mcpkit-ext-skills reads YAML; ``grpc``,
   ``grpc_tools`` and ``google.protobuf``: only mcpkit-exp-protogen uses them) and nothing
   under ``mcpkit.ext`` or ``mcpkit.experimental``: core never imports an extension.
3. The ``mcpkit`` command starts (``--help``) and ``mcpkit ls`` works against the stdio demo
   in that environment, with no warning on stderr (no plugin is installed there).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import subprocess
import sys
from pathlib import Path

from check_wheels import CORE_FORBIDDEN as FORBIDDEN_DISTS  # one list for both checks

FORBIDDEN_MODULES = (
    "authlib",
    "joserfc",
    "jwt",
    "cryptography",
    "opentelemetry",
    "yaml",
    "grpc",
    "grpc_tools",
)
FORBIDDEN_PREFIXES = ("google.protobuf",)
EXTENSION_NAMESPACES = ("mcpkit.ext", "mcpkit.experimental")
CORE_PACKAGES = ("mcpkit.core", "mcpkit.server", "mcpkit.client", "mcpkit.proxy", "mcpkit.cli")


def installed_forbidden() -> list[str]:
    """Rule 1: the forbidden distributions present in this environment."""
    found: list[str] = []
    for name in FORBIDDEN_DISTS:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found.append(name)
    return found


def imported_forbidden() -> list[str]:
    """Rule 2: import all of core; return the forbidden or extension modules loaded."""
    for package_name in CORE_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            if info.name.endswith("__main__"):
                continue
            importlib.import_module(info.name)
    return sorted(
        m
        for m in sys.modules
        if m.split(".")[0] in FORBIDDEN_MODULES
        or m.startswith(FORBIDDEN_PREFIXES)
        or m.startswith(EXTENSION_NAMESPACES)
    )


def command_problems() -> list[str]:
    """Rule 3: the console script starts and lists the demo, silently on stderr."""
    script = Path(sys.executable).parent / "mcpkit"
    demo = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"
    problems: list[str] = []
    for argv in ([str(script), "--help"], [str(script), "ls", demo]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0 or done.stderr:
            problems.append(f"`{' '.join(argv)}` -> {done.returncode}: {done.stderr[-2000:]}")
    return problems


def main() -> int:
    problems = [f"{name} is installed with mcpkit-core alone" for name in installed_forbidden()]
    problems += [f"importing core loaded {m}" for m in imported_forbidden()]
    problems += command_problems()
    for problem in problems:
        print(f"check_isolation: {problem}", file=sys.stderr)
    if not problems:
        print(
            f"check_isolation: OK: none of {', '.join(FORBIDDEN_DISTS)} installed; "
            f"core imports no extension; mcpkit starts"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
