"""Running conformance peers from the noxfile: loopback ports, a served process, and the
verdicts a conformance run wrote.

Rules:
1. Servers listen on 127.0.0.1 only; a served process is always stopped (SIGTERM, then
   SIGKILL after 15 s) and runs from the repository root.
2. Verdicts are read from the ``checks.json`` files the conformance harness writes,
   never from its console output.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A free loopback port."""
    return free_ports(1)[0]


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    import socket
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[3:5]} exited early with status {proc.returncode}")
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{proc.args[3:5]} did not listen on port {port} within {timeout_s} s")


@contextlib.contextmanager
def served(
    argv: list[str],
    port: int,
    log_path: Path,
    env: dict[str, str] | None = None,
    start_timeout_s: float = 30.0,
) -> Iterator[str]:
    """Run a server process (``argv``, listening on 127.0.0.1:``port`` within
    ``start_timeout_s``, with ``env`` added to this process's environment) for the
    duration; yields its MCP URL and always stops it (SIGTERM, then SIGKILL after 15 s)."""
    import os

    with log_path.open("wb") as server_log:
        proc = subprocess.Popen(
            argv,
            stdout=server_log,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
            env={**os.environ, **(env or {})},
        )
        try:
            wait_listening(port, proc, start_timeout_s)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def failing_scenarios(out_dir: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Scenarios (outside those starting with ``skip``) with a FAILURE check, scored or
    not."""
    import json

    failing: list[str] = []
    for path in sorted(out_dir.glob("*/checks.json")):
        name = path.parent.name
        if name.startswith(skip):
            continue
        if any(c.get("status") == "FAILURE" for c in json.loads(path.read_text())):
            failing.append(name)
    return failing


def check_counts(out_dir: Path) -> dict[str, int]:
    """Check statuses over every scenario's checks.json in a conformance output dir."""
    import json
    from collections import Counter

    counts: Counter[str] = Counter()
    for path in sorted(out_dir.rglob("checks.json")):  # auth/<name>-<time>/ nests one deeper
        for check in json.loads(path.read_text()):
            counts[check.get("status", "?")] += 1
    return dict(counts)


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (all held open until all are chosen)."""
    import socket

    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def scenario_verdicts(out_dir: Path) -> dict[str, dict[str, int]]:
    """Check statuses per scenario name (the output dir's ``server-<scenario>-<time>``)."""
    import json
    import re
    from collections import Counter

    verdicts: dict[str, dict[str, int]] = {}
    for path in sorted(out_dir.glob("*/checks.json")):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", path.parent.name).removeprefix("server-")
        counts = Counter(c.get("status", "?") for c in json.loads(path.read_text()))
        verdicts[name] = dict(counts)
    return verdicts


def auth_verdicts(out_dir: Path) -> dict[str, dict[str, int]]:
    """Check statuses per ``auth/*`` scenario found under a conformance output dir (the
    harness nests them: ``auth/<name>-<timestamp>/checks.json``), scored or not."""
    import json
    from collections import Counter

    verdicts: dict[str, dict[str, int]] = {}
    for path in sorted(out_dir.rglob("checks.json")):
        rel = path.parent.relative_to(out_dir).as_posix()
        if not rel.startswith("auth/"):
            continue
        counts = Counter(c.get("status", "?") for c in json.loads(path.read_text()))
        verdicts[rel] = dict(counts)
    return verdicts
