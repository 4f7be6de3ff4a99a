"""What a benchmark run records about where it ran: the machine, the versions of the
packages compared, the commit, and whether mcpkit's HTTP transport imports.

Rules:
1. Every probe is bounded (a subprocess timeout) and never raises: a probe that fails
   records an empty value (or ``None`` for a package that is not installed).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
JSON = dict[str, Any]


def mcpkit_http_status() -> str:
    """``"ok"`` when mcpkit's HTTP transport imports, else why not."""
    code = (
        "import mcpkit.server.http as h; "
        "assert hasattr(h, 'http_app') or hasattr(h, 'run_http'), 'no http_app/run_http'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if done.returncode == 0:
        return "ok"
    return "unavailable: " + (done.stderr.strip().splitlines() or ["?"])[-1]


def machine() -> JSON:
    def run(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    model = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in run("lscpu").splitlines()
            if ln.startswith("Model name")
        ),
        "",
    )
    versions: JSON = {}
    for dist in (
        "mcp",
        "fastmcp",
        "uvicorn",
        "starlette",
        "pydantic",
        "pydantic-core",
        "anyio",
        "orjson",
        "mcpkit-core",
        "mcpkit-ext-tasks",
        "mcpkit-ext-auth",
        "mcpkit-ext-otel",
        "opentelemetry-api",
        "opentelemetry-sdk",
        "pyjwt",
        "cryptography",
        "uvloop",
        "httptools",
    ):
        try:
            from importlib.metadata import version

            versions[dist] = version(dist)
        except Exception:
            versions[dist] = None
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "memory": run("free", "-h").splitlines()[1:2],
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
        "git_rev": run("git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"),
        "git_dirty": bool(run("git", "-C", str(ROOT), "status", "--porcelain", "packages")),
    }
