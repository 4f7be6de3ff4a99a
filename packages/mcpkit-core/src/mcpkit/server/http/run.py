"""Serving the endpoint with uvicorn: ``run_http`` (behind ``server.run("http")``).

Rules:
1. Binds ``127.0.0.1`` unless told otherwise (spec: local servers SHOULD bind loopback);
   DNS-rebinding protection is then on by default.
2. On SIGTERM/SIGINT the endpoint's shutdown starts together with uvicorn's (uvicorn
   would otherwise wait for open SSE streams before running the lifespan shutdown):
   streams end at once, running requests get ``shutdown_grace_s`` seconds, and
   uvicorn's own graceful timeout is a second later as a backstop.
3. The URL actually served (with the real port when ``port=0``) is printed to stderr.
4. Signals follow :mod:`mcpkit.server.signals`: the first SIGINT/SIGTERM prints one line
   (POSTs in progress, sessions open) and starts the shutdown of rule 2; a second one
   exits at once; no ``KeyboardInterrupt`` traceback afterwards (uvicorn would re-raise
   the signal it caught once it has shut down).
5. Configuration comes before the address: every check that needs no socket (the HTTP
   stack, the endpoint's options, the multi-replica setup below) runs first, and only
   then is the address bound once (:func:`check_listen`, ``SO_REUSEADDR`` as uvicorn
   binds), so a bad configuration is reported as such whatever holds the port, and a
   port in use (:class:`ListenError`) before anything says it is serving.
   Multi-replica mode (Redis configured: ``redis=`` / ``redis_url=`` /
   ``MCPKIT_REDIS_URL``; or ``workers > 1``) is checked before anything is bound: the
   shared secret (:mod:`mcpkit.server.replication` rules 1-3), then Redis is wired with
   :func:`mcpkit.server.redis.replicate` and several workers are started by
   :mod:`.workers`. A refusal found only once the server's lifespans are entered
   (:class:`~mcpkit.server.startup.ConfigurationError`, e.g. a rule naming a tool no
   lifespan registered) is raised from here as it is, without uvicorn's traceback.
6. uvicorn's event loop and HTTP parser are always chosen explicitly (``stack``,
   :func:`.workers.http_stack`: the ``[fast]`` extra's uvloop + httptools when installed)
   and named on stderr (``mcpkit: HTTP stack ...``) before the serving line.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from mcpkit.core.remedies import Remedied, Remedy
from mcpkit.server.http.app import http_app
from mcpkit.server.signals import DEFAULT_SHUTDOWN_GRACE_S, SignalShutdown, describe_inflight

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.http.endpoint import StreamableHTTP
    from mcpkit.server.http.workers import HttpStack
    from mcpkit.server.redis.settings import RedisSettings

__all__ = ["ListenError", "UvicornServer", "check_listen", "run_http"]


class ListenError(Remedied):
    """The address to serve on cannot be bound (in use, not permitted, not resolvable);
    the message names ``host:port`` and the reason (rule 5), and the fix for code
    (``port=``) and for ``mcpkit`` (``--port``) apart (:mod:`mcpkit.core.remedies`)."""


def check_listen(host: str, port: int) -> None:
    """Rule 5: bind ``host:port`` once, as uvicorn will (``SO_REUSEADDR``), and release
    it; raises :class:`ListenError` when that fails. Port 0 (any free port) always
    succeeds and is not tried."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ListenError(
            f"cannot resolve the host {host!r}: {exc}",
            Remedy(python="pass another host=", cli="give another --host"),
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            reason = "already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise ListenError(
                f"cannot listen on {host}:{port}: {reason}",
                Remedy(
                    python="choose another port= (0 = any free port)",
                    cli="choose another --port (0 = any free port)",
                ),
            ) from None


class UvicornServer(uvicorn.Server):
    """uvicorn, with the endpoint's shutdown started as soon as uvicorn's (rule 2)."""

    def __init__(
        self,
        config: uvicorn.Config,
        endpoint: StreamableHTTP,
        path: str,
        *,
        shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    ) -> None:
        super().__init__(config)
        self.endpoint = endpoint
        self.path = path
        self.signals = SignalShutdown(self._stop, self._describe, grace_s=shutdown_grace_s)
        self.announce = True
        """Print the serving line (a worker process does not: .workers rule 2)."""

    def _stop(self) -> None:
        self.should_exit = True  # uvicorn's main loop checks it every 0.1 s

    def _describe(self) -> str:
        ep = self.endpoint
        open_ = len(ep.sessions)
        sessions = f"{open_} session open" if open_ == 1 else f"{open_} sessions open"
        return f"{describe_inflight(ep.posts, [], noun='POST')}, {sessions}"

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        """Rule 4: our two-signal policy instead of uvicorn's (no re-raise after)."""
        with self.signals.installed():
            yield

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.signals.handle(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.announce:
            for server in self.servers:
                for sock in server.sockets:
                    host, port = sock.getsockname()[:2]
                    shown = f"[{host}]" if ":" in host else host
                    print(
                        f"mcpkit: serving streamable HTTP at http://{shown}:{port}{self.path}",
                        file=sys.stderr,
                        flush=True,
                    )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.endpoint.aclose)
            await super().shutdown(sockets)


def run_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
    log_level: str = "warning",
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    uvicorn_options: dict[str, Any] | None = None,
    redis: RedisSettings | str | None = None,
    redis_url: str | None = None,
    workers: int = 1,
    secret: bytes | str | None = None,
    secret_file: str | None = None,
    stack: HttpStack = "auto",
    target: str | None = None,
    announce: bool = True,
    **options: Any,
) -> None:
    """Serve ``server`` over streamable HTTP until SIGINT/SIGTERM. ``options`` are the
    endpoint's (:class:`~mcpkit.server.http.endpoint.StreamableHTTP`); ``uvicorn_options``
    go to ``uvicorn.Config`` (``{"fd": n}`` serves an inherited socket).

    Scale (rules 5, 6): ``redis`` (a :class:`~mcpkit.server.redis.RedisSettings` or a
    URL; ``redis_url`` is the same; default ``MCPKIT_REDIS_URL``) shares the event store
    and the notification hub with other replicas; ``workers`` (default 1) processes
    serve one socket (``target``: where each imports the server from, default found in
    ``__main__``); ``secret`` / ``secret_file``: the shared secret (default
    ``MCPKIT_SECRET``...); ``stack``: ``"auto"``, ``"fast"`` or ``"standard"``;
    ``announce``: print the startup lines. Raises
    :class:`~mcpkit.server.replication.ReplicaModeError` (or its ``SecretError``) for a
    multi-replica setup that cannot work, before binding anything, then
    :class:`ListenError` when ``host:port`` cannot be bound (rule 5)."""
    from mcpkit.server.http.workers import http_stack

    loop, http, label = http_stack(stack)
    settings = _redis_settings(redis if redis is not None else redis_url)
    if settings is not None or workers != 1:
        from mcpkit.server.replicas import apply_shared_secret, check_workers
        from mcpkit.server.replication import load_secret

        why = f"{workers} worker processes" if workers != 1 else "Redis configured"
        shared = load_secret(secret, secret_file=secret_file)
        check_workers(
            server, workers, redis=settings is not None, stateless=bool(options.get("stateless"))
        )
        apply_shared_secret(server, shared, why=why)
        if workers > 1:
            _serve_workers(
                server,
                target,
                workers,
                host,
                port,
                path,
                shared,
                _secret_source(secret, secret_file),
                label,
                {
                    "log_level": log_level,
                    "server_log_level": logging.getLevelName(
                        logging.getLogger("mcpkit").getEffectiveLevel()
                    ),
                    "shutdown_grace_s": shutdown_grace_s,
                    "stack": stack
                    if stack != "auto"
                    else ("fast" if loop == "uvloop" else "standard"),
                    "redis": None if settings is None else _settings_json(settings),
                    "uvicorn_options": uvicorn_options or {},
                    **options,
                },
            )
            return
        if settings is not None:
            from mcpkit.server.redis import replicate

            options = {**replicate(server, settings, secret=shared), **options}
    app = http_app(server, path=path, shutdown_grace_s=shutdown_grace_s, **options)
    extra: dict[str, Any] = {"loop": loop, "http": http, **(uvicorn_options or {})}
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=int(shutdown_grace_s) + 2,
        **extra,
    )
    fd = config.fd
    sockets = None
    if fd is not None:  # an inherited listening socket (a worker, .workers rule 1)
        config.fd = None
        sockets = [socket.socket(fileno=fd)]
    elif config.uds is None:
        check_listen(host, port)  # rule 5: configuration first, then the address
    if announce:
        print(f"mcpkit: HTTP stack {label}", file=sys.stderr, flush=True)
    uvicorn_server = UvicornServer(config, app.state.mcp, path, shutdown_grace_s=shutdown_grace_s)
    uvicorn_server.announce = announce
    endpoint = app.state.mcp

    def quiet(record: logging.LogRecord) -> bool:
        return endpoint.refused is None  # a refusal is raised below, in one line

    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addFilter(quiet)
    try:
        uvicorn_server.run(sockets=sockets)
    except SystemExit:  # uvicorn's exit for a failed startup
        if endpoint.refused is None:
            raise
    finally:
        uvicorn_log.removeFilter(quiet)
    if endpoint.refused is not None:  # found once the lifespans were entered
        raise endpoint.refused


def _redis_settings(redis: RedisSettings | str | None) -> RedisSettings | None:
    from mcpkit.server.redis.settings import RedisSettings

    if isinstance(redis, RedisSettings):
        return redis
    if redis:
        return RedisSettings(redis)
    return RedisSettings.from_env()


def _settings_json(settings: RedisSettings) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(settings)


def _secret_source(secret: bytes | str | None, secret_file: str | None) -> str | None:
    """The file :func:`~mcpkit.server.replication.load_secret` read the secret from, if
    it came from one (workers pass the path, not the secret, .workers rule 1)."""
    from mcpkit.server.replication import secret_origin

    if secret is not None:
        return None
    origin = secret_origin(secret_file)
    return origin[1] if origin is not None and origin[0] == "file" else None


def _serve_workers(
    server: Server,
    target: str | None,
    workers: int,
    host: str,
    port: int,
    path: str,
    secret: bytes | None,
    secret_file: str | None,
    label: str,
    spec: dict[str, Any],
) -> None:
    import json

    from mcpkit.server.http.workers import main_target, serve_workers
    from mcpkit.server.replication import ReplicaModeError

    target = target or main_target(server)
    if target is None:
        raise ReplicaModeError(
            "workers > 1: each worker imports the server; define it at module level of the "
            "program you run, pass target='module:attr', or use `mcpkit run TARGET --workers N`"
        )
    try:
        json.dumps(spec)
    except TypeError:
        raise ReplicaModeError(
            "workers > 1: only JSON endpoint options reach the worker processes; set the "
            "others where the server is built"
        ) from None
    check_listen(host, port)  # rule 5: configuration first, then the address
    status = serve_workers(
        target=target,
        workers=workers,
        host=host,
        port=port,
        path=path,
        spec=spec,
        secret=secret,
        secret_file=secret_file,
        stack_label=label,
    )
    if status:
        sys.exit(status)
