"""The multi-replica harness: a real ``redis-server``, replicas of an mcpkit server as
separate processes, and HAProxy in front of them, all on 127.0.0.1.

Rules:
1. Every process binds 127.0.0.1 on a free port (rule 5), writes its output to a log
   file of its own, and is always stopped (SIGTERM, SIGKILL after 15 s) when its context ends.
2. The balancer config is :func:`haproxy_config` (the one ``docs/deployment.md`` shows;
   a test checks they are the same): round-robin, no stickiness, no response buffering
   (HAProxy streams bodies as they come), idle timeouts long enough for SSE, health
   checks every 500 ms, and a response header ``X-Mcp-Replica`` naming the replica that
   answered (so a test sees where a request landed).
3. Replicas of one cluster share one secret (``--secret-file``: MRTR ``requestState``
   and event ids); with Redis they are pointed at the same ``redis-server``
   (``--redis``).
4. Waits are bounded: a process that does not listen within ``start_timeout_s`` is an
   error naming its log.
5. No port is picked, released and trusted: an ``mcpkit`` replica starts on port 0 and
   its announced port is read (then the balancer's config is written); a foreign
   program (redis-server, HAProxy, nginx) is started by :func:`start_fresh`, which
   retries with fresh ports while the child exits on an address in use; a restart
   keeps the port and retries for a few seconds while another process holds it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conformance"))

from harness import (  # noqa: E402  (conformance/harness.py: the port rules, its rule 3)
    ANNOUNCED,
    PortTaken,
    exited,
    free_ports,
    listens,
    log_since,
)

__all__ = ["PortTaken", "free_ports"]

HAPROXY_CONFIG = """\
global
    maxconn 4096

defaults
    mode http
    # Streamable HTTP: a POST's SSE response and a standalone GET stream stay open for
    # as long as the work (or the client) lasts; the idle limits below bound silence,
    # not the length of a stream.
    timeout connect 2s
    timeout client 5m
    timeout server 5m
    timeout tunnel 1h
    timeout http-request 10s
    timeout http-keep-alive 10s
    timeout queue 10s
    # A connection refused by a dying replica is retried on another one.
    retries 2
    option redispatch

frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

listen stats
    # Responses per replica as CSV: GET /stats;csv (tests count where requests landed).
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats

backend replicas
    # Round-robin, no stickiness: any replica serves any request.
    balance roundrobin
    option httpchk
    http-check send meth GET uri {path}
    # GET without a session: 400 or 405 means the replica answers.
    http-check expect rstatus ^4
    default-server inter 500ms fall 2 rise 1
    http-response set-header X-Mcp-Replica %[srv_name]
{servers}
"""
"""HAProxy configuration (rule 2); ``{port}``, ``{stats_port}``, ``{path}`` and
``{servers}`` are filled in by :func:`haproxy_config`."""


def haproxy_config(
    port: int, stats_port: int, backends: Sequence[tuple[str, int]], path: str = "/mcp"
) -> str:
    """The HAProxy config: listen on 127.0.0.1:``port``, round-robin over ``backends``
    (name, port on 127.0.0.1), health-checked with a GET on ``path``; statistics on
    127.0.0.1:``stats_port``."""
    servers = "\n".join(f"    server {name} 127.0.0.1:{p} check" for name, p in backends)
    return HAPROXY_CONFIG.format(port=port, stats_port=stats_port, path=path, servers=servers)


NGINX_CONFIG = """\
worker_processes 1;
pid nginx.pid;
error_log stderr;
events {{ worker_connections 1024; }}

http {{
    access_log off;
    upstream replicas {{
        # round-robin (the default), no stickiness
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location {path} {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 5m;
            proxy_send_timeout 5m;
            proxy_next_upstream error timeout;
            add_header X-Mcp-Replica $upstream_addr always;
        }}
    }}
}}
"""
"""The nginx variant (docs/deployment.md): ``proxy_buffering off`` so SSE events pass
at once; ``X-Mcp-Replica`` is the replica's address."""


def nginx_config(port: int, backends: Sequence[tuple[str, int]], path: str = "/mcp") -> str:
    """The nginx config: listen on 127.0.0.1:``port``, round-robin over ``backends``."""
    servers = "\n".join(
        f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for _, p in backends
    )
    return NGINX_CONFIG.format(port=port, path=path, servers=servers)


def program(env: str, name: str) -> str:
    """The path of program ``name`` (``env`` overrides); an error when it is absent."""
    import shutil

    found = os.environ.get(env) or shutil.which(name) or f"/usr/sbin/{name}"
    if not Path(found).exists():
        raise RuntimeError(f"{name} is not installed: run `uv run nox -s scale`")
    return found


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


PORT = "{port}"
"""The item of a :class:`Process`'s ``argv`` replaced by its port (rule 5)."""


@dataclass
class Process:
    """One served process (rule 1): ``argv`` listening on 127.0.0.1:``port``; ``port``
    0 means the process picks one and announces it (rule 5)."""

    name: str
    argv: list[str]
    port: int
    log_path: Path
    env: dict[str, str] = field(default_factory=dict[str, str])
    start_timeout_s: float = 60.0
    proc: subprocess.Popen[bytes] | None = None
    _log_from: int = 0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def spawn(self) -> None:
        """Start the process; :meth:`wait` for it to listen."""
        argv = [str(self.port) if item == PORT else item for item in self.argv]
        with self.log_path.open("ab") as log:
            self._log_from = log.tell()
            self.proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(ROOT),
                env={**os.environ, **self.env},
            )

    def wait(self) -> None:
        """Wait (``start_timeout_s``) until the process listens, reading its announced
        port first when it was started on port 0; :class:`PortTaken` when it exited on
        an address in use."""
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout_s
        while not (self.port and listens(self.proc.pid, self.port)):
            written = log_since(self.log_path, self._log_from)
            if not self.port and (found := ANNOUNCED.search(written)):
                self.port = urlsplit(found.group(1)).port or 0
                continue
            if self.proc.poll() is not None:
                error = exited(self.proc, self.name, written)
                self.proc = None
                raise error
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not listen on {self.port}: {self.log()}")
            time.sleep(0.05)

    def start(self, rebind_s: float = 5.0) -> None:
        """Spawn and wait (rule 5). A restart keeps the port: while another process
        holds it, the start is retried for ``rebind_s`` seconds."""
        deadline = time.monotonic() + rebind_s
        while True:
            self.spawn()
            try:
                self.wait()
                return
            except PortTaken:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM (resuming a paused process first), SIGKILL after 15 s."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def kill(self) -> None:
        """SIGKILL: the process dies without any cleanup (a crash)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        """SIGSTOP: the process holds its sockets and answers nothing."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def rss_bytes(self) -> int:
        """Resident set size of the process (``/proc/<pid>/status`` VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"no VmRSS for {self.name}")

    def log(self) -> str:
        """The last 3000 characters of the process's log."""
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


class RedisProcess(Process):
    """A redis-server process; :attr:`url` stays valid across restarts (rule 5)."""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def redis_process(workdir: Path, port: int) -> RedisProcess:
    """A redis-server without persistence (a restart loses everything, as a cache would)
    on ``port``: start it with :func:`start_redis` (redis-server cannot take port 0)."""
    argv = [program("MCPKIT_REDIS_SERVER", "redis-server"), "--bind", "127.0.0.1"]
    argv += ["--port", PORT, "--save", "", "--appendonly", "no", "--dir", str(workdir)]
    return RedisProcess("redis", argv, port, workdir / "redis.log")


def start_redis(workdir: Path) -> RedisProcess:
    """A running :func:`redis_process` on a free port (rule 5)."""
    return start_fresh(lambda ports: redis_process(workdir, ports[0]), 1)


P = TypeVar("P", bound="Process")


def start_fresh(make: Callable[[list[int]], P], count: int, attempts: int = 5) -> P:
    """Rule 5: ``make(ports)`` (``count`` fresh ports; it writes any config naming them)
    started, retried with fresh ports (``attempts`` in all) while the child exits on an
    address in use: another process took a port between the pick and the child's bind."""
    for attempt in range(attempts):
        process = make(free_ports(count))
        try:
            process.start(rebind_s=0)
        except PortTaken:
            if attempt == attempts - 1:
                raise
            continue
        return process
    raise AssertionError("unreachable")


DEMO = "demo"
TASKS_DEMO = "mcpkit.ext.tasks.demo:build_server"


def replica_argv(kind: str, redis_url: str | None, secret_file: Path) -> list[str]:
    """The command of one replica: ``mcpkit demo`` (``kind="demo"``) or
    ``mcpkit run <kind> --transport http``, with ``--secret-file`` and, with Redis,
    ``--redis URL`` (hub, event store and sessions shared through it). The port is the
    :class:`Process`'s (``PORT``): 0 at first, the announced one on a restart."""
    base = [sys.executable, "-m", "mcpkit.cli.main"]
    argv = [*base, "demo"] if kind == DEMO else [*base, "run", kind, "--transport", "http"]
    argv += ["--host", "127.0.0.1", "--port", PORT, "--log-level", "WARNING"]
    argv += ["--secret-file", str(secret_file)]
    if redis_url is not None:
        argv += ["--redis", redis_url]
    return argv


def replica_env(kind: str, redis_url: str | None) -> dict[str, str]:
    """The environment of one replica: for the tasks demo on Redis, its task store's
    URL. ``MCPKIT_REDIS_URL`` is cleared so that ``--redis`` alone decides."""
    env = {"MCPKIT_REDIS_URL": ""}
    if redis_url is not None and kind == TASKS_DEMO:
        env["MCPKIT_TASKS_REDIS_URL"] = redis_url
    return env


@dataclass
class Cluster:
    """Redis (optional), ``len(replicas)`` replicas and HAProxy in front (rules 1-4)."""

    workdir: Path
    replicas: list[Process]
    balancer: Process
    redis: Process | None
    stats_port: int
    path: str = "/mcp"

    @property
    def url(self) -> str:
        """The balancer's MCP URL."""
        return f"http://127.0.0.1:{self.balancer.port}{self.path}"

    @property
    def redis_url(self) -> str:
        assert self.redis is not None
        return f"redis://127.0.0.1:{self.redis.port}/0"

    def replica(self, name: str) -> Process:
        return next(r for r in self.replicas if r.name == name)

    def wait_healthy(self, names: Sequence[str] | None = None, timeout_s: float = 30.0) -> None:
        """Wait until every replica named (default all) listens (HAProxy's checks every
        500 ms then take it back within a second)."""
        deadline = time.monotonic() + timeout_s
        for replica in self.replicas:
            if names is not None and replica.name not in names:
                continue
            while not listening(replica.port):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{replica.name} did not come back: {replica.log()}")
                time.sleep(0.05)
        time.sleep(1.5)  # two health-check intervals, plus margin

    def served_by(self) -> dict[str, int]:
        """Responses each replica has sent through the balancer (HAProxy's statistics,
        ``hrsp_*`` summed): {replica name: count}, replicas that sent none left out."""
        import csv
        import io
        import urllib.request

        url = f"http://127.0.0.1:{self.stats_port}/stats;csv"
        with urllib.request.urlopen(url, timeout=10) as reply:
            text = reply.read().decode().lstrip("# ")
        counts: dict[str, int] = {}
        for row in csv.DictReader(io.StringIO(text)):
            if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND"):
                total = sum(int(row[f"hrsp_{k}xx"] or 0) for k in range(1, 6))
                total += int(row["hrsp_other"] or 0)
                if total:
                    counts[row["svname"]] = total
        return counts

    def stop(self) -> None:
        for process in [self.balancer, *self.replicas, *([self.redis] if self.redis else [])]:
            process.stop()


@contextlib.contextmanager
def running(
    workdir: Path,
    *,
    kind: str = DEMO,
    replicas: int = 3,
    redis: bool = True,
    balancer: str = "haproxy",
    start_timeout_s: float = 120.0,
) -> Generator[Cluster]:
    """Start Redis (when ``redis``), ``replicas`` replicas of ``kind`` (``DEMO`` or a
    ``module:factory`` target) sharing one secret, and ``balancer`` (``"haproxy"``, or
    ``"nginx"``: the documented variant) in front; yields the :class:`Cluster` and stops
    everything afterwards."""
    workdir.mkdir(parents=True, exist_ok=True)
    secret_file = workdir / "secret"
    secret_file.write_text(secrets.token_hex(32))
    secret_file.chmod(0o600)
    redis_proc: RedisProcess | None = None
    procs: list[Process] = []
    front: Process | None = None
    try:
        redis_proc = start_redis(workdir) if redis else None
        redis_url = redis_proc.url if redis_proc else None
        for i in range(replicas):
            name = f"r{i + 1}"
            procs.append(
                Process(
                    name,
                    replica_argv(kind, redis_url, secret_file),
                    0,
                    workdir / f"{name}.log",
                    env=replica_env(kind, redis_url),
                    start_timeout_s=start_timeout_s,
                )
            )
            procs[-1].spawn()
        for proc in procs:
            proc.wait()
        # The replicas listen: their ports go into the balancer's config (rule 5).
        backends = [(p.name, p.port) for p in procs]
        front = start_fresh(lambda ports: balancer_process(balancer, workdir, ports, backends), 2)
        made = Cluster(workdir, procs, front, redis_proc, stats_port=front.stats_port)
        made.wait_healthy()
        yield made
    finally:
        for process in [front, *procs, redis_proc]:
            if process is not None:
                process.stop()


@dataclass
class Balancer(Process):
    """HAProxy or nginx (rule 2); ``stats_port`` serves HAProxy's statistics."""

    stats_port: int = 0


def balancer_process(
    kind: str, workdir: Path, ports: list[int], backends: Sequence[tuple[str, int]]
) -> Balancer:
    """``kind`` (``"haproxy"`` or ``"nginx"``) on ``ports[0]`` (HAProxy's statistics on
    ``ports[1]``) in front of ``backends``, its config written to ``workdir``."""
    if kind == "nginx":
        config = workdir / "nginx.conf"
        config.write_text(nginx_config(ports[0], backends))
        argv = [program("MCPKIT_NGINX", "nginx"), "-p", str(workdir), "-c", str(config)]
        argv += ["-g", "daemon off;"]
        return Balancer("nginx", argv, ports[0], workdir / "nginx.log", stats_port=ports[1])
    config = workdir / "haproxy.cfg"
    config.write_text(haproxy_config(ports[0], ports[1], backends))
    argv = [program("MCPKIT_HAPROXY", "haproxy"), "-db", "-f", str(config)]
    return Balancer("haproxy", argv, ports[0], workdir / "haproxy.log", stats_port=ports[1])
