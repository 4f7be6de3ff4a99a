"""The sender's connection pool (:mod:`mcpkit.experimental.events.webhooks.sender` rule 4):
POSTs to one host reuse kept-alive connections, and concurrent POSTs hold at most
``max_connections_per_host`` of them. The receiver (uvicorn over trustme TLS on
127.0.0.1) records the client address of every request: one address is one connection."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hooks.hookkit import HOOK_HOST, loopback_resolver, make_tls, serve
from mcpkit.experimental.events.webhooks import AddressPolicy, WebhookLimits, generate_secret
from mcpkit.experimental.events.webhooks.sender import Sender
from mcpkit.experimental.events.webhooks.signing import signed_headers

pytestmark = pytest.mark.anyio

POLICY = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)


class Peers:
    """A receiver noting the client address of each request; with ``hold`` set, every
    request waits for it before answering (so POSTs overlap)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.busy = 0
        self.most_busy = 0
        self.hold: anyio.Event | None = None

    async def handle(self, request: Request) -> Response:
        await request.body()
        assert request.client is not None
        self.seen.append((request.client.host, request.client.port))
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        try:
            if self.hold is not None:
                with anyio.fail_after(10):
                    await self.hold.wait()
        finally:
            self.busy -= 1
        return Response(status_code=204)


async def _post_many(sender: Sender, url: str, n: int) -> list[int | None]:
    secret = generate_secret()
    statuses: list[int | None] = []

    async def one(i: int) -> None:
        body = b'{"i": %d}' % i
        headers = signed_headers(f"e{i}", body, [secret], subscription_id="s")
        statuses.append((await sender.post(url, body, headers)).status)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    return statuses


async def test_sequential_posts_reuse_one_kept_alive_connection() -> None:
    peers = Peers()
    app = Starlette(routes=[Route("/hooks/x", peers.handle, methods=["POST"])])
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            url = f"https://{HOOK_HOST}:{port}/hooks/x"
            for i in range(5):
                assert (await sender.post(url, b'{"i": %d}' % i, {})).status == 204
            await sender.aclose()
    assert len(peers.seen) == 5
    assert len(set(peers.seen)) == 1  # one TLS connection for five POSTs


async def test_concurrent_posts_hold_at_most_max_connections_per_host() -> None:
    peers = Peers()
    peers.hold = anyio.Event()
    app = Starlette(routes=[Route("/hooks/x", peers.handle, methods=["POST"])])
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context(), max_connections_per_host=2)
            url = f"https://{HOOK_HOST}:{port}/hooks/x"
            result: list[list[int | None]] = []
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    result.append(await _post_many(sender, url, 6))

                tg.start_soon(run)
                with anyio.fail_after(10):
                    while peers.busy < 2:
                        await anyio.sleep(0.01)
                await anyio.sleep(0.1)  # room for a third connection (none may come)
                assert peers.busy == 2
                peers.hold.set()
            await sender.aclose()
    assert result == [[204] * 6]
    assert peers.most_busy == 2
    assert len(set(peers.seen)) == 2  # the six POSTs shared the two connections


def test_the_bound_is_a_checked_limit() -> None:
    assert WebhookLimits().max_connections_per_host == 16
    with pytest.raises(ValueError, match="max_connections_per_host"):
        WebhookLimits(max_connections_per_host=0)


async def test_a_session_evicted_while_in_use_finishes_its_post() -> None:
    # max_clients=1: a POST to b.test evicts a.test's session while a POST on it waits for
    # its answer; the next POST must not close that session under it (rule 4).
    async def any_loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    peers = Peers()
    peers.hold = anyio.Event()
    app = Starlette(routes=[Route("/hooks/x", peers.handle, methods=["POST"])])
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp), "a.test", "b.test", "c.test")
        async with serve(app, tls=tls) as port:
            policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=any_loopback)
            sender = Sender(policy, verify=tls.client_context(), max_clients=1)
            got: list[int | None] = []
            async with anyio.create_task_group() as tg:

                async def held() -> None:
                    url = f"https://a.test:{port}/hooks/x"
                    got.append((await sender.post(url, b"{}", {})).status)

                tg.start_soon(held)
                with anyio.fail_after(10):
                    while peers.busy < 1:
                        await anyio.sleep(0.01)
                parked, peers.hold = peers.hold, None  # later POSTs are answered at once
                for name in ("b.test", "c.test"):
                    assert (await sender.post(f"https://{name}:{port}/hooks/x", b"{}", {})).ok
                assert got == []
                parked.set()
            await sender.aclose()
    assert got == [204]
