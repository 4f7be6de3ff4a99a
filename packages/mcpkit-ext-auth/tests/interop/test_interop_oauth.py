"""OAuth between mcpkit and the official Python SDK (``mcp`` 2.3.0), both ways, over real
loopback HTTP with the development authorization server issuing real signed tokens.

1. The official client's OAuth provider (``mcp.client.auth.OAuthClientProvider``: RFC 9728
   discovery, RFC 8414 metadata, dynamic registration, PKCE, ``resource``) logs in to an
   mcpkit server protected by :func:`mcpkit.ext.auth.server.protect` and calls its tools
   with the scopes the server's challenge named.
2. mcpkit's client (:class:`~mcpkit.ext.auth.client.provider.OAuthProvider` with the
   headless redirect) logs in to an official ``MCPServer`` whose auth settings point at
   the development authorization server and whose token verifier checks the JWT with
   PyJWT against that server's key set, and calls a tool.
3. Step-up (issue 26): the official client's default flow registers dynamically with
   its first challenge's scope only, then meets a ``403 insufficient_scope`` naming a
   wider one and re-authorizes with the same registration. With the development
   server's ``client_scopes="offered"`` (``mcpkit auth-server``'s default) the call then
   succeeds; with ``"registered"`` (RFC 7591's limit) the token keeps the registered scope
   and the SDK raises the retried call's 403.

The "browser" in all three is an HTTP GET of the authorization URL: the development
authorization server consents for its test user at once and redirects with the code.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
import jwt
import pytest
from cli_helpers import serve, whoami_app
from mcp import Client as SdkClient
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings as SdkAuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

from mcpkit.client import Client
from mcpkit.ext.auth.client.authcode import AuthorizationCode
from mcpkit.ext.auth.client.provider import OAuthProvider
from mcpkit.ext.auth.client.redirect import HeadlessRedirect
from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

pytestmark = pytest.mark.anyio

SCOPES = ["notes:read", "notes:write"]


# -- 1. the official client against a protected mcpkit server ----------------------------


def notes_app(base: str, issuer: str) -> Any:
    """The protected mcpkit server: both scopes required, ``add_note`` needs notes:write."""
    return whoami_app(
        base, issuer, required_scopes=SCOPES, scopes_supported=SCOPES, writer_scope="notes:write"
    )


class SdkTokenStore:
    """The official client's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessBrowser:
    """The official client's redirect and callback handlers: GET the authorization URL,
    read the code, state and ``iss`` from the redirect's ``Location`` (never requested)."""

    def __init__(self) -> None:
        self.visits: list[str] = []
        self._result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        self.visits.append(url)
        async with httpx2.AsyncClient(timeout=10) as http:
            answer = await http.get(url)
        assert answer.status_code in (302, 303), answer.text
        query = dict(parse_qsl(urlsplit(answer.headers["location"]).query))
        self._result = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self._result is not None
        result, self._result = self._result, None
        return result


@contextlib.asynccontextmanager
async def protected_mcpkit() -> AsyncIterator[tuple[DevAuthServer, str]]:
    async with (
        serve_dev_auth_server(scopes_supported=SCOPES) as auth_server,
        serve(
            lambda base: whoami_app(
                base,
                auth_server.issuer,
                required_scopes=SCOPES,
                scopes_supported=SCOPES,
                writer_scope="notes:write",
            )
        ) as base,
    ):
        yield auth_server, f"{base}/mcp"


def sdk_provider(
    url: str, store: SdkTokenStore, browser: HeadlessBrowser, redirect_uri: str
) -> OAuthClientProvider:
    """The official SDK's OAuth provider, its default flow, driven by ``browser``."""
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            client_name="official sdk client",
        ),
        storage=store,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )


async def test_the_official_client_logs_in_to_a_protected_mcpkit_server() -> None:
    async with protected_mcpkit() as (auth_server, url):
        browser, store = HeadlessBrowser(), SdkTokenStore()
        # kind-ok: fixed-port a redirect URI, matched and never fetched
        provider = sdk_provider(url, store, browser, "http://127.0.0.1:3030/callback")
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            SdkClient(streamable_http_client(url, http_client=http)) as client,
        ):
            who = await client.call_tool("whoami", {})
            assert not who.is_error, who
            text = who.content[0].text  # type: ignore[union-attr]
            assert store.client_info is not None
            assert text == f"dev-user {store.client_info.client_id} notes:read notes:write"
            added = await client.call_tool("add_note", {"text": "from the sdk"})
            assert not added.is_error, added
            assert added.content[0].text == "saved from the sdk"  # type: ignore[union-attr]
            assert len(browser.visits) == 1  # one login for both calls
            first = dict(parse_qsl(urlsplit(browser.visits[0]).query))
            assert first["resource"] == url
            assert first["code_challenge_method"] == "S256"
            assert set(first["scope"].split()) == set(SCOPES)  # the 401 challenge's scope
        assert store.tokens is not None
        claims = jwt.decode(store.tokens.access_token, options={"verify_signature": False})
        assert claims["iss"] == auth_server.issuer
        assert claims["aud"] == url
        assert set(claims["scope"].split()) == set(SCOPES)


# -- 2. mcpkit's client against the official server --------------------------------------


class DevServerVerifier:
    """The official server's ``TokenVerifier``: an RFC 9068 JWT of the development
    authorization server, checked with PyJWT against its JWKS (``iss``, ``aud``,
    ``exp``, signature)."""

    def __init__(self, auth_server: DevAuthServer, resource: str) -> None:
        self.issuer = auth_server.issuer
        self.jwks_url = auth_server.jwks_url
        self.resource = resource
        self.keys: jwt.PyJWKSet | None = None
        self.checked = 0

    async def verify_token(self, token: str) -> AccessToken | None:
        if self.keys is None:
            async with httpx2.AsyncClient(timeout=10) as http:
                self.keys = jwt.PyJWKSet.from_dict((await http.get(self.jwks_url)).json())
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = next(k for k in self.keys.keys if k.key_id == kid)
            claims = jwt.decode(
                token, key, algorithms=["ES256"], audience=self.resource, issuer=self.issuer
            )
        except (jwt.PyJWTError, StopIteration):
            return None
        self.checked += 1
        return AccessToken(
            token=token,
            client_id=claims["client_id"],
            scopes=str(claims.get("scope", "")).split(),
            expires_at=claims["exp"],
            resource=self.resource,
            subject=claims["sub"],
        )


async def test_mcpkits_client_logs_in_to_a_protected_official_server() -> None:
    async with serve_dev_auth_server(scopes_supported=SCOPES) as auth_server:
        verifiers: list[DevServerVerifier] = []

        def sdk_app(base: str) -> Any:
            url = f"{base}/mcp"
            verifier = DevServerVerifier(auth_server, url)
            verifiers.append(verifier)
            server = MCPServer(
                "sdk-notes",
                token_verifier=verifier,
                auth=SdkAuthSettings(
                    issuer_url=auth_server.issuer,  # type: ignore[arg-type]
                    resource_server_url=url,  # type: ignore[arg-type]
                    required_scopes=["notes:read"],
                    validate_token_resource=True,
                ),
            )

            @server.tool()
            def add(a: int, b: int) -> int:  # pyright: ignore[reportUnusedFunction]
                """Add two integers."""
                return a + b

            return server.streamable_http_app()

        async with serve(sdk_app) as base:
            url = f"{base}/mcp"
            async with httpx2.AsyncClient(timeout=10) as http:
                bare = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert bare.status_code == 401  # the official server really is protected
            provider = OAuthProvider(AuthorizationCode(HeadlessRedirect()))
            async with Client(url, auth=provider, mode="legacy") as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error, result
            assert result.structured_content == {"result": 5}
            assert provider.discovery is not None
            assert provider.discovery.issuer == auth_server.issuer
            assert verifiers[0].checked >= 2  # every request carried the validated token


# -- 3. the official client's step-up against the development authorization server -----


async def sdk_step_up(client_scopes: str) -> tuple[SdkTokenStore, HeadlessBrowser, Any, Any]:
    """The official client's default flow against a server whose first challenge names
    ``notes:read`` and whose ``add_note`` needs ``notes:write`` (a 403
    ``insufficient_scope`` naming both); the authorization server runs ``client_scopes``.
    Returns the token store, the browser, ``whoami``'s result and ``add_note``'s outcome
    (its result, or the exception the call raised)."""
    async with (
        serve_dev_auth_server(scopes_supported=SCOPES, client_scopes=client_scopes) as auth,
        serve(
            lambda base: whoami_app(
                base,
                auth.issuer,
                required_scopes=["notes:read"],
                scopes_supported=SCOPES,
                writer_scope="notes:write",
            )
        ) as base,
    ):
        url = f"{base}/mcp"
        browser, store = HeadlessBrowser(), SdkTokenStore()
        provider = sdk_provider(url, store, browser, "http://127.0.0.1/callback")
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            SdkClient(streamable_http_client(url, http_client=http)) as client,
        ):
            who = await client.call_tool("whoami", {})
            added: Any
            try:
                added = await client.call_tool("add_note", {"text": "stepped up"})
            except MCPError as error:  # the SDK raises the refused call
                added = error
    return store, browser, who, added


def scopes_asked(browser: HeadlessBrowser) -> list[list[str]]:
    return [sorted(dict(parse_qsl(urlsplit(v).query))["scope"].split()) for v in browser.visits]


async def test_the_official_client_steps_up_against_the_development_server() -> None:
    store, browser, who, added = await sdk_step_up("offered")
    assert store.client_info is not None
    assert store.client_info.scope == "notes:read"  # registered with the first challenge's
    assert who.content[0].text == f"dev-user {store.client_info.client_id} notes:read"
    assert not isinstance(added, Exception), added
    assert not added.is_error, added
    assert added.content[0].text == "saved stepped up"
    assert scopes_asked(browser) == [["notes:read"], SCOPES]  # login, then the step-up
    assert store.tokens is not None
    claims = jwt.decode(store.tokens.access_token, options={"verify_signature": False})
    assert sorted(claims["scope"].split()) == SCOPES


async def test_the_official_client_cannot_step_up_when_limited_to_its_registered_scope() -> None:
    # Why the development server offers "offered": RFC 7591 lets it hold the client to the
    # scope it registered with, and the SDK registers with its first challenge's only.
    store, browser, _, added = await sdk_step_up("registered")
    assert scopes_asked(browser) == [["notes:read"], SCOPES]  # it did ask for both
    assert store.tokens is not None
    assert store.tokens.scope == "notes:read"  # and got its registered scope only
    assert isinstance(added, MCPError), added  # the retried call's 403, as the SDK raises it
    assert added.error.data == {"error": "insufficient_scope", "scope": "notes:read notes:write"}
