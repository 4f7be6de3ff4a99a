"""What every benchmark echo server shares, so that the only difference between them is
the SDK under test.

Rules:
1. HTTP servers bind a loopback address only (refused otherwise) and run uvicorn with one
   configuration: one process, ``log_level="warning"``, no access log, and uvicorn's
   automatic loop/parser choice, which in the ``bench`` dependency group (plain
   ``uvicorn``, no uvloop/httptools) is asyncio + h11, the same as mcpkit-core's own
   ``uvicorn`` dependency gives.
2. ``BENCH_DUMP_MODULES=PATH`` in the environment makes the process write the names in
   ``sys.modules`` to PATH (one per line) when it exits normally; the harness uses it
   to check what a stdio server imported.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
from pathlib import Path
from typing import Any

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def parser(description: str | None) -> argparse.ArgumentParser:
    """The flags common to every echo server: ``--transport``, ``--host``, ``--port``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    return p


def check_args(args: argparse.Namespace) -> None:
    """Install the module dump (rule 2) and refuse non-loopback binds (rule 1)."""
    dump_modules_at_exit()
    if args.host not in LOOPBACK:
        sys.exit(f"--host {args.host!r}: benchmark servers bind a loopback address only")


def dump_modules_at_exit() -> None:
    path = os.environ.get("BENCH_DUMP_MODULES")
    if path:
        atexit.register(lambda: Path(path).write_text("\n".join(sorted(sys.modules)) + "\n"))


def serve_asgi(app: Any, host: str, port: int) -> None:
    """Rule 1: the one uvicorn configuration."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
