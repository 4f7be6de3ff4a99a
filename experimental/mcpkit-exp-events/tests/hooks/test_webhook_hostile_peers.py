"""Hostile peers against the webhook machinery (SEP-3415 §Webhook security): a receiver
that trickles its answer, a server that sends huge ``webhook-id`` values, callback paths
that a normalising origin maps out of the declared prefix, documents and key sets that
make a library raise, and one trusted server's key set breaking another's rotation.
Real servers on 127.0.0.1 (uvicorn, trustme TLS)."""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from hooks.hookkit import HOOK_HOST, TLS, deployment, loopback_resolver, make_tls, serve
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookLimits,
    WebhookMessage,
    WebhookReceiver,
    WellKnownPolicy,
    generate_secret,
    subscribe_webhook,
)
from mcpkit.experimental.events.webhooks.identity import ServerIdentity, ServerKeys
from mcpkit.experimental.events.webhooks.sender import Sender
from mcpkit.experimental.events.webhooks.signing import signed_headers
from mcpkit.experimental.events.webhooks.ssrf import AddressRefused
from mcpkit.experimental.events.webhooks.wellknown import ReceiverDocuments
from mcpkit.experimental.events.wire import (
    CALLBACK_ENDPOINT_ERROR,
    EVENTS_SUBSCRIBE,
    JWKS_PATH,
    WELL_KNOWN_RECEIVER_PATH,
)

pytestmark = pytest.mark.anyio

POLICY = AddressPolicy(allow=["127.0.0.0/8", "::1/128"], resolver=loopback_resolver)


def _tls(tmp: str, *names: str) -> TLS:
    return make_tls(Path(tmp), *names)


# -- a receiver trickling its answer holds a POST for hours --------------------------------


async def _trickle(request: Request) -> Response:
    await request.body()

    async def drip() -> AsyncIterator[bytes]:
        for _ in range(100_000):
            yield b" "
            await anyio.sleep(0.1)

    return StreamingResponse(drip(), media_type="application/json")


async def test_a_trickled_response_ends_the_post_at_request_timeout_s() -> None:
    """Each read is quicker than the timeout, so per-read timeouts never fire: the
    challenge or delivery POST must still end after ``request_timeout_s`` in all."""
    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        app = Starlette(routes=[Route("/hooks/x", _trickle, methods=["POST"])])
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context(), request_timeout_s=0.5)
            started = time.monotonic()
            with anyio.fail_after(10):  # 20x the bound; unfixed: 4096 bytes x 0.1 s
                got = await sender.post(f"https://{HOOK_HOST}:{port}/hooks/x", b"{}", {})
            assert got.error == "timeout"
            assert got.status is None
            assert time.monotonic() - started < 10
            await sender.aclose()


# -- the receiver's duplicate table holds what a server sends, by size ---------------------


async def test_the_duplicate_table_holds_a_digest_not_the_webhook_id() -> None:
    """A server holding its own subscription's secret sends deliveries with 8 KiB
    ``webhook-id`` values: what the receiver remembers per delivery must not grow with
    the id's length (``max_seen`` of them would otherwise be ``max_seen`` x 8 KiB)."""
    handled = 0

    async def on_message(message: WebhookMessage) -> None:
        nonlocal handled
        handled += 1  # keeps nothing of the message

    receiver = WebhookReceiver(on_message, max_seen=10_000)
    secret = generate_secret()
    receiver.bind("sub_1", secret, route="r1")
    body = b'{"name":"a","data":{},"cursor":"c"}'
    async with (
        serve(Starlette(routes=receiver.routes("/hooks"))) as port,
        httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
    ):

        async def send(msg: str) -> int:
            headers = signed_headers(msg, body, [secret], subscription_id="sub_1")
            return (await http.post("/hooks/r1", content=body, headers=headers)).status_code

        async def retained(tag: str, size: int) -> int:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(40):
                assert await send(f"evt_{tag}_{i}_".ljust(size, "x")) == 204
            return tracemalloc.get_traced_memory()[0] - before

        for i in range(5):
            assert await send(f"warm_{i}") == 204
        tracemalloc.start()
        try:
            small = await retained("s", 64)
            large = await retained("l", 8192)
        finally:
            tracemalloc.stop()
        # a long id sent again is still a duplicate (200, not handled again)
        assert await send("evt_l_0_".ljust(8192, "x")) == 200
    assert handled == 85
    # unfixed: 40 x 8 KiB = 320 KiB more are retained for the long ids
    assert large - small < 100_000, (small, large)


# -- callback paths a normalising origin maps out of the declared prefix ------------------


@pytest.fixture
async def covering_origin() -> AsyncIterator[tuple[Sender, int]]:
    async def doc(request: Request) -> Response:
        return Response(b'{"receivers": ["/hooks/"]}', media_type="application/json")

    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        app = Starlette(routes=[Route(WELL_KNOWN_RECEIVER_PATH, doc, methods=["GET"])])
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            yield sender, port
            await sender.aclose()


@pytest.mark.parametrize(
    "path",
    [
        "/hooks/..;/admin",  # Tomcat/Spring: a path parameter on a dot segment
        "/hooks/.;x/admin",
        "/hooks/%2e%2e;/admin",
        "/hooks/x;/../admin",
        "/hooks/%252e%252e/admin",  # decoded twice by a proxy then the application
        "/hooks/%252E%252E%252Fadmin",
        "/hooks/\uff0e\uff0e/admin",  # fullwidth dots (NFKC-normalising servers)
        "/hooks/%EF%BC%8E%EF%BC%8E/admin",
        "/hooks/a%00/../../admin",
        "/hooks/a%0d%0aX:%20y",
    ],
)
async def test_a_path_an_origin_may_normalise_elsewhere_is_not_covered(
    covering_origin: tuple[Sender, int], path: str
) -> None:
    sender, port = covering_origin
    docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.0))
    assert await docs.covers(f"https://{HOOK_HOST}:{port}/hooks/route-a")  # the control
    assert not await docs.covers(f"https://{HOOK_HOST}:{port}{path}")


@pytest.mark.parametrize("tail", ["../wrong", "./../wrong", "..;/wrong", "%252e%252e/wrong"])
async def test_an_allowlisted_prefix_does_not_cover_a_path_leaving_it(tail: str) -> None:
    """``verified_urls=[".../hooks"]``: a malicious client subscribes
    ``.../hooks/../wrong``; the HTTP client removes the dot segments and would POST to
    ``/wrong`` with no handshake. It must take the handshake (which ``/wrong`` fails)."""
    async with deployment() as d:
        allowed = f"https://{HOOK_HOST}:{d.hook_port}/hooks"
        d.hooks.verifier.verified_urls = (allowed,)
        assert await d.hooks.verifier.is_verified("alice", f"{allowed}/route-a")  # control
        url = f"{allowed}/{tail}"
        assert not await d.hooks.verifier.is_verified("alice", url)
        async with d.client() as client:
            with pytest.raises(JSONRPCError) as err:
                await client.request(
                    EVENTS_SUBSCRIBE,
                    {
                        "name": "a",
                        "delivery": {"mode": "webhook", "url": url, "secret": generate_secret()},
                    },
                    use_cache=False,
                )
        assert err.value.code == CALLBACK_ENDPOINT_ERROR


# -- a library raising on hostile input fails closed (the challenge), never a crash --------


async def test_a_deeply_nested_document_falls_back_to_the_challenge() -> None:
    async def doc(request: Request) -> Response:
        return Response(b"[" * 15_000, media_type="application/json")

    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        app = Starlette(routes=[Route(WELL_KNOWN_RECEIVER_PATH, doc, methods=["GET"])])
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.0))
            assert not await docs.covers(f"https://{HOOK_HOST}:{port}/hooks/a")
            await sender.aclose()


async def test_an_ipv6_literal_origin_is_fetched_with_brackets() -> None:
    """``https://[::1]:port/...``: the document URL and ``Host`` keep the brackets."""
    hosts: list[str] = []

    async def doc(request: Request) -> Response:
        hosts.append(request.headers.get("host", ""))
        return Response(b'{"receivers": ["/hooks/"]}', media_type="application/json")

    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp, "::1")
        app = Starlette(routes=[Route(WELL_KNOWN_RECEIVER_PATH, doc, methods=["GET"])])
        async with serve(app, tls=tls, host="::1") as port:
            sender = Sender(POLICY, verify=tls.client_context())
            docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.0))
            assert await docs.covers(f"https://[::1]:{port}/hooks/a")
            assert hosts == [f"[::1]:{port}"]
            await sender.aclose()


@pytest.mark.parametrize("host", ["\u0300a.example", "a\u200d.example", "\udcff.example"])
async def test_a_host_the_resolver_cannot_encode_is_refused(host: str) -> None:
    policy = AddressPolicy()
    with pytest.raises(AddressRefused):
        await policy.resolve(host, 443)


# -- one trusted server's key set never breaks another's ----------------------------------


class _Origin:
    """A JWKS origin whose answer a test changes."""

    def __init__(self, identity: ServerIdentity) -> None:
        self.identity = identity
        self.body: bytes | None = None
        self.status = 200

    async def handle(self, request: Request) -> Response:
        body = self.body if self.body is not None else json.dumps(self.identity.jwks()).encode()
        return Response(body, self.status, media_type="application/json")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, b"{}"),  # down
        (200, b"[" * 15_000),  # a document a library cannot parse
        (200, None),  # too many keys (set below)
    ],
)
async def test_a_failing_origin_does_not_block_another_origins_rotation(
    status: int, body: bytes | None
) -> None:
    a, b = ServerIdentity.generate(), ServerIdentity.generate()
    for _ in range(5):
        b.rotate(ServerIdentity.generate().key)  # b publishes 6 keys
    origin_a, origin_b = _Origin(a), _Origin(b)
    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp, "127.0.0.1")
        app_a = Starlette(routes=[Route(JWKS_PATH, origin_a.handle, methods=["GET"])])
        app_b = Starlette(routes=[Route(JWKS_PATH, origin_b.handle, methods=["GET"])])
        async with serve(app_a, tls=tls) as port_a, serve(app_b, tls=tls) as port_b:
            keys = ServerKeys(
                origins=[f"https://127.0.0.1:{port_a}/mcp", f"https://127.0.0.1:{port_b}/mcp"],
                verify=tls.client_context(),
                min_refresh_s=0,
                max_keys=8,
            )
            await keys.refresh()
            assert len(keys.kids) == 7
            # b breaks (down, unparsable, or over max_keys once a's keys are counted)
            origin_b.status = status
            origin_b.body = body
            if body is None:
                b.rotate(ServerIdentity.generate().key)  # 7 keys: fine alone, 8 + a's is not
            a.rotate(ServerIdentity.generate().key)  # a rotates
            secret = generate_secret()
            raw = b'{"name":"a","data":{}}'
            headers = signed_headers("e1", raw, [secret], subscription_id="s", identity=a)
            assert await keys.verify(raw, headers)  # a's new key is picked up
            # b's own current key stays trusted: held from before, or fetched when valid
            from_b = signed_headers("e2", raw, [secret], subscription_id="s", identity=b)
            assert await keys.verify(raw, from_b)


# -- one tenant queueing verifications for a host cannot starve another's -----------------


async def test_one_principal_queueing_challenges_to_a_host_does_not_starve_another() -> None:
    """The per-host spacing of verification POSTs is shared by every principal: bob
    starts 8 subscribes to URLs on the receiver's host (each failing its challenge), then
    alice subscribes her own receiver there. Alice must take her turn after at most one
    of bob's per principal, not after all of bob's (8 x the spacing)."""
    limits = WebhookLimits(verification_interval_s=1.0)
    async with deployment(limits=limits) as d:
        done: list[str] = []

        async def bob(i: int) -> None:
            url = f"https://{HOOK_HOST}:{d.hook_port}/wrong?n={i}"
            params = {
                "name": "a",
                "delivery": {"mode": "webhook", "url": url, "secret": generate_secret()},
            }
            async with d.client("key-bob") as client:
                with pytest.raises(JSONRPCError):
                    await client.request(EVENTS_SUBSCRIBE, params, use_cache=False)
            done.append("bob")

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(8):
                    tg.start_soon(bob, i)
                await anyio.sleep(0.5)  # bob's 8 are queued on the host
                async with d.client("key-alice") as client:
                    await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
                done.append("alice")
        assert done.index("alice") <= 3, done  # unfixed: after all 8 of bob's


@pytest.mark.parametrize("answer", [b"[" * 4000, b'{"challenge": "\\udcff"}'])
async def test_a_hostile_challenge_answer_is_challenge_failed(answer: bytes) -> None:
    """A receiver answering the challenge with JSON nested too deeply to parse (within
    ``max_response_bytes``) or a lone surrogate fails the handshake like any wrong
    echo: an internal error (-32603) would be an oracle on the answer's body."""

    async def nested(request: Request) -> Response:
        return Response(answer, media_type="application/json")

    route = Route("/nested", nested, methods=["POST"])
    async with deployment(extra_routes=[route]) as d, d.client() as client:
        url = f"https://{HOOK_HOST}:{d.hook_port}/nested"
        params = {"name": "a", "delivery": {"url": url, "secret": generate_secret()}}
        with pytest.raises(JSONRPCError) as err:
            await client.request(EVENTS_SUBSCRIBE, params, use_cache=False)
        assert err.value.code == CALLBACK_ENDPOINT_ERROR
        assert err.value.data == {"reason": "challenge_failed"}


async def test_a_deeply_nested_delivery_is_refused_400() -> None:
    """A server (holding its subscription's secret) posting JSON nested too deeply to
    parse gets 400 (final), not a 500 it would retry."""

    async def on_message(message: WebhookMessage) -> None:
        raise AssertionError("never forwarded")

    receiver = WebhookReceiver(on_message)
    secret = generate_secret()
    receiver.bind("sub_1", secret, route="r1")
    body = b"[" * 5000
    headers = signed_headers("evt_1", body, [secret], subscription_id="sub_1")
    async with (
        serve(Starlette(routes=receiver.routes("/hooks"))) as port,
        httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
    ):
        r = await http.post("/hooks/r1", content=body, headers=headers)
    assert r.status_code == 400


@pytest.mark.parametrize("bad", ["\x01", "\x7f", "\t", "\r\n"])
async def test_a_callback_url_with_a_control_character_is_invalid_params(bad: str) -> None:
    """The HTTP client refuses such a URL at connection time only: subscribe must refuse
    it up front (-32602), and the sender must never raise for it."""
    async with deployment() as d, d.client() as client:
        url = f"https://{HOOK_HOST}:{d.hook_port}/hooks/a{bad}b"
        params = {"name": "a", "delivery": {"url": url, "secret": generate_secret()}}
        with pytest.raises(JSONRPCError) as err:
            await client.request(EVENTS_SUBSCRIBE, params, use_cache=False)
        assert err.value.code == -32602
        got = await d.hooks.sender.post(f"https://{HOOK_HOST}:{d.hook_port}/a\x01b", b"{}", {})
        assert got.error == "connection_refused"


@pytest.mark.parametrize(
    "headers",
    [
        [(b"cache-control", b"max-age=60"), (b"age", b"\xb2")],  # '²': isdigit, not a number
        [(b"cache-control", b"max-age=\xd9\xa3"), (b"age", b"1")],  # non-ASCII digits
    ],
)
async def test_odd_caching_headers_never_make_the_lookup_raise(
    headers: list[tuple[bytes, bytes]],
) -> None:
    async def doc(request: Request) -> Response:
        response = Response(b'{"receivers": ["/hooks/"]}', media_type="application/json")
        response.raw_headers.extend(headers)  # bytes as sent, not latin-1 text
        return response

    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        app = Starlette(routes=[Route(WELL_KNOWN_RECEIVER_PATH, doc, methods=["GET"])])
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.0))
            assert await docs.covers(f"https://{HOOK_HOST}:{port}/hooks/a")
            await sender.aclose()


# -- retryAfterMs never counts other subscribers' events -----------------------------------


async def test_retry_after_ms_does_not_reveal_other_subscribers_event_volume() -> None:
    """With per-subscription matching, the log of an event type holds other principals'
    events too. Alice, rate-limited, must not learn from ``retryAfterMs`` how many
    events bob's account produced after hers (unfixed: the whole unread log, 2000 s)."""

    def match(sub: Any, occ: Any) -> bool:
        return occ.data.get("owner") == sub.arguments.get("owner")

    limits = WebhookLimits(
        backoff_initial_s=0.05, backoff_max_s=0.2, delivery_rate_per_s=1.0, delivery_burst=1
    )
    async with (
        deployment(limits=limits, hooks_options={"match": match}) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(
            client, d.receiver, name="a", url=d.hook_url, arguments={"owner": "alice"}
        )
        await d.emit("a", 10, owner="alice")
        await d.emit("a", 2000, start=10, owner="bob")
        with anyio.fail_after(30):
            while True:
                status = dict((await sub.refresh())["deliveryStatus"])
                if "throttled" in status:
                    break
                await anyio.sleep(0.05)
        # alice's own backlog is at most 10 events at 1/s
        assert 0 < status["retryAfterMs"] <= 30_000, status


# -- a root mount does not vouch for the whole origin -------------------------------------


@pytest.mark.parametrize("mount", ["/", ""])
async def test_a_root_mount_publishes_no_document_unless_asked(mount: str) -> None:
    """``Starlette(routes=[Route("/admin/reset", ...), *receiver.routes("/")])``: a
    document ``{"receivers": ["/"]}`` would let any server's client have deliveries
    POSTed to ``/admin/reset`` with no challenge."""

    async def on_message(message: WebhookMessage) -> None:
        return None

    async def admin(request: Request) -> Response:
        return Response("reset")

    receiver = WebhookReceiver(on_message)
    admin_route = Route("/admin/reset", admin, methods=["POST"])
    app = Starlette(routes=[admin_route, *receiver.routes(mount)])
    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.0))
            assert not await docs.covers(f"https://{HOOK_HOST}:{port}/admin/reset")
            await sender.aclose()
    paths = [getattr(r, "path", None) for r in receiver.routes(mount, well_known=True)]
    assert WELL_KNOWN_RECEIVER_PATH in paths  # when asked
    assert WELL_KNOWN_RECEIVER_PATH in [getattr(r, "path", None) for r in receiver.routes("/h")]
