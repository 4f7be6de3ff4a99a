"""The SSRF guard, TLS to the checked address with SNI, redirects, signatures, rotation
and the verification challenge (SEP-3415 §Webhook security)."""

from __future__ import annotations

import time

import anyio
import httpx2
import pytest
from standardwebhooks import Webhook

from hooks.hookkit import HOOK_HOST, deployment
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    AddressRefused,
    InMemorySubscriptions,
    WebhookLimits,
    generate_secret,
    subscribe_webhook,
)
from mcpkit.experimental.events.webhooks.sender import Sender
from mcpkit.experimental.events.webhooks.signing import signed_headers
from mcpkit.experimental.events.webhooks.verify import Verifier
from mcpkit.experimental.events.wire import CALLBACK_ENDPOINT_ERROR

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "::1",
        "fc00::1",
        "fe80::1",
        "224.0.0.1",
        "100.64.0.1",
        "0.0.0.0",
        "::ffff:127.0.0.1",
        # IPv6 forms that carry a non-global IPv4 address a gateway routes to
        "64:ff9b::a00:1",  # NAT64 -> 10.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 -> 169.254.169.254
        "64:ff9b:1::a00:1",  # local-use NAT64 prefix: refused as a whole
        "2002:a00:1::1",  # 6to4 -> 10.0.0.1
        "2002:7f00:1::1",  # 6to4 -> 127.0.0.1
        "::a00:1",  # IPv4-compatible 10.0.0.1
        "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    ],
)
async def test_non_global_addresses_are_refused_unless_allowed(address: str) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return [address]

    with pytest.raises(AddressRefused):
        await AddressPolicy(resolver=resolver).resolve("example.org", 443)
    allowed = AddressPolicy(allow=["0.0.0.0/0", "::/0"], resolver=resolver)
    assert await allowed.resolve("example.org", 443)


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::5db8:d70e", "2002:5db8:d70e::1", "::ffff:0:5db8:d70e"],  # 93.184.215.14
)
async def test_an_embedded_global_ipv4_address_passes(address: str) -> None:
    assert AddressPolicy().permits(address)
    assert await AddressPolicy().resolve(f"[{address}]", 443) == address


async def test_a_global_address_passes_and_an_ip_literal_is_checked_itself() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["10.0.0.1", "93.184.215.14"]  # the first acceptable one is used

    assert await AddressPolicy(resolver=resolver).resolve("example.org", 443) == "93.184.215.14"
    with pytest.raises(AddressRefused):
        await AddressPolicy().resolve("127.0.0.1", 443)


async def _expect_callback_error(d, client, url: str) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(JSONRPCError) as err:
        await subscribe_webhook(client, d.receiver, name="x", url=url)
    assert err.value.code == CALLBACK_ENDPOINT_ERROR
    return str(err.value.data["reason"])


async def test_dns_resolving_to_loopback_is_refused_when_loopback_is_not_allowed() -> None:
    async with deployment(allow=()) as d, d.client() as client:
        assert await _expect_callback_error(d, client, d.hook_url) == "connection_refused"
        url = d.hook_url.replace(HOOK_HOST, "private.test")
        assert await _expect_callback_error(d, client, url) == "connection_refused"
        assert d.flaky.seen == []  # nothing was sent


async def test_the_address_is_checked_again_at_delivery_time() -> None:
    answers = {"now": "127.0.0.1"}

    async def rebinding(host: str, port: int) -> list[str]:
        return [answers["now"]]

    async with deployment(allow=("127.0.0.1/32",), resolver=rebinding) as d, d.client() as c:
        sub = await subscribe_webhook(c, d.receiver, name="a", url=d.hook_url)
        answers["now"] = "127.0.0.2"  # loopback, but outside the allow-list
        await d.emit("a", 2)
        await anyio.sleep(1.5)
        assert d.inbox.events() == []
        status = (await sub.refresh())["deliveryStatus"]
        assert status["lastError"] == "connection_refused"


async def test_certificate_is_verified_for_the_host_name_not_the_address() -> None:
    async with deployment() as d, d.client() as client:
        # rebind.test resolves to the same 127.0.0.1, but the certificate is hooks.test's
        url = d.hook_url.replace(HOOK_HOST, "rebind.test")
        assert await _expect_callback_error(d, client, url) == "tls_error"


async def test_redirects_are_not_followed() -> None:
    async with deployment() as d, d.client() as client:
        url = f"https://{HOOK_HOST}:{d.hook_port}/redirect"
        assert await _expect_callback_error(d, client, url) == "challenge_failed"
        assert d.flaky.seen == []  # the redirect target never saw a request


async def test_a_wrong_echo_fails_the_challenge_and_nothing_is_delivered() -> None:
    async with deployment() as d, d.client() as client:
        url = f"https://{HOOK_HOST}:{d.hook_port}/wrong"
        assert await _expect_callback_error(d, client, url) == "challenge_failed"
        assert await d.hooks.subscriptions.all() == []


async def test_receiver_refuses_forged_tampered_and_stale_deliveries() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        body = b'{"eventId":"e1","name":"a","timestamp":"2026-01-01T00:00:00Z","data":{}}'
        good = signed_headers("e1", body, [sub.secret], subscription_id=sub.id)
        forged = signed_headers("e1", body, [generate_secret()], subscription_id=sub.id)
        stale = signed_headers(
            "e1", body, [sub.secret], subscription_id=sub.id, now_s=time.time() - 600
        )
        async with httpx2.AsyncClient(verify=d.tls.client_context()) as http:

            async def post(headers: dict[str, str], content: bytes = body) -> int:
                url = sub.url.replace(HOOK_HOST, "127.0.0.1")
                extensions = {"sni_hostname": HOOK_HOST}
                r = await http.post(url, content=content, headers=headers, extensions=extensions)
                return r.status_code

            assert await post(forged) == 401
            assert await post(good, body.replace(b"{}", b'{"x":1}')) == 401
            assert await post(stale) == 400
            assert await post({k: v for k, v in good.items() if k != "webhook-id"}) == 400
            assert d.inbox.messages == []
            assert await post(good) == 204
            assert await post(good) == 200  # a duplicate webhook-id: not forwarded again
            assert len(d.inbox.messages) == 1


async def test_rotation_dual_signs_so_either_secret_verifies() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        old = sub.secret
        await sub.rotate_secret()
        new = sub.secret
        assert new != old
        await d.emit("a", 1)
        await d.inbox.wait_for(lambda i: len(i.events()) == 1)
        headers, body = d.flaky.seen[-1], d.flaky.bodies[-1]
        assert len(headers["webhook-signature"].split(" ")) == 2
        for secret in (old, new):  # a receiver holding only one of them verifies
            Webhook(secret).verify(body, headers)


def _verifier(allowed: str) -> Verifier:
    """A verifier whose only verified URLs are the ``allowed`` entry (no cache hits)."""
    subs = InMemorySubscriptions()
    return Verifier(Sender(AddressPolicy()), subs, WebhookLimits(), [allowed])


@pytest.mark.parametrize(
    ("url", "covered"),
    [
        ("https://hooks.example.com/", True),
        ("https://hooks.example.com/x", True),
        ("https://HOOKS.example.com:443/x", True),
        ("https://hooks.example.com.evil.net/x", False),
        ("https://hooks.example.comx.io/", False),
        ("https://hooks.example.com:8443/", False),
        ("http://hooks.example.com/", False),
        ("https://user@evil.net/", False),
    ],
)
async def test_verified_urls_match_origin_exactly(url: str, covered: bool) -> None:
    assert await _verifier("https://hooks.example.com").is_verified("alice", url) is covered


@pytest.mark.parametrize(
    ("url", "covered"),
    [
        ("https://h.example/hooks", True),
        ("https://h.example/hooks/", True),
        ("https://h.example/hooks/a/b", True),
        ("https://h.example/hooksx", False),
        ("https://h.example/hook", False),
        ("https://h.example/", False),
    ],
)
async def test_verified_urls_match_paths_on_a_slash_boundary(url: str, covered: bool) -> None:
    assert await _verifier("https://h.example/hooks/").is_verified("alice", url) is covered
