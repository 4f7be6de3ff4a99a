"""Helpers of the OAuth proxy tests: a headless browser that keeps cookies and approves
the consent page (read with :mod:`html.parser`), and a served stack (fake upstream IdP +
an MCP server behind the proxy, both on 127.0.0.1 with free ports).

Cookies are kept by hand: the proxy's are ``Secure``, and http.cookiejar (httpx's jar)
does not send those over plain ``http://127.0.0.1``; a browser on loopback does (it
treats loopback as a secure context). Each cookie goes back only to the origin that set
it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import httpx2
from fake_idp import CLIENT_ID, CLIENT_SECRET, FakeIdP
from loopback import serve_at

from mcpkit.client import Client
from mcpkit.ext.auth.oauthproxy import OAuthProxy, OIDCProvider, UpstreamProvider
from mcpkit.server import Context, Server

# kind-ok: fixed-port the MCP client's redirect URI, never connected: the browser stops there
REDIRECT = "http://127.0.0.1:9/cb"


class _Forms(HTMLParser):
    """The first form's action and its hidden inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action = a.get("action", "")
        elif tag == "input" and a.get("type") == "hidden":
            self.fields[a.get("name", "")] = a.get("value", "")


def consent_form(page: str) -> tuple[str, dict[str, str]]:
    parser = _Forms()
    parser.feed(page)
    assert parser.action, "no form on the consent page"
    return parser.action, parser.fields


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Browser:
    """A user agent: keeps cookies per origin, does not follow redirects on its own."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http
        self.jar: dict[str, dict[str, str]] = {}

    def _cookies(self, url: str) -> dict[str, str]:
        jar = self.jar.get(origin(url), {})
        return {"cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}

    def _keep(self, url: str, response: httpx2.Response) -> None:
        jar = self.jar.setdefault(origin(url), {})
        for header in response.headers.get_list("set-cookie"):
            parsed: SimpleCookie = SimpleCookie()
            parsed.load(header)
            for name, morsel in parsed.items():
                if morsel["max-age"] == "0":
                    jar.pop(name, None)
                else:
                    jar[name] = morsel.value

    async def get(self, url: str) -> httpx2.Response:
        response = await self.http.get(url, headers=self._cookies(url))
        self._keep(url, response)
        return response

    async def post(self, url: str, form: dict[str, str]) -> httpx2.Response:
        response = await self.http.post(url, data=form, headers=self._cookies(url))
        self._keep(url, response)
        return response

    async def follow(
        self, response: httpx2.Response, stop: str
    ) -> httpx2.Response | dict[str, str]:
        """Follow redirects until one goes to ``stop`` (its query, parsed) or a page."""
        current = str(response.request.url)
        for _ in range(10):
            location = response.headers.get("location")
            if response.status_code not in (302, 303) or not location:
                return response
            target = urljoin(current, location)
            if target.split("?")[0] == stop:
                return dict(parse_qsl(urlsplit(target).query))
            response = await self.get(target)
            current = target
        raise AssertionError("too many redirects")

    async def approve(self, authorize_url: str, stop: str) -> httpx2.Response | dict[str, str]:
        """Open the authorization URL, approve the consent page if shown, follow back."""
        page = await self.get(authorize_url)
        if page.status_code == 200:
            action, fields = consent_form(page.text)
            page = await self.post(action, {**fields, "decision": "approve"})
        return await self.follow(page, stop)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class Stack:
    proxy: OAuthProxy
    idp: FakeIdP
    base: str
    mcp_url: str
    http: httpx2.AsyncClient
    seen: list[str]

    async def register(self, redirect_uris: list[str] | None = None) -> str:
        body = {
            "redirect_uris": redirect_uris or [REDIRECT],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "client_name": "Test <b>client</b>",
        }
        answer = await self.http.post(self.base + "/register", json=body)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["client_id"])

    def authorize_url(
        self, client_id: str, challenge: str, state: str = "st-1", **extra: str
    ) -> str:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": self.mcp_url,
            **extra,
        }
        return self.base + "/authorize?" + urlencode(params)

    async def token(self, form: dict[str, str]) -> httpx2.Response:
        return await self.http.post(self.base + "/token", data=form)

    async def login(self, browser: Browser | None = None) -> tuple[str, dict[str, Any]]:
        """The whole flow for a new client: its id and the token answer."""
        client_id = await self.register()
        verifier, challenge = pkce()
        back = await (browser or Browser(self.http)).approve(
            self.authorize_url(client_id, challenge), REDIRECT
        )
        assert isinstance(back, dict), back
        assert back["state"] == "st-1"
        assert back["iss"] == self.proxy.issuer
        answer = await self.token(
            {
                "grant_type": "authorization_code",
                "code": back["code"],
                "redirect_uri": REDIRECT,
                "client_id": client_id,
                "code_verifier": verifier,
                "resource": self.mcp_url,
            }
        )
        assert answer.status_code == 200, answer.text
        return client_id, answer.json()

    async def whoami(self, access_token: str) -> str:
        async with Client(self.mcp_url, auth=Bearer(access_token)) as client:
            result = await client.call_tool("whoami", {})
        assert not result.is_error, result
        return str(result.content[0].text)  # type: ignore[union-attr]


class Bearer(httpx2.Auth):
    """A fixed bearer token on every request."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Any:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


def upstream_for(idp: FakeIdP, *, oidc: bool = True, **options: Any) -> UpstreamProvider:
    if oidc:
        return OIDCProvider(idp.issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, **options)
    return UpstreamProvider(
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        authorization_endpoint=idp.base + "/authorize",
        token_endpoint=idp.base + "/token",
        userinfo_endpoint=idp.base + "/userinfo",
        **options,
    )


@contextlib.asynccontextmanager
async def stack(
    idp: FakeIdP | None = None, *, upstream: Any = None, **proxy_options: Any
) -> AsyncIterator[Stack]:
    """The fake IdP and an MCP server (tools ``whoami``, ``upstream``) behind the proxy."""
    idp = idp or FakeIdP()
    seen: list[str] = []
    async with serve_at(idp.app) as _idp_base:
        up = upstream(idp) if callable(upstream) else (upstream or upstream_for(idp))
        holder: dict[str, OAuthProxy] = {}

        def make(base: str) -> Any:
            server = Server("behind-proxy")
            proxy = OAuthProxy(
                up, base_url=base, resource=base + "/mcp", scopes_supported=["mcp"], **proxy_options
            )
            proxy.install(server)
            holder["proxy"] = proxy

            @server.tool()
            async def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
                from mcpkit.ext.auth import require_principal

                return require_principal(ctx).subject

            @server.tool()
            async def upstream(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
                token = await proxy.upstream_token(ctx)
                seen.append(token)
                return "ok"

            return server.http_app("/mcp")

        async with serve_at(make) as base, httpx2.AsyncClient(timeout=10) as http:
            yield Stack(holder["proxy"], idp, base, base + "/mcp", http, seen)
