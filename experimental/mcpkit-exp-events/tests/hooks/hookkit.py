"""The webhook tests' real components: an MCP server with webhook delivery under uvicorn
on 127.0.0.1, a TLS webhook receiver (test CA from ``trustme``) on another port, API-key
principals through the endpoint's ``principal_from_scope`` hook, and a client.

Callback URLs name ``hooks.test``; the SSRF guard resolves it with a test resolver to
127.0.0.1 and is configured to allow loopback, and connects to that address with SNI
``hooks.test`` (the certificate is issued for that name only).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import trustme
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import Message, Receive, Scope, Send

from mcpkit.client import Client
from mcpkit.experimental.events import EventsExtension
from mcpkit.experimental.events.store import InMemoryStore, OccurrenceStore, now_ms
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookLimits,
    WebhookMessage,
    WebhookReceiver,
    Webhooks,
    enable_webhooks,
)
from mcpkit.server import Server

JSON = dict[str, Any]
HOOK_HOST = "hooks.test"
API_KEYS = {"key-alice": "alice", "key-bob": "bob"}
"""The test deployment's API keys and the principals they authenticate."""


def free_socket(host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    return sock


def api_key_principal(scope: dict[str, Any]) -> str | None:
    """``principal_from_scope``: the principal of the request's bearer API key, if any."""
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value.startswith(b"Bearer "):
            return API_KEYS.get(value[7:].decode())
    return None


class BearerAuth(httpx2.Auth):
    """The client presents an API key."""

    def __init__(self, key: str) -> None:
        self.key = key

    def auth_flow(self, request: httpx2.Request):  # type: ignore[no-untyped-def]
        request.headers["Authorization"] = f"Bearer {self.key}"
        yield request


async def loopback_resolver(host: str, port: int) -> list[str]:
    """The test DNS: ``hooks.test`` and ``rebind.test`` are 127.0.0.1, ``private.test``
    is 10.1.2.3; anything else does not resolve."""
    table = {HOOK_HOST: ["127.0.0.1"], "rebind.test": ["127.0.0.1"], "private.test": ["10.1.2.3"]}
    if host not in table:
        raise OSError(f"{host} does not resolve")
    return table[host]


@dataclass
class TLS:
    ca: trustme.CA
    cert_file: str
    key_file: str

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        return ctx


def make_tls(tmp: Path, *names: str) -> TLS:
    ca = trustme.CA()
    cert = ca.issue_cert(*(names or (HOOK_HOST,)))
    cert_file, key_file = tmp / "cert.pem", tmp / "key.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    cert.private_key_pem.write_to_path(str(key_file))
    return TLS(ca, str(cert_file), str(key_file))


@contextlib.asynccontextmanager
async def serve(app: Any, *, tls: TLS | None = None, host: str = "127.0.0.1") -> AsyncIterator[int]:
    """``app`` under uvicorn on a free port of ``host`` (a loopback address; TLS when
    given); yields the port."""
    sock = free_socket(host)
    port = sock.getsockname()[1]
    options: JSON = {}
    if tls is not None:
        options = {"ssl_certfile": tls.cert_file, "ssl_keyfile": tls.key_file}
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, **options
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(20):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield port
        finally:
            server.should_exit = True


@dataclass
class Inbox:
    """What the receiver handed to the application, in arrival order."""

    messages: list[WebhookMessage] = field(default_factory=list[WebhookMessage])
    arrived: anyio.Event = field(default_factory=anyio.Event)

    async def on_message(self, message: WebhookMessage) -> None:
        self.messages.append(message)
        self.arrived.set()
        self.arrived = anyio.Event()

    def events(self) -> list[JSON]:
        return [m.body for m in self.messages if m.kind == "event"]

    async def wait_for(self, predicate: Callable[[Inbox], bool], timeout_s: float = 30) -> None:
        with anyio.fail_after(timeout_s):
            while not predicate(self):
                with anyio.move_on_after(0.2):
                    await self.arrived.wait()


class Flaky:
    """ASGI wrapper: the first ``failures`` POSTs answer ``status`` (counting every
    request in ``seen``, with its path in ``paths`` and the status answered in
    ``statuses``)."""

    def __init__(self, app: Any, failures: int = 0, status: int = 503) -> None:
        self.app = app
        self.failures = failures
        self.status = status
        self.seen: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self.statuses: list[int] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.seen.append(headers)
        self.bodies.append(body)
        self.paths.append(scope["path"])

        async def record(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.statuses.append(message["status"])
            await send(message)

        if self.failures > 0:
            self.failures -= 1
            await Response(status_code=self.status)(scope, receive, record)
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, record)


async def redirect(request: Request) -> Response:
    return Response(status_code=307, headers={"Location": f"https://{HOOK_HOST}/hooks/"})


async def wrong_echo(request: Request) -> Response:
    return Response('{"challenge": "not-the-nonce"}', media_type="application/json")


@dataclass
class Deployment:
    """A running server + receiver pair."""

    store: OccurrenceStore
    hooks: Webhooks
    receiver: WebhookReceiver
    inbox: Inbox
    flaky: Flaky
    mcp_url: str
    hook_url: str
    hook_port: int
    tls: TLS

    def client(self, key: str | None = "key-alice") -> Client:
        auth = BearerAuth(key) if key is not None else None
        return Client(self.mcp_url, mode="modern", auth=auth, timeout_s=30)

    async def emit(self, name: str, count: int, start: int = 0, **data: Any) -> None:
        for i in range(start, start + count):
            await self.store.append(
                name, event_id=f"evt_{name}_{i}", timestamp_ms=now_ms(), data={"i": i, **data}
            )


def build_server(hooks: Webhooks) -> Server:
    server = Server("webhook-test")
    hooks.install(server)
    return server


@contextlib.asynccontextmanager
async def deployment(
    *,
    limits: WebhookLimits | None = None,
    failures: int = 0,
    fail_status: int = 503,
    allow: Sequence[str] = ("127.0.0.0/8",),
    store: OccurrenceStore | None = None,
    receiver_factory: Callable[[Inbox], WebhookReceiver] | None = None,
    hooks_options: JSON | None = None,
    extra_routes: Sequence[Any] = (),
    on_message: Callable[[WebhookMessage], Awaitable[None]] | None = None,
    resolver: Callable[[str, int], Awaitable[list[str]]] = loopback_resolver,
    declare: Callable[[EventsExtension], None] | None = None,
) -> AsyncIterator[Deployment]:
    """Start the receiver (TLS) and the MCP server, both on loopback."""
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        inbox = Inbox()
        receiver = (
            receiver_factory(inbox)
            if receiver_factory is not None
            else WebhookReceiver(on_message or inbox.on_message)
        )
        flaky = Flaky(receiver, failures, fail_status)
        hook_app = Starlette(
            routes=[
                *extra_routes,
                Route("/redirect", redirect, methods=["POST"]),
                Route("/wrong", wrong_echo, methods=["POST"]),
                Mount("/hooks", app=flaky),
            ]
        )
        store = store if store is not None else InMemoryStore()
        options: JSON = {
            "policy": AddressPolicy(allow=allow, resolver=resolver),
            "verify": tls.client_context(),
            "limits": limits or WebhookLimits(backoff_initial_s=0.05, backoff_max_s=0.2),
            "rescan_s": 0.2,
            **(hooks_options or {}),
        }
        if declare is not None:
            server = Server("webhook-test")
            events = EventsExtension(server, store=store)
            declare(events)
            hooks = enable_webhooks(events, **options)
        else:
            hooks = Webhooks(store, **options)
            server = build_server(hooks)
        app = server.http_app(principal_from_scope=api_key_principal)
        async with serve(hook_app, tls=tls) as hook_port, serve(app) as mcp_port:
            yield Deployment(
                store,
                hooks,
                receiver,
                inbox,
                flaky,
                f"http://127.0.0.1:{mcp_port}/mcp",
                f"https://{HOOK_HOST}:{hook_port}/hooks/",
                hook_port,
                tls,
            )
