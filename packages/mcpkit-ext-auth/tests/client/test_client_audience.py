"""Credentials go only where they were issued (issue 25 §5; ``basic/authorization``
§Access Token Usage, §Token Audience Binding; ``client-registration`` §Authorization
Server Binding; RFC 8707; RFC 9449 §8-§9).

One :class:`OAuthProvider` given to two clients of two real protected servers (mcpkit
resource servers validating real signed JWTs from the development authorization
server, on loopback ports chosen by the OS): each server only ever sees tokens issued
for it, records of every ``Authorization`` header prove it. Credentials bound to one
authorization server (pre-registered clients, client credentials, JWT bearer) are
refused at another one before anything is sent there.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import jwt
import pytest
from loopback import serve_at

from mcpkit.client import Client
from mcpkit.client.errors import ClientError
from mcpkit.ext.auth.client import (
    AuthorizationCode,
    ClientRegistration,
    GrantContext,
    HeadlessRedirect,
    MemoryTokenStorage,
    OAuthError,
    OAuthProvider,
    TokenSet,
)
from mcpkit.ext.auth.client.discovery import canonical_resource
from mcpkit.ext.auth.client.dpop import DPoPKey
from mcpkit.ext.auth.client.grants import ClientCredentials
from mcpkit.ext.auth.devserver import DevAuthServer
from mcpkit.ext.auth.server import AuthSettings, DPoPSettings, principal, protect
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
CALLBACK = "http://127.0.0.1:9/callback"  # kind-ok: fixed-port redirect URI matched, never fetched


@dataclass
class Recorded:
    """Every request one served app received: (path, Authorization, form-less body)."""

    base: str = ""
    requests: list[tuple[str, str | None, bytes]] = field(
        default_factory=list[tuple[str, str | None, bytes]]
    )

    def wrap(self, app: Any) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            chunks: list[bytes] = []
            more = True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = bool(message.get("more_body"))
            body = b"".join(chunks)
            self.requests.append((scope["path"], headers.get("authorization"), body))
            sent = False

            async def replay() -> MutableMapping[str, Any]:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await app(scope, replay, send)

        return wrapped

    @property
    def tokens(self) -> set[str]:
        """The access tokens presented (``Bearer``/``DPoP`` schemes)."""
        out: set[str] = set()
        for _, value, _ in self.requests:
            scheme, _, token = (value or "").partition(" ")
            if scheme.lower() in ("bearer", "dpop") and token:
                out.add(token)
        return out

    def bodies(self) -> bytes:
        return b"\n".join(body for _, _, body in self.requests)


def whoami_app(base: str, issuer: str) -> Any:
    server = Server("whoami")

    @server.tool()
    def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        caller = principal(ctx)
        assert caller is not None
        return f"{caller.subject} {caller.client_id}"

    protect(
        server,
        AuthSettings(
            server_url=f"{base}/mcp",
            authorization_servers=[issuer],
            jwks_url=f"{issuer}/jwks",
            scopes_supported=["mcp:read"],
            required_scopes=["mcp:read"],
        ),
    )
    return server.http_app()


@contextlib.asynccontextmanager
async def authorization_server(**options: Any) -> AsyncGenerator[tuple[DevAuthServer, Recorded]]:
    """A development authorization server on loopback, every request recorded."""
    dev = DevAuthServer(scopes_supported=["mcp:read"], **options)
    seen = Recorded()

    def make(base: str) -> Any:
        dev.bind(base)
        seen.base = base
        return seen.wrap(dev.app)

    async with serve_at(make, lifespan="off", force_exit=True):
        yield dev, seen


@contextlib.asynccontextmanager
async def protected(issuer: str) -> AsyncGenerator[Recorded]:
    """A protected MCP server at ``<base>/mcp`` trusting ``issuer``, recorded."""
    seen = Recorded()

    def make(base: str) -> Any:
        seen.base = base
        return seen.wrap(whoami_app(base, issuer))

    async with serve_at(make, force_exit=True):
        yield seen


async def whoami(url: str, auth: OAuthProvider) -> str:
    with anyio.fail_after(60):
        async with Client(url, auth=auth, timeout_s=20, probe_timeout_s=20) as client:
            result = await client.call_tool("whoami", {})
    return result.content[0].text  # type: ignore[union-attr]


def audience(dev: DevAuthServer, token: str) -> Any:
    """The ``aud`` of a token the development server signed (signature checked)."""
    keys = jwt.PyJWKSet.from_dict(dev.jwks())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    claims = jwt.decode(
        token,
        key.key,
        algorithms=["ES256", "RS256"],
        issuer=dev.issuer,
        options={"verify_aud": False},
    )
    return claims["aud"]


def headless() -> AuthorizationCode:
    return AuthorizationCode(HeadlessRedirect(CALLBACK))


class Counted:
    """The authorization code grant, counting its runs."""

    def __init__(self) -> None:
        self.inner = headless()
        self.redirect_uris = self.inner.redirect_uris
        self.runs = 0

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        self.runs += 1
        return await self.inner.obtain(ctx)


async def test_one_provider_two_servers_each_gets_only_its_own_token() -> None:
    async with (
        authorization_server() as (dev, _),
        protected(dev.issuer) as a,
        protected(dev.issuer) as b,
    ):
        storage = MemoryTokenStorage()
        provider = OAuthProvider(headless(), storage=storage)
        first_a = await whoami(f"{a.base}/mcp", provider)
        who_b = await whoami(f"{b.base}/mcp", provider)
        again_a = await whoami(f"{a.base}/mcp", provider)
        reg = await storage.get_registration(canonical_resource(f"{a.base}/mcp"), dev.issuer)
        assert reg is not None
        assert first_a == again_a == f"dev-user {reg.client_id}"
        assert who_b.startswith("dev-user ")
        assert a.tokens
        assert b.tokens
        assert not (a.tokens & b.tokens)  # B never saw A's token, nor A B's
        assert {audience(dev, t) for t in a.tokens} == {f"{a.base}/mcp"}
        assert {audience(dev, t) for t in b.tokens} == {f"{b.base}/mcp"}
        stored_b = await storage.get_tokens(canonical_resource(f"{b.base}/mcp"))
        assert stored_b is not None
        assert stored_b.resource == f"{b.base}/mcp"
        assert stored_b.issuer == dev.issuer


async def test_client_credentials_get_a_token_per_server_at_one_issuer() -> None:
    async with (
        authorization_server() as (dev, _),
        protected(dev.issuer) as a,
        protected(dev.issuer) as b,
    ):
        dev.register_client("svc", client_secret="s3cret", grant_types=["client_credentials"])
        provider = OAuthProvider(ClientCredentials("svc", client_secret="s3cret"))
        who_a = await whoami(f"{a.base}/mcp", provider)
        who_b = await whoami(f"{b.base}/mcp", provider)
        assert who_a == who_b
        assert who_a.endswith(" svc")
        assert a.tokens
        assert b.tokens
        assert not (a.tokens & b.tokens)
        assert {audience(dev, t) for t in b.tokens} == {f"{b.base}/mcp"}


async def test_client_credentials_are_never_sent_to_another_issuer() -> None:
    async with (
        authorization_server() as (dev1, as1),
        authorization_server() as (dev2, as2),
        protected(dev1.issuer) as a,
        protected(dev2.issuer) as b,
    ):
        dev1.register_client("svc", client_secret="s3cret-1", grant_types=["client_credentials"])
        provider = OAuthProvider(ClientCredentials("svc", client_secret="s3cret-1"))
        await whoami(f"{a.base}/mcp", provider)
        with pytest.raises(ClientError) as err:
            await whoami(f"{b.base}/mcp", provider)
        refusal = err.value if isinstance(err.value, OAuthError) else err.value.__cause__
        assert isinstance(refusal, OAuthError), err.value
        assert refusal.error == "invalid_client"
        assert dev1.issuer in str(refusal)
        assert dev2.issuer in str(refusal)
        assert not (a.tokens & b.tokens)
        assert not [r for r in as2.requests if r[0].endswith("/token")]
        assert b"s3cret-1" not in as2.bodies()
        assert all("s3cret" not in (auth or "") for _, auth, _ in as2.requests)
        assert as1.requests  # the secret went to its own server


async def test_a_pre_registered_client_is_refused_at_another_issuer() -> None:
    async with (
        authorization_server() as (dev1, _),
        authorization_server() as (dev2, as2),
        protected(dev1.issuer) as a,
        protected(dev2.issuer) as b,
    ):
        dev1.register_client("app", redirect_uris=[CALLBACK])
        provider = OAuthProvider(headless(), registration=ClientRegistration(client_id="app"))
        await whoami(f"{a.base}/mcp", provider)
        with pytest.raises(ClientError) as err:
            await whoami(f"{b.base}/mcp", provider)
        assert "invalid_client" in str(err.value) or "invalid_client" in str(err.value.__cause__)
        assert not (a.tokens & b.tokens)
        assert not [r for r in as2.requests if "/authorize" in r[0] or r[0].endswith("/token")]


async def test_dynamic_registrations_are_per_issuer_and_tokens_per_server() -> None:
    async with (
        authorization_server() as (dev1, as1),
        authorization_server() as (dev2, as2),
        protected(dev1.issuer) as a,
        protected(dev2.issuer) as b,
    ):
        storage = MemoryTokenStorage()
        provider = OAuthProvider(headless(), storage=storage)
        who_a = await whoami(f"{a.base}/mcp", provider)
        who_b = await whoami(f"{b.base}/mcp", provider)
        reg_a = await storage.get_registration(canonical_resource(f"{a.base}/mcp"), dev1.issuer)
        reg_b = await storage.get_registration(canonical_resource(f"{b.base}/mcp"), dev2.issuer)
        assert reg_a is not None
        assert reg_b is not None
        assert reg_a.client_id != reg_b.client_id
        assert who_a == f"dev-user {reg_a.client_id}"
        assert who_b == f"dev-user {reg_b.client_id}"
        assert reg_a.client_id.encode() not in as2.bodies()
        assert not any(reg_a.client_id in (auth or "") for _, auth, _ in as2.requests)
        assert not (a.tokens & b.tokens)
        assert {audience(dev2, t) for t in b.tokens} == {f"{b.base}/mcp"}
        assert as1.requests


async def test_dpop_nonces_of_a_resource_and_an_authorization_server_stay_apart() -> None:
    """RFC 9449 §8, §9: the authorization server's nonce goes in token-endpoint proofs
    only, the resource server's in resource proofs only, even on one origin."""
    dev = DevAuthServer(issuer_path="/as", scopes_supported=["mcp:read"], require_dpop_nonce=True)
    dev.register_client("svc", client_secret="s3cret", grant_types=["client_credentials"])
    proofs: list[tuple[str, str | None]] = []  # (path, nonce claim)
    as_nonces: set[str] = set()
    rs_nonces: set[str] = set()

    def make(base: str) -> Any:
        dev.bind(base)
        server = Server("dpop")

        @server.tool()
        def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
            caller = principal(ctx)
            assert caller is not None
            return caller.subject

        protect(
            server,
            AuthSettings(
                server_url=f"{base}/mcp",
                authorization_servers=[dev.issuer],
                jwks_url=f"{dev.issuer}/jwks",
                required_scopes=["mcp:read"],
                scopes_supported=["mcp:read"],
                dpop=DPoPSettings(required=True, nonces=True),
            ),
        )
        rs_app, as_app = server.http_app(), dev.app

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            path: str = scope.get("path", "")
            to_as = path.startswith(("/as", "/.well-known/oauth-authorization-server"))
            if scope["type"] == "http":
                headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
                if "dpop" in headers:
                    proofs.append(
                        (
                            path,
                            jwt.decode(headers["dpop"], options={"verify_signature": False}).get(
                                "nonce"
                            ),
                        )
                    )

            async def sending(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    for k, v in message.get("headers", []):
                        if k.decode().lower() == "dpop-nonce":
                            (as_nonces if to_as else rs_nonces).add(v.decode())
                await send(message)

            await (as_app if to_as else rs_app)(scope, receive, sending)

        return app

    async with serve_at(make, force_exit=True) as base:
        provider = OAuthProvider(ClientCredentials("svc", client_secret="s3cret"), dpop=DPoPKey())
        assert await whoami(f"{base}/mcp", provider) == "svc"
    at_token = [n for p, n in proofs if p.startswith("/as")]
    at_mcp = [n for p, n in proofs if p == "/mcp"]
    assert as_nonces
    assert rs_nonces
    assert at_token[-1] in as_nonces
    assert at_mcp[-1] in rs_nonces
    assert not {n for n in at_mcp if n} & as_nonces  # the AS's nonce never reached the RS
    assert not {n for n in at_token if n} & rs_nonces  # nor the RS's the AS


async def test_a_stored_token_obtained_for_another_server_is_never_sent() -> None:
    """Rule 9: a storage entry under B's key holding a token recorded for A (a copied
    or hand-edited token file, a storage keyed wrongly) is not sent to B; B gets its
    own token."""
    async with (
        authorization_server() as (dev, _),
        protected(dev.issuer) as a,
        protected(dev.issuer) as b,
    ):
        url_a, url_b = f"{a.base}/mcp", f"{b.base}/mcp"
        storage = MemoryTokenStorage()
        await whoami(url_a, OAuthProvider(headless(), storage=storage))
        token_a = await storage.get_tokens(canonical_resource(url_a))
        assert token_a is not None
        assert token_a.resource == url_a
        await storage.set_tokens(canonical_resource(url_b), token_a)
        assert (await whoami(url_b, OAuthProvider(headless(), storage=storage))).startswith(
            "dev-user "
        )
        assert b.tokens
        assert token_a.access_token not in b.tokens
        assert {audience(dev, t) for t in b.tokens} == {url_b}


async def test_stored_tokens_of_a_server_publishing_metadata_only_in_its_challenge() -> None:
    """Rule 11 where discovery without a challenge finds no metadata: the stored token is
    held back until the 401's ``resource_metadata`` names its issuer, then sent; no new
    login."""
    prm_path = "/meta/prm"
    async with authorization_server() as (dev, _):
        seen = Recorded()

        def make(base: str) -> Any:
            seen.base = base
            inner = whoami_app(base, dev.issuer)
            well_known = "/.well-known/oauth-protected-resource/mcp"

            async def app(scope: Scope, receive: Receive, send: Send) -> None:
                if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
                    await send({"type": "http.response.start", "status": 404, "headers": []})
                    await send({"type": "http.response.body", "body": b""})
                    return
                if scope["type"] == "http" and scope["path"] == prm_path:
                    scope = {**scope, "path": well_known, "raw_path": well_known.encode()}

                async def sending(message: MutableMapping[str, Any]) -> None:
                    if message["type"] == "http.response.start":
                        message["headers"] = [
                            (k, v.replace(well_known.encode(), prm_path.encode()))
                            for k, v in message.get("headers", [])
                        ]
                    await send(message)

                await inner(scope, receive, sending)

            return seen.wrap(app)

        async with serve_at(make, force_exit=True):
            url = f"{seen.base}/mcp"
            storage = MemoryTokenStorage()
            first = Counted()
            await whoami(url, OAuthProvider(first, storage=storage))
            assert first.runs == 1
            stored = await storage.get_tokens(canonical_resource(url))
            assert stored is not None
            sent_before = len(seen.requests)
            second = OAuthProvider(first, storage=storage)
            assert (await whoami(url, second)).startswith("dev-user ")
            assert first.runs == 1  # the stored token served: no second login
            later = [auth for path, auth, _ in seen.requests[sent_before:] if path == "/mcp"]
            assert later[0] is None  # held back until the challenge named the issuer
            assert f"Bearer {stored.access_token}" in later
