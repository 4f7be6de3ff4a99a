"""Server identity (SEP-3415 §Webhook security "Server identity (optional)"; Standard
Webhooks ``v1a``): every POST of a server with an identity carries an ed25519 signature
that verifies under the keys it publishes at ``/.well-known/mcp-webhook-jwks.json``; a
receiver requiring identity accepts only those, follows a rotation, and a receiver that
does not require it (and the ``standardwebhooks`` verifier) ignores ``v1a``."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from standardwebhooks import Webhook
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hooks.hookkit import TLS, Deployment, deployment, make_tls, serve
from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import (
    WebhookReceiver,
    generate_secret,
    subscribe_webhook,
)
from mcpkit.experimental.events.webhooks.client import server_label
from mcpkit.experimental.events.webhooks.identity import (
    ServerIdentity,
    ServerKeys,
    SigningKey,
    fetch_server_keys,
    jwks_url,
)
from mcpkit.experimental.events.webhooks.signing import signed_headers
from mcpkit.experimental.events.wire import CALLBACK_ENDPOINT_ERROR, JWKS_PATH
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

BODY = b'{"eventId":"e1","name":"a","timestamp":"2026-01-01T00:00:00Z","data":{}}'


def _signatures(headers: dict[str, str]) -> list[str]:
    return [s.split(",")[0] for s in headers["webhook-signature"].split(" ")]


async def test_the_standardwebhooks_verifier_accepts_a_header_with_v1_and_v1a() -> None:
    secret, identity = generate_secret(), ServerIdentity.generate()
    headers = signed_headers("e1", BODY, [secret], subscription_id="sub_1", identity=identity)
    assert _signatures(headers) == ["v1", "v1a"]
    Webhook(secret).verify(BODY, headers)  # raises when it does not verify
    v1, v1a = headers["webhook-signature"].split(" ")
    Webhook(secret).verify(BODY, {**headers, "webhook-signature": f"{v1a} {v1}"})
    keys = ServerKeys([identity.jwks()])
    assert await keys.verify(BODY, headers)
    assert not await keys.verify(BODY.replace(b"{}", b'{"x":1}'), headers)
    assert not await keys.verify(BODY, {**headers, "webhook-id": "e2"})
    assert not await ServerKeys([ServerIdentity.generate().jwks()]).verify(BODY, headers)
    assert not await keys.verify(BODY, {**headers, "webhook-signature": v1})
    for junk in ("v1a,", "v1a,not-base64!", "v1a,AAAA", "v1a", "v1a,a,b"):
        assert not await keys.verify(BODY, {**headers, "webhook-signature": f"{v1} {junk}"})
    # only the first max_signatures v1a signatures are examined
    padded = " ".join([v1, *["v1a,AAAA"] * 4, v1a])
    assert not await keys.verify(BODY, {**headers, "webhook-signature": padded})
    assert await ServerKeys([identity.jwks()], max_signatures=5).verify(
        BODY, {**headers, "webhook-signature": padded}
    )


async def test_keys_load_from_pem_and_jwk_files_and_only_public_parts_are_published(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate(kid="k-2026-01")
    (tmp_path / "key.pem").write_bytes(key.private_pem())
    from_pem = SigningKey.load(tmp_path / "key.pem", kid="k-2026-01")
    assert from_pem.sign(b"x") != ""
    assert from_pem.public_jwk() == key.public_jwk()
    jwk = {**key.okp.as_dict(private=True)}
    (tmp_path / "key.json").write_text(json.dumps(jwk))
    assert SigningKey.load(tmp_path / "key.json").public_jwk() == key.public_jwk()
    identity = ServerIdentity(key, published=[SigningKey.generate()])
    doc = identity.jwks()
    assert doc["keys"][0]["kid"] == "k-2026-01"
    for entry in doc["keys"]:
        assert (entry["kty"], entry["crv"]) == ("OKP", "Ed25519")
        assert (entry["use"], entry["alg"]) == ("sig", "EdDSA")
        assert "d" not in entry
    private_d = str(jwk["d"])
    assert private_d not in repr(identity)
    assert private_d not in repr(key)
    public = SigningKey.from_jwk(key.public_jwk())
    with pytest.raises(ValueError, match="public only"):
        public.sign(b"x")
    with pytest.raises(ValueError, match="private"):
        ServerIdentity(public)
    with pytest.raises(ValueError, match="Ed25519"):
        SigningKey.from_jwk({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"})
    with pytest.raises(ValueError, match="https"):
        jwks_url("http://mcp.example/mcp")
    assert jwks_url("https://mcp.example:8443/a/mcp?x=1") == f"https://mcp.example:8443{JWKS_PATH}"


async def test_every_post_of_a_server_with_an_identity_carries_a_verifying_v1a() -> None:
    identity = ServerIdentity.generate()
    async with deployment(hooks_options={"identity": identity}) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        await d.emit("a", 3)
        await d.inbox.wait_for(lambda i: len(i.events()) == 3)  # receiver ignores v1a
        await d.hooks.terminate(sub.id, JSONRPCError(-32024, "Forbidden", {"reason": "x"}))
        kinds = [h["webhook-id"].split("_")[1] for h in d.flaky.seen]
        assert (kinds[0], kinds[-1]) == ("verification", "terminated")
        keys = ServerKeys([identity.jwks()])
        assert set(d.flaky.paths) == {urlsplit(sub.url).path}  # all on the server's route
        for headers, body in zip(d.flaky.seen, d.flaky.bodies, strict=True):
            assert _signatures(headers) == ["v1", "v1a"]
            assert await keys.verify(body, headers)
            Webhook(sub.secret).verify(body, headers)
        # the JWK set is served beside the MCP endpoint, on its origin
        async with httpx2.AsyncClient() as http:
            got = await http.get(d.mcp_url.replace("/mcp", JWKS_PATH))
        assert got.status_code == 200
        assert got.json() == identity.jwks()
        assert "max-age=" in got.headers["cache-control"]


@contextlib.asynccontextmanager
async def jwks_origin(identity: ServerIdentity) -> AsyncIterator[tuple[str, TLS]]:
    """A real mcpkit server publishing ``identity`` over https on 127.0.0.1 (cert for
    the IP address); yields its MCP URL and TLS."""
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp), "127.0.0.1")
        server = Server("identity-origin")
        identity.install(server)
        async with serve(server.http_app(), tls=tls) as port:
            yield f"https://127.0.0.1:{port}/mcp", tls


def requiring(keys: ServerKeys) -> Any:
    return lambda inbox: WebhookReceiver(inbox.on_message, server_keys=keys)


async def _post(d: Deployment, url: str, body: bytes, headers: dict[str, str]) -> int | None:
    return (await d.hooks.sender.post(url, body, headers)).status


def _refused_on_the_route(d: Deployment, client: Client) -> None:
    """The one challenge POST reached the server's route (the HMAC of the secret
    registered there verifies) and was refused 401 for its identity, not 404/425."""
    route = d.receiver.route_for(server_label(client))
    assert d.flaky.paths == [f"/hooks/{route}"]
    assert d.flaky.statuses == [401]


async def test_a_receiver_requiring_identity_refuses_other_keys_and_missing_v1a() -> None:
    trusted, other = ServerIdentity.generate(), ServerIdentity.generate()
    keys = ServerKeys([trusted.jwks()])
    # no identity: the verification challenge has no v1a, the receiver answers 401
    async with (
        deployment(receiver_factory=requiring(keys)) as d,
        d.client() as client,
    ):
        with pytest.raises(JSONRPCError) as err:
            await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        assert err.value.code == CALLBACK_ENDPOINT_ERROR
        assert err.value.data == {"reason": "challenge_failed"}
        _refused_on_the_route(d, client)
    # an identity the receiver does not trust: refused the same way
    async with (
        deployment(receiver_factory=requiring(keys), hooks_options={"identity": other}) as d,
        d.client() as client,
    ):
        with pytest.raises(JSONRPCError) as err:
            await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        assert err.value.code == CALLBACK_ENDPOINT_ERROR
        _refused_on_the_route(d, client)
    # the trusted identity: verified and delivered; forged deliveries are 401
    async with (
        deployment(receiver_factory=requiring(keys), hooks_options={"identity": trusted}) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        await d.emit("a", 2)
        await d.inbox.wait_for(lambda i: len(i.events()) == 2)

        def sign(identity: ServerIdentity | None, msg: str) -> dict[str, str]:
            return signed_headers(
                msg, BODY, [sub.secret], subscription_id=sub.id, identity=identity
            )

        assert await _post(d, sub.url, BODY, sign(None, "e1")) == 401  # HMAC alone
        assert await _post(d, sub.url, BODY, sign(other, "e2")) == 401  # another server's key
        # a key offered by the delivery itself is never trusted
        carrying = json.dumps({**json.loads(BODY), **other.jwks()}).encode()
        offered = signed_headers(
            "e3", carrying, [sub.secret], subscription_id=sub.id, identity=other
        )
        offered["x-webhook-jwks"] = json.dumps(other.jwks())
        assert await _post(d, sub.url, carrying, offered) == 401
        assert len(d.inbox.events()) == 2
        assert await _post(d, sub.url, BODY, sign(trusted, "e4")) == 204
        assert len(d.inbox.events()) == 3
        assert {m.route for m in d.inbox.messages} == {sub.route}
        assert set(d.flaky.paths) == {urlsplit(sub.url).path}


async def test_a_receiver_requiring_identity_mounted_by_routes_keeps_the_challenge() -> None:
    """``receiver.routes()`` of a receiver with ``server_keys`` leaves the receiver
    document out, so a server without a trusted key is refused at subscribe time (with
    the document it would skip the challenge, subscribe, and be refused on every POST)."""
    keys = ServerKeys([ServerIdentity.generate().jwks()])
    async with deployment(receiver_factory=requiring(keys)) as d, d.client() as client:
        paths = [getattr(r, "path", "") for r in d.receiver.routes("/hooks")]
        assert paths == ["/hooks"]
        async with serve(Starlette(routes=d.receiver.routes("/hooks")), tls=d.tls) as port:
            with pytest.raises(JSONRPCError) as err:
                await subscribe_webhook(
                    client, d.receiver, name="a", url=f"https://hooks.test:{port}/hooks/"
                )
            assert err.value.data == {"reason": "challenge_failed"}
        # asked for explicitly, the document verifies the URL: no challenge, and every
        # delivery of the untrusted server is refused
        app = Starlette(routes=d.receiver.routes("/hooks", well_known=True))
        async with serve(app, tls=d.tls) as port:
            sub = await subscribe_webhook(
                client, d.receiver, name="a", url=f"https://hooks.test:{port}/hooks/"
            )
            await d.emit("a", 1)
            with anyio.fail_after(20):
                while (await d.hooks.subscriptions.state(sub.id)).last_error is None:
                    await anyio.sleep(0.05)
            assert d.inbox.messages == []


async def test_the_keys_are_fetched_from_the_mcp_origin_and_a_rotation_is_followed() -> None:
    k1 = SigningKey.generate(kid="k1")
    identity = ServerIdentity(k1)
    async with jwks_origin(identity) as (mcp_url, origin_tls):
        keys = await fetch_server_keys(mcp_url, verify=origin_tls.client_context(), min_refresh_s=0)
        assert keys.kids == ["k1"]
        async with (
            deployment(receiver_factory=requiring(keys), hooks_options={"identity": identity}) as d,
            d.client() as client,
        ):
            sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
            await d.emit("a", 3)
            await d.inbox.wait_for(lambda i: len(i.events()) == 3)
            identity.rotate(SigningKey.generate(kid="k2"))  # k2 signs; k1 stays published
            assert [k["kid"] for k in identity.jwks()["keys"]] == ["k2", "k1"]
            await d.emit("a", 3, start=3)
            await d.inbox.wait_for(lambda i: len(i.events()) == 6)
            assert keys.kids == ["k2", "k1"]  # fetched again on the first k2 signature
            state = await d.hooks.subscriptions.state(sub.id)
            assert state.last_error is None  # no delivery was refused on the way
            identity.retire("k1")
            assert [k["kid"] for k in identity.jwks()["keys"]] == ["k2"]
            # a key the origin does not publish is refused, even after a fresh fetch
            d.hooks.identity = ServerIdentity(SigningKey.generate(kid="k3"))
            await d.emit("a", 1, start=6)
            with pytest.raises(TimeoutError):
                await d.inbox.wait_for(lambda i: len(i.events()) == 7, timeout_s=2)
            assert keys.kids == ["k2"]


async def test_fetching_is_https_only_bounded_and_never_follows_redirects() -> None:
    mode = {"now": "big"}

    async def jwks(request: Request) -> Response:
        if mode["now"] == "redirect":
            return Response(status_code=307, headers={"Location": "/elsewhere"})
        return Response(b'{"keys": [' + b" " * 100_000 + b"]}", media_type="application/json")

    with pytest.raises(ValueError, match="https"):
        # kind-ok: fixed-port refused as not https before connecting
        await fetch_server_keys("http://127.0.0.1:1/mcp")
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp), "127.0.0.1")
        app = Starlette(routes=[Route(JWKS_PATH, jwks)])
        async with serve(app, tls=tls) as port:
            url = f"https://127.0.0.1:{port}/mcp"
            with pytest.raises(ValueError, match="max_jwks_bytes"):
                await fetch_server_keys(url, verify=tls.client_context(), max_jwks_bytes=4096)
            mode["now"] = "redirect"
            with pytest.raises(ValueError, match="307"):
                await fetch_server_keys(url, verify=tls.client_context())
            with pytest.raises(httpx2.HTTPError):  # the system trust store: not the test CA
                await fetch_server_keys(url)
    many = {"keys": [SigningKey.generate().public_jwk() for _ in range(5)]}
    with pytest.raises(ValueError, match="max_keys"):
        ServerKeys([many], max_keys=4)


async def test_a_pinned_route_accepts_only_its_own_servers_key() -> None:
    """identity rule 10, receiver rule 11: servers A and B are both trusted (keys fetched
    from their origins); B has learnt the HMAC secret of A's subscription. On A's route
    B's v1a signature no longer verifies; A's does. An unpinned route still takes any
    trusted key."""
    a, b = ServerIdentity.generate(), ServerIdentity.generate()
    async with jwks_origin(a) as (a_url, a_tls), jwks_origin(b) as (b_url, b_tls):
        both = a_tls.client_context()
        b_tls.ca.configure_trust(both)
        keys = ServerKeys(origins=[a_url, b_url], verify=both)
        await keys.refresh()
        async with (
            deployment(receiver_factory=requiring(keys), hooks_options={"identity": a}) as d,
            d.client() as client,
        ):
            sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)

            def sign(identity: ServerIdentity, msg: str) -> dict[str, str]:
                return signed_headers(
                    msg, BODY, [sub.secret], subscription_id=sub.id, identity=identity
                )

            # the harness's MCP server is plain http: its route takes any trusted key
            assert await _post(d, sub.url, BODY, sign(b, "e1")) == 204
            assert len(d.inbox.events()) == 1
            d.receiver.pin(sub.route, a_url)  # the route of the server at A's origin
            assert await _post(d, sub.url, BODY, sign(b, "e2")) == 401
            assert len(d.inbox.events()) == 1
            assert await _post(d, sub.url, BODY, sign(a, "e3")) == 204
            assert len(d.inbox.events()) == 2
            with pytest.raises(ValueError, match="route"):
                d.receiver.pin("not a route!", a_url)
