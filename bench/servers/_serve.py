"""What every benchmark echo server shares, so that the only difference between them is
the SDK under test.

Rules:
1. HTTP servers bind a loopback address only (refused otherwise) and run uvicorn with one
   configuration: one process, ``log_level="warning"``, no access log, and an explicit
   event loop and HTTP parser: asyncio + h11 (the standard stack, what mcpkit-core's own
   ``uvicorn`` dependency gives), or uvloop + httptools when ``BENCH_HTTP_STACK=fast``
   (the ``[fast]`` extra's stack; install it with the ``bench-fast`` dependency group).
   Never uvicorn's ``"auto"``, which would pick uvloop whenever it is installed and so
   change the existing rows silently.
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


STACKS = {"standard": ("asyncio", "h11"), "fast": ("uvloop", "httptools")}


def stack() -> tuple[str, str]:
    """Rule 1: ``(loop, http)`` named by ``BENCH_HTTP_STACK`` (default ``standard``)."""
    name = os.environ.get("BENCH_HTTP_STACK", "standard")
    if name not in STACKS:
        sys.exit(f"BENCH_HTTP_STACK={name!r}: use 'standard' or 'fast'")
    return STACKS[name]


def serve_asgi(app: Any, host: str, port: int) -> None:
    """Rule 1: the one uvicorn configuration."""
    import uvicorn

    loop, http = stack()
    uvicorn.run(
        app, host=host, port=port, log_level="warning", access_log=False, loop=loop, http=http
    )
