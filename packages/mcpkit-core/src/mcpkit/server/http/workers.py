"""Several worker processes on one machine, and the choice of uvicorn's stack.

``run_http(server, workers=N)`` / ``mcpkit run TARGET --transport http --workers N``: the
parent binds the listening socket once and starts ``N`` worker processes
(``python -m mcpkit.server.http.worker``, :mod:`.worker`) that inherit it and each serve
it with their own event loop; the kernel spreads connections over them.

Rules:
1. Each worker imports the server afresh from ``target`` (``module:attr`` or
   ``file.py:attr``, as ``mcpkit run`` takes; ``run_http`` finds it in ``__main__``
   when not given), so nothing of the parent's process state (threads, loops,
   connections) is shared by accident. What must be shared is passed explicitly: the
   endpoint options (JSON only), the Redis settings, the HTTP stack, and the shared
   secret (never on a command line or in a log): a secret read from a file reaches the
   worker as that file's path (``MCPKIT_SECRET_FILE``; the worker reads it itself),
   any other as ``MCPKIT_SECRET``.
2. The parent prints the one ``mcpkit: serving streamable HTTP at URL`` line; workers
   print none.
3. The first SIGINT/SIGTERM to the parent is passed to every worker as SIGTERM (each
   then shuts down gracefully, :mod:`mcpkit.server.signals`); a second one kills them
   (SIGKILL). A worker that exits while the parent is not stopping is started again,
   at most once per second per slot, and the event is logged.
4. The stack (:func:`http_stack`): ``"fast"`` is uvloop + httptools (the
   ``mcpkit-core[fast]`` extra; an error naming the extra if missing), ``"standard"``
   is asyncio + h11, ``"auto"`` (default) picks fast when both are installed. It is
   always given to uvicorn explicitly (uvicorn's own ``"auto"`` would pick uvloop
   whenever it is installed), and named on stderr at startup.
5. The worker loads the secret and then deletes ``MCPKIT_SECRET``, ``MCPKIT_SECRET_FILE``
   and the older ``MCPKIT_STATE_SECRET`` from its ``os.environ`` before serving, so subprocesses
   its tools start do not inherit the secret.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from types import FrameType
from typing import Any, Literal

from mcpkit.server.replication import LEGACY_SECRET_ENV, SECRET_ENV, SECRET_FILE_ENV

__all__ = [
    "SECRET_ENVS",
    "SPEC_ENV",
    "STACK_ENV",
    "HttpStack",
    "http_stack",
    "main_target",
    "serve_workers",
]

HttpStack = Literal["auto", "fast", "standard"]
STACK_ENV = "MCPKIT_HTTP_STACK"
"""Overrides the ``"auto"`` choice of :func:`http_stack` (``fast`` or ``standard``)."""
SPEC_ENV = "MCPKIT_WORKER_SPEC"
"""The environment variable carrying a worker's ``run_http`` options (JSON, rule 1)."""
SECRET_ENVS = (SECRET_ENV, SECRET_FILE_ENV, LEGACY_SECRET_ENV)
logger = logging.getLogger("mcpkit.server")


def http_stack(stack: HttpStack = "auto") -> tuple[str, str, str]:
    """``(loop, http, label)`` for ``uvicorn.Config`` (rule 4). Raises ``ImportError``
    naming the ``[fast]`` extra when ``"fast"`` is asked for and not installed, and
    ``ValueError`` for an unknown stack."""
    chosen: str = os.environ.get(STACK_ENV, "auto") if stack == "auto" else stack
    if chosen not in ("auto", "fast", "standard"):
        raise ValueError(f"unknown HTTP stack {chosen!r}: use 'auto', 'fast' or 'standard'")
    fast = all(importlib.util.find_spec(m) is not None for m in ("uvloop", "httptools"))
    if chosen == "fast" and not fast:
        raise ImportError('the fast HTTP stack needs: pip install "mcpkit-core[fast]"')
    if chosen == "fast" or (chosen == "auto" and fast):
        return "uvloop", "httptools", "uvloop + httptools"
    return "asyncio", "h11", "asyncio + h11"


def main_target(server: object) -> str | None:
    """``file.py:name`` of ``server`` in the running program's ``__main__``, if it is a
    module-level name there (rule 1)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:
        return None
    for name, value in vars(main).items():
        if value is server and not name.startswith("_"):
            return f"{os.path.abspath(path)}:{name}"
    return None


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve_workers(
    *,
    target: str,
    workers: int,
    host: str,
    port: int,
    path: str,
    spec: dict[str, Any],
    secret: bytes | None,
    stack_label: str,
    secret_file: str | None = None,
) -> int:
    """Run ``workers`` processes serving ``target`` on one socket until stopped (rules
    1-3); returns the exit status. ``spec`` holds the JSON options of each worker's
    ``run_http``; ``secret_file``: the file ``secret`` was read from, if any (rule 1)."""
    sock = _listen(host, port)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    env = dict(os.environ)
    env[SPEC_ENV] = json.dumps({**spec, "target": target, "fd": sock.fileno(), "path": path})
    for name in SECRET_ENVS:
        env.pop(name, None)
    if secret_file is not None:
        env[SECRET_FILE_ENV] = os.path.abspath(secret_file)
    elif secret is not None:
        env[SECRET_ENV] = secret.hex()
    argv = [sys.executable, "-m", "mcpkit.server.http.worker"]

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, env=env, pass_fds=(sock.fileno(),))

    procs = [start() for _ in range(workers)]
    started = [time.monotonic()] * workers
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL if len(stopping) > 1 else signal.SIGTERM)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    print(
        f"mcpkit: HTTP stack {stack_label}, {workers} worker processes", file=sys.stderr, flush=True
    )
    print(
        f"mcpkit: serving streamable HTTP at http://{shown}:{bound[1]}{path}",
        file=sys.stderr,
        flush=True,
    )
    try:
        while True:
            if stopping and all(p.poll() is not None for p in procs):
                return 0
            for i, proc in enumerate(procs):
                if proc.poll() is not None and not stopping:
                    logger.warning(
                        "worker %d exited with %s; starting it again", i, proc.returncode
                    )
                    time.sleep(max(0.0, 1.0 - (time.monotonic() - started[i])))
                    procs[i], started[i] = start(), time.monotonic()
            time.sleep(0.1)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        sock.close()
