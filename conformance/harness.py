"""Running conformance peers from the noxfile: loopback ports, a served process, and the
verdicts a conformance run wrote.

Rules:
1. Servers listen on 127.0.0.1 only; a served process is always stopped (SIGTERM, then
   SIGKILL after 15 s) and runs from the repository root.
2. Verdicts are read from the ``checks.json`` files the conformance harness writes,
   never from its console output.
3. No port is picked, released and trusted (another process may take it in between):
   an ``mcpkit`` process is started with ``--port 0`` and the URL it announces is read
   (:func:`served`); a foreign program that needs its port named is started by
   :func:`served_fresh`, which retries with fresh ports (bounded) while the program
   exits on an address in use, and counts it up only when the program itself (or a
   child of it) holds the listening socket (:func:`listens`).
4. A scenario counts as passed only when its checks ran (:func:`unrun_checks`; for a
   whole run, :func:`unrun_scenarios`): the suite prints PASSED for a scenario whose
   every check was SKIPPED (0/0), which is how a peer without an extension passes.
   Any SKIPPED check not allowed by name (with a reason), or no SUCCESS check at all,
   makes the scenario "not run".
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import time
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent

ANNOUNCED = re.compile(r"serving streamable HTTP at (http://\S+)")
"""The line an ``mcpkit`` server prints once it listens (group 1: its URL)."""
IN_USE = ("already in use", "eaddrinuse")
"""How a program's log says its port was taken (lower case: HAProxy, redis-server,
nginx, Node, uvicorn and ``mcpkit`` all say one of these)."""


class PortTaken(RuntimeError):
    """The program exited because another process holds its port."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free a moment ago (released: only for starters
    that retry when the program finds one taken, rule 3)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        # kind-ok: released-port its callers retry with fresh ports on EADDRINUSE
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def _family(pid: int) -> set[int]:
    """``pid`` and its descendants (a program started through a wrapper, npx or a shell)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    family, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grown = bool(more)
    return family


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` (or a descendant) holds a socket listening on ``port``
    (Linux ``/proc``): a port that answers may belong to a process that took it."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    for member in _family(pid):
        for fd in Path(f"/proc/{member}/fd").glob("*"):
            with contextlib.suppress(OSError):
                if os.readlink(fd) in inodes:
                    return True
    return False


def log_since(path: Path, offset: int) -> str:
    """What a process wrote to the log ``path`` from byte ``offset`` on."""
    try:
        with path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")
    except OSError:
        return ""


def exited(proc: subprocess.Popen[bytes], what: str, log: str) -> RuntimeError:
    """The error for a program that exited: :class:`PortTaken` when ``log`` says its
    address was in use."""
    said = f"{what} exited with {proc.returncode}: {log[-3000:]}"
    return PortTaken(said) if any(m in log.lower() for m in IN_USE) else RuntimeError(said)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def served(
    argv: list[str],
    log_path: Path,
    env: dict[str, str] | None = None,
    start_timeout_s: float = 30.0,
    announced: re.Pattern[str] = ANNOUNCED,
) -> Generator[str]:
    """Run a server process (``argv``, serving on port 0, with ``env`` added to this
    process's environment) for the duration; yields the URL it announces (group 1 of
    ``announced``, within ``start_timeout_s``) and always stops it (rules 1 and 3)."""
    with log_path.open("wb") as server_log:
        proc = subprocess.Popen(
            argv,
            stdout=server_log,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
            env={**os.environ, **(env or {})},
        )
    try:
        deadline = time.monotonic() + start_timeout_s
        while not (found := announced.search(log_since(log_path, 0))):
            if proc.poll() is not None:
                raise exited(proc, str(argv[3:5]), log_since(log_path, 0))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[3:5]} announced no URL within {start_timeout_s} s")
            time.sleep(0.05)
        yield found.group(1)
    finally:
        _stop(proc)


def start_fresh(
    start: Callable[[int], subprocess.Popen[bytes]],
    what: str,
    log_path: Path,
    attempts: int = 5,
    start_timeout_s: float = 30.0,
) -> tuple[subprocess.Popen[bytes], int]:
    """Rule 3 for a foreign program: ``start(port)`` (writing its output to ``log_path``)
    on a port free a moment ago, until it listens there itself (``start_timeout_s``);
    started again on a fresh port, ``attempts`` times in all, while it exits on an
    address in use. Returns the running process and its port; the caller stops it."""
    for attempt in range(attempts):
        (port,) = free_ports(1)
        offset = log_path.stat().st_size if log_path.exists() else 0
        proc = start(port)
        try:
            deadline = time.monotonic() + start_timeout_s
            while not listens(proc.pid, port):
                if proc.poll() is not None:
                    raise exited(proc, what, log_since(log_path, offset))
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not listen on {port} in {start_timeout_s} s")
                time.sleep(0.05)
        except PortTaken:
            _stop(proc)
            if attempt == attempts - 1:
                raise
            continue
        except BaseException:
            _stop(proc)
            raise
        return proc, port
    raise AssertionError("unreachable")


@contextlib.contextmanager
def served_fresh(
    start: Callable[[int], subprocess.Popen[bytes]],
    what: str,
    log_path: Path,
    attempts: int = 5,
    start_timeout_s: float = 30.0,
) -> Generator[int]:
    """:func:`start_fresh` for the duration; yields the port and always stops the
    program (SIGTERM, then SIGKILL after 15 s)."""
    proc, port = start_fresh(start, what, log_path, attempts, start_timeout_s)
    try:
        yield port
    finally:
        _stop(proc)


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


def unrun_checks(
    out_dir: Path, scenario: str, allowed: Mapping[str, str] | None = None, own: str = ""
) -> list[str]:
    """Rule 4 for one scenario's output directory (every ``checks.json`` below it): a
    line per SKIPPED check not allowed by ``allowed`` (keys ``scenario/check-id``, or
    ``scenario/check-id/check-name`` for one of several checks sharing an id; values:
    the reasons), one per key of ``allowed`` for this scenario whose checks did not all
    skip (a stale reason), and one when no check succeeded (with ``own``: no check whose
    id starts with ``own``; the suite adds generic checks such as ``wire-schema-valid``
    that pass against any peer) unless every check it recorded is an allowed skip.
    Empty: it ran, or what did not run is listed with a reason."""
    allowed = allowed or {}
    problems: list[str] = []
    succeeded = recorded = excused = 0
    seen: dict[str, set[str]] = {}  # allowed key -> statuses of the checks it names
    for check in _checks(out_dir):
        status = str(check.get("status", "?"))
        recorded += 1
        succeeded += status == "SUCCESS" and str(check.get("id", "")).startswith(own)
        general = f"{scenario}/{check.get('id', '?')}"
        names = [k for k in (f"{general}/{check.get('name', '')}", general) if k in allowed]
        for name in names:
            seen.setdefault(name, set()).add(status)
        if status == "SKIPPED" and names:
            excused += 1
        elif status == "SKIPPED":
            said = str(check.get("errorMessage", ""))[:200]
            problems.append(f"SKIPPED {general} ({check.get('name', '')}): {said}")
    if not succeeded and (not recorded or excused < recorded):
        problems.insert(0, f"not run: no {own or scenario} check succeeded")
    for name in sorted(allowed):
        if name.startswith(f"{scenario}/") and seen.get(name, set()) != {"SKIPPED"}:
            shown = ", ".join(sorted(seen.get(name, set()))) or "absent"
            problems.append(f"{name} is allowed to skip but was {shown}")
    return problems


def unrun_scenarios(
    out_dir: Path, allowed: Mapping[str, str] | None = None, skip: tuple[str, ...] = ()
) -> list[str]:
    """Rule 4 over a whole run's output directory: ``scenario: problem`` for every
    scenario below ``out_dir`` (``server-<name>-<time>/``, ``<name>-<time>/``,
    ``auth/<name>-<time>/``) whose checks did not run, except names starting with
    ``skip`` (judged elsewhere)."""
    import re

    found: list[str] = []
    for path in sorted(out_dir.rglob("checks.json")):
        rel = path.parent.relative_to(out_dir).as_posix()
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", rel).removeprefix("server-")
        if not (skip and name.startswith(skip)):
            found += [f"{name}: {p}" for p in unrun_checks(path.parent, name, allowed)]
    return found


def _checks(out_dir: Path) -> list[dict[str, object]]:
    import json

    return [c for p in sorted(out_dir.rglob("checks.json")) for c in json.loads(p.read_text())]


# -- the suite's `authorization` command: the authorization-server scenarios -------------


def follow_one_redirect(url: str) -> str:
    """The browser of an authorization server that consents at once (the development
    server): GET ``url`` and return its redirect's ``Location``, unfetched."""
    import urllib.error
    import urllib.request

    class _Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None  # the redirect is returned, not followed

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}), _Stay())
    try:
        direct.open(url, timeout=30)
    except urllib.error.HTTPError as answer:
        callback = answer.headers.get("Location")
        if answer.code in (302, 303) and callback:
            return str(callback)
        raise
    raise RuntimeError("the authorization URL did not redirect")


def run_authorization_suite(
    argv: list[str],
    authorization_endpoint: str,
    log_path: Path,
    browse: Callable[[str], str] = follow_one_redirect,
    env: dict[str, str] | None = None,
    timeout_s: float = 600.0,
) -> int:
    """Run the suite's ``authorization`` command (``argv``; ``env`` added to this
    process's environment), playing the browser: each line it prints that starts with
    ``authorization_endpoint + "?"`` is an authorization URL, handed to ``browse``, which
    signs in and returns the callback URL the authorization server redirected to
    (unfetched). That callback is then fetched, retried for up to 20 s while nothing
    listens there yet (the suite may print the URL before its callback listener is up).
    A watchdog kills the suite after ``timeout_s``. Returns its exit status; a failed
    browser step is written to the log (``log_path``) and ends the run."""
    import threading
    import urllib.error
    import urllib.request

    plain = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def deliver(callback: str, log: TextIO) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                with plain.open(callback, timeout=30) as done:
                    print(f"[harness] delivered the callback: HTTP {done.status}", file=log)
                    return
            except urllib.error.URLError as exc:
                if isinstance(exc, urllib.error.HTTPError) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    watchdog = threading.Timer(timeout_s, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        with log_path.open("w") as log:
            for line in proc.stdout:
                log.write(line)
                if line.startswith(authorization_endpoint + "?"):
                    try:
                        deliver(browse(line.strip()), log)
                    except Exception as exc:  # the run fails, named in its log
                        log.write(f"[harness] the browser step failed: {exc!r}\n")
                        proc.kill()
        return proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
