"""The receiver-published well-known document (SEP-3415 §Webhook security, "Endpoint
verification" option 4): a real https receiver on loopback (trustme) serving, or not,
``/.well-known/mcp-webhook-receiver.json``; the server verifies by it with no challenge
POST, falls back to the challenge whenever it does not cover the URL, never follows a
redirect, refuses an oversize document, caches per origin as HTTP caching says, spaces
fetches per host, and can be switched off."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hooks.hookkit import (
    HOOK_HOST,
    Deployment,
    Flaky,
    deployment,
    loopback_resolver,
    make_tls,
    serve,
)
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookReceiver,
    WellKnownPolicy,
    subscribe_webhook,
)
from mcpkit.experimental.events.webhooks.sender import Sender
from mcpkit.experimental.events.webhooks.wellknown import (
    ReceiverDocuments,
    check_prefix,
    path_covered,
)
from mcpkit.experimental.events.wire import CALLBACK_ENDPOINT_ERROR, WELL_KNOWN_RECEIVER_PATH

pytestmark = pytest.mark.anyio

COVERING = b'{"receivers": ["/hooks/"]}'


class Doc:
    """The document endpoint: counts its requests, answers as configured."""

    def __init__(
        self, body: bytes = COVERING, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.body = body
        self.status = status
        self.headers = headers or {}
        self.hits = 0
        self.hosts: list[str] = []

    async def handle(self, request: Request) -> Response:
        self.hits += 1
        self.hosts.append(request.headers.get("host", ""))
        return Response(self.body, self.status, headers=self.headers, media_type="application/json")

    def route(self, path: str = WELL_KNOWN_RECEIVER_PATH) -> Route:
        return Route(path, self.handle, methods=["GET"])


def challenges(seen: list[dict[str, str]]) -> int:
    return sum(h.get("webhook-id", "").startswith("msg_verification_") for h in seen)


async def _subscribe(d: Deployment, key: str = "key-alice", url: str | None = None) -> Any:
    async with d.client(key) as client:
        return await subscribe_webhook(client, d.receiver, name="a", url=url or d.hook_url)


async def test_a_covering_document_verifies_with_no_challenge_post() -> None:
    doc = Doc()
    async with deployment(extra_routes=[doc.route()]) as d:
        sub = await _subscribe(d)
        assert challenges(d.flaky.seen) == 0
        assert doc.hits == 1
        assert doc.hosts == [f"{HOOK_HOST}:{d.hook_port}"]  # the name, sent to the checked IP
        assert await d.hooks.subscriptions.verified("alice", sub.url)  # per (principal, url)
        assert not await d.hooks.subscriptions.verified("bob", sub.url)
        await d.emit("a", 3)
        await d.inbox.wait_for(lambda i: len(i.events()) >= 3)
        assert all(sub.owns(m) for m in d.inbox.messages)


@pytest.mark.parametrize(
    ("cache_control", "fetches"),
    [(None, 1), ("public, max-age=60", 1), ("no-store", 2), ("no-cache", 2), ("max-age=0", 2)],
)
async def test_the_document_is_cached_per_origin_as_http_caching_says(
    cache_control: str | None, fetches: int
) -> None:
    doc = Doc(headers={"Cache-Control": cache_control} if cache_control else None)
    async with deployment(extra_routes=[doc.route()]) as d:
        await _subscribe(d, "key-alice")
        await _subscribe(d, "key-bob")  # another principal, same origin, within max-age
        assert doc.hits == fetches
        assert challenges(d.flaky.seen) == 0


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, b"not found"),
        (200, b'{"receivers": ["/other/"]}'),
        (200, b'{"receivers": ["/hook"]}'),  # /hook does not cover /hooks/...
        (200, b'{"receivers": ["hooks/"]}'),  # not absolute
        (200, b'{"receivers": ["/x/../hooks/"]}'),  # traversal
        (200, b'{"receivers": ["/%68ooks/"]}'),  # encoded
        (200, b'{"receivers": ["/hooks/", 7]}'),
        (200, b'{"receivers": "/hooks/"}'),
        (200, b'["/hooks/"]'),
        (200, b"not json"),
        (500, COVERING),
    ],
)
async def test_no_covering_document_falls_back_to_the_challenge(status: int, body: bytes) -> None:
    doc = Doc(body, status)
    async with deployment(extra_routes=[doc.route()]) as d:
        sub = await _subscribe(d)
        assert doc.hits == 1
        assert challenges(d.flaky.seen) == 1
        assert await d.hooks.subscriptions.verified("alice", sub.url)


@pytest.mark.parametrize("path", ["/hooksevil/", "/hooks/../wrong/"])
async def test_prefixes_cover_on_segment_boundaries_only(path: str) -> None:
    doc = Doc(b'{"receivers": ["/hooks"]}')
    async with deployment(extra_routes=[doc.route()]) as d:
        url = f"https://{HOOK_HOST}:{d.hook_port}{path}"
        with pytest.raises(JSONRPCError) as err:
            await _subscribe(d, url=url)  # not covered: the challenge runs, and fails
        assert err.value.code == CALLBACK_ENDPOINT_ERROR
        assert err.value.data["reason"] == "challenge_failed"


async def test_the_fetch_takes_the_guarded_path() -> None:
    """The address guard runs before the fetch, and TLS is checked for the host name."""
    doc = Doc()
    async with deployment(allow=(), extra_routes=[doc.route()]) as d:
        with pytest.raises(JSONRPCError) as err:
            await _subscribe(d)
        assert err.value.data["reason"] == "connection_refused"
        assert doc.hits == 0
    async with deployment(extra_routes=[doc.route()]) as d:
        # rebind.test resolves to the same 127.0.0.1, but the certificate is hooks.test's
        url = d.hook_url.replace(HOOK_HOST, "rebind.test")
        with pytest.raises(JSONRPCError) as err:
            await _subscribe(d, url=url)
        assert err.value.data["reason"] == "tls_error"
        assert doc.hits == 0


async def test_a_redirected_document_is_not_followed() -> None:
    target = Doc()
    redirect = Doc(b"", 307, {"Location": f"https://{HOOK_HOST}/elsewhere.json"})
    routes = [redirect.route(), target.route("/elsewhere.json")]
    async with deployment(extra_routes=routes) as d:
        await _subscribe(d)
        assert redirect.hits == 1
        assert target.hits == 0
        assert challenges(d.flaky.seen) == 1


@pytest.mark.parametrize(("size", "challenged"), [(15 * 1024, 0), (17 * 1024, 1)])
async def test_a_document_over_the_default_16_kib_is_refused(size: int, challenged: int) -> None:
    body = COVERING[:-1] + b" " * (size - len(COVERING)) + b"}"
    assert len(body) == size
    doc = Doc(body)
    async with deployment(extra_routes=[doc.route()]) as d:
        await _subscribe(d)
        assert challenges(d.flaky.seen) == challenged


async def test_the_document_can_be_switched_off() -> None:
    doc = Doc()
    options = {"well_known": WellKnownPolicy(enabled=False)}
    async with deployment(extra_routes=[doc.route()], hooks_options=options) as d:
        await _subscribe(d)
        assert doc.hits == 0
        assert challenges(d.flaky.seen) == 1


async def test_receiver_routes_serve_the_document_for_the_mount() -> None:
    """One line on the receiver side: ``Starlette(routes=receiver.routes("/hooks"))``."""
    async with deployment() as d:
        got: list[Any] = []

        async def on_message(message: Any) -> None:
            got.append(message)

        receiver = WebhookReceiver(on_message)
        app = Flaky(Starlette(routes=receiver.routes("/hooks")))
        async with serve(app, tls=d.tls) as port, d.client() as client:
            sub = await subscribe_webhook(
                client, receiver, name="a", url=f"https://{HOOK_HOST}:{port}/hooks/"
            )
            gets = [h for h in app.seen if "webhook-id" not in h]
            assert len(gets) == 1
            assert challenges(app.seen) == 0
            await d.emit("a", 2)
            with anyio.fail_after(30):
                while len(got) < 2:
                    await anyio.sleep(0.05)
            assert all(sub.owns(m) for m in got)


async def test_fetches_are_spaced_per_host_and_shared_while_in_flight() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)
        uncached = Doc(headers={"Cache-Control": "no-store"})
        cached = Doc(headers={"Cache-Control": "max-age=60"})
        app_a = Starlette(routes=[uncached.route()])
        app_b = Starlette(routes=[cached.route()])
        async with serve(app_a, tls=tls) as port_a, serve(app_b, tls=tls) as port_b:
            sender = Sender(policy, verify=tls.client_context())
            docs = ReceiverDocuments(sender, WellKnownPolicy(fetch_interval_s=0.4))
            started = time.monotonic()
            for _ in range(3):
                assert await docs.covers(f"https://{HOOK_HOST}:{port_a}/hooks/x")
            assert uncached.hits == 3
            assert time.monotonic() - started >= 0.8  # two waits of the per-host spacing
            docs = ReceiverDocuments(sender, WellKnownPolicy())
            results: list[bool] = []

            async def look() -> None:
                results.append(await docs.covers(f"https://{HOOK_HOST}:{port_b}/hooks/y"))

            async with anyio.create_task_group() as tg:
                for _ in range(5):
                    tg.start_soon(look)
            assert results == [True] * 5
            assert cached.hits == 1
            await sender.aclose()


@pytest.mark.parametrize(
    ("path", "prefix", "covered"),
    [
        ("/hooks", "/hooks/", True),
        ("/hooks/a/b", "/hooks", True),
        ("/hooksevil", "/hooks", False),
        ("/hooksevil/a", "/hooks/", False),
        ("/anything", "/", True),
    ],
)
def test_path_covered_on_segment_boundaries(path: str, prefix: str, covered: bool) -> None:
    assert path_covered(path, prefix) is covered


@pytest.mark.parametrize(
    "prefix",
    [
        *("hooks/", "", "//", "//a/", "/a/../b", "/a/./b", "/a//b"),
        *("/%2e%2e/", "/a?b", "/a#b", "/a\\b", 3),
    ],
)
def test_bad_prefixes_are_refused(prefix: Any) -> None:
    with pytest.raises(ValueError, match="receiver prefix"):
        check_prefix(prefix)


async def test_a_crashing_document_endpoint_falls_back_to_the_challenge() -> None:
    hits: list[int] = []

    async def crash(request: Request) -> Response:
        hits.append(1)
        raise RuntimeError("the document endpoint fails")

    route = Route(WELL_KNOWN_RECEIVER_PATH, crash, methods=["GET"])
    async with deployment(extra_routes=[route]) as d:
        await _subscribe(d)
        assert hits == [1]
        assert challenges(d.flaky.seen) == 1


@pytest.mark.parametrize(
    ("headers", "max_ttl_s", "fetches"),
    [
        ({"Cache-Control": "max-age=3600"}, 0.3, 2),  # capped at max_ttl_s
        ({"Cache-Control": "max-age=60", "Age": "60"}, 3600.0, 2),  # already stale
        ({"Cache-Control": "max-age=60", "Age": "10"}, 3600.0, 1),
    ],
)
async def test_cache_lifetime_is_capped_and_counts_age(
    headers: dict[str, str], max_ttl_s: float, fetches: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)
        doc = Doc(headers=headers)
        async with serve(Starlette(routes=[doc.route()]), tls=tls) as port:
            sender = Sender(policy, verify=tls.client_context())
            docs = ReceiverDocuments(
                sender, WellKnownPolicy(max_ttl_s=max_ttl_s, fetch_interval_s=0.0)
            )
            assert await docs.covers(f"https://{HOOK_HOST}:{port}/hooks/a")
            await anyio.sleep(0.5)
            assert await docs.covers(f"https://{HOOK_HOST}:{port}/hooks/b")
            assert doc.hits == fetches
            await sender.aclose()
