"""The OAuth proxy's login flow: authorize, consent, upstream callback (Starlette routes).

Sources: RFC 6749 section 4.1, RFC 9207, RFC 8707, MCP security best practices
(2025-11-25) "Confused Deputy Problem".

Rules:
1. ``/authorize`` validates the request fully (client, exact ``redirect_uri``, PKCE S256,
   ``resource``: :mod:`.proxy` rule 2) before anything else; an error before the client
   and its redirect URI are known is a ``400`` page, never a redirect.
2. Consent is checked before any redirect upstream: without a consent cookie for this
   ``client_id``, exact ``redirect_uri`` and scopes covering those requested (the page
   shows them: an approval of fewer scopes is no approval of more), the consent page is
   shown (:mod:`.consent`); nothing is stored yet.
3. ``POST /consent`` needs the CSRF cookie, the same token in the form, and the signed
   request ticket bound to it; ``deny`` redirects ``access_denied`` to the client. The
   CSRF cookie is one per browser (reused by every consent page while it lives, not
   cleared by an approval), so two consent pages open at once can both be approved.
4. Only after approval is the upstream ``state`` stored (with the PKCE verifier, the
   ``nonce`` and a hash of a fresh browser-binding cookie), for ``pending_ttl_s``; the
   callback takes it once (``pop``), and it must come back in the browser that approved
   (the login cookie): a state carried to another browser is spent and refused. A
   browser keeps one login cookie for all its logins (reused while it lives, never
   cleared by a callback), so two logins under way in one browser both finish.
5. Upstream failures (an ``error`` in the callback, a token endpoint that fails, hangs
   or answers HTML, an ``id_token`` that does not verify) redirect to the client with
   ``access_denied``, ``server_error`` or ``temporarily_unavailable``, its ``state`` and
   ``iss``; the upstream's text never reaches the client.
6. The code issued to the client names the upstream subject; the upstream tokens are
   kept server-side (:meth:`~.proxy.OAuthProxy.keep_upstream`), never sent.
7. An authorization request's parameters total at most :data:`MAX_REQUEST_CHARS`
   characters (they travel in the signed consent ticket and the pending record).
8. The upstream's callback ``code`` is at most :data:`MAX_UPSTREAM_CODE_CHARS` visible
   ASCII characters (RFC 6749 appendix A.11, ``VSCHAR``); anything else is the client's
   ``server_error`` and is never sent to the upstream's token endpoint.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
from typing import Any, Protocol

from authlib.oauth2.rfc6749 import AccessDeniedError, OAuth2Error
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from mcpkit.ext.auth.devserver.app import (
    Persistence,
    Served,
    build_routes,
    resolve_cimd_client,
    with_cors,
)
from mcpkit.ext.auth.devserver.glue import BodyTooLarge, FormRequest, read_body, to_starlette
from mcpkit.ext.auth.devserver.grants import InvalidTargetError
from mcpkit.ext.auth.oauthproxy.consent import (
    CONSENT_COOKIE,
    CSRF_COOKIE,
    LOGIN_COOKIE,
    Tickets,
    consent_page,
    cookie_header,
)
from mcpkit.ext.auth.oauthproxy.store import Vault
from mcpkit.ext.auth.oauthproxy.upstream import UpstreamError, UpstreamProvider, UpstreamTokens

__all__ = [
    "MAX_REQUEST_CHARS",
    "MAX_UPSTREAM_CODE_CHARS",
    "FlowHost",
    "ProxyPersistence",
    "proxy_routes",
]


class ProxyPersistence(Persistence, Protocol):
    """The development server's persistence hook, plus loading one registered client."""

    async def client(self, client_id: str | None) -> None:
        """Bring ``client_id``'s registration into the in-process store, if it exists."""
        ...


class FlowHost(Served, Protocol):
    """What the login flow reads of :class:`~.proxy.OAuthProxy` (which satisfies it):
    the development server's state plus the upstream, the vault and the lifetimes."""

    upstream: UpstreamProvider
    vault: Vault
    resource: str
    consent_ttl_s: int
    pending_ttl_s: int
    cookie_key: bytes

    @property
    def persistence(self) -> ProxyPersistence: ...

    @property
    def callback_url(self) -> str: ...

    async def keep_upstream(self, client_id: str, subject: str, tokens: UpstreamTokens) -> None:
        """Keep the upstream tokens of ``subject`` in ``client_id``, server-side."""
        ...


MAX_REQUEST_CHARS = 8192
"""Rule 7: the parameters of one authorization request, in characters (keys and values)."""

MAX_UPSTREAM_CODE_CHARS = 4096
"""Rule 8: the upstream's authorization ``code``, in characters (Entra's run to ~2000)."""


class _ServerError(OAuth2Error):
    error = "server_error"


class _Unavailable(OAuth2Error):
    error = "temporarily_unavailable"


def _page(status: int, message: str) -> Response:
    body = f"<!doctype html><title>Sign-in failed</title><p>{html.escape(message)}</p>"
    headers = {"Content-Security-Policy": "frame-ancestors 'none'", "Cache-Control": "no-store"}
    return HTMLResponse(body, status_code=status, headers=headers)


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def proxy_routes(proxy: FlowHost) -> list[Route]:
    """Every route: the authorization server's (with CORS) and the login flow's."""
    tickets = Tickets(proxy.cookie_key)
    persist = proxy.persistence
    path = proxy.issuer_path
    max_body = proxy.limits.max_request_body_bytes

    async def validated(items: list[tuple[str, str]]) -> tuple[FormRequest, Any] | Response:
        """Rule 1: the request and its grant, else the error answer."""
        request = _form(proxy, items)
        if isinstance(request, Response):
            return request
        client_id = request.params.client_id
        refused = await resolve_cimd_client(proxy, client_id)
        if refused is not None:
            return refused
        await persist.client(client_id)
        grant = proxy.oauth.consent_grant(request)
        if not hasattr(grant, "validate_authorization_request"):
            return to_starlette(grant)
        resources = list(request.params.datalist.get("resource", []))
        if any(r.rstrip("/") != proxy.resource for r in resources):
            error = InvalidTargetError(
                f"this server issues tokens for {proxy.resource} only",
                state=request.params.state,
                redirect_uri=grant.redirect_uri,
            )
            return to_starlette(proxy.oauth.error_reply(request, error))
        if not resources:
            request = FormRequest(
                "GET", proxy.authorization_endpoint, {}, [*items, ("resource", proxy.resource)]
            )
            grant = proxy.oauth.consent_grant(request)
        return request, grant

    def fail(request: FormRequest, grant: Any, error: OAuth2Error) -> Response:
        """Rule 5."""
        error.state = request.params.state
        error.redirect_uri = grant.redirect_uri
        return to_starlette(proxy.oauth.error_reply(request, error))

    async def to_upstream(
        request: FormRequest, grant: Any, extra: list[str], browser: str
    ) -> Response:
        """Rule 4: store the pending authorization and send the browser upstream
        (``browser``: the login cookie it has, if any)."""
        try:
            await proxy.upstream.prepare()
        except UpstreamError:
            return fail(request, grant, _Unavailable("the identity provider is unavailable"))
        state = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(24)
        if len(browser) != 43 or not browser.isascii():
            browser = secrets.token_urlsafe(32)
        items = [(k, v) for k, values in request.params.datalist.items() for v in values]
        pending = {"items": items, "verifier": verifier, "nonce": nonce, "browser": _hash(browser)}
        await proxy.vault.put("pending", state, pending, proxy.pending_ttl_s)
        challenge = _s256(verifier)
        url = proxy.upstream.authorization_url(
            redirect_uri=proxy.callback_url, state=state, code_challenge=challenge, nonce=nonce
        )
        response = RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})
        response.headers.append(
            "Set-Cookie", cookie_header(LOGIN_COOKIE, browser, proxy.pending_ttl_s)
        )
        for cookie in extra:
            response.headers.append("Set-Cookie", cookie)
        return response

    async def authorize(request: Request) -> Response:
        """Rules 1-2."""
        if request.method == "POST":
            try:
                items = FormRequest.parse_form(await read_body(request, max_body))
            except BodyTooLarge:
                return _page(413, "request too large")
        else:
            items = list(request.query_params.multi_items())
        if sum(len(k) + len(v) + 2 for k, v in items) > MAX_REQUEST_CHARS:
            return _page(400, "this authorization request is too large")
        checked = await validated(items)
        if isinstance(checked, Response):
            return checked
        oauth_request, grant = checked
        client_id = str(oauth_request.params.client_id)
        consent = tickets.open("consent", request.cookies.get(CONSENT_COOKIE))
        asked = set(str(grant.request.scope or "").split())
        if (
            consent is not None
            and consent.get("client_id") == client_id
            and consent.get("redirect_uri") == grant.redirect_uri
            and asked <= set(consent.get("scopes") or ())
        ):
            return await to_upstream(
                oauth_request, grant, [], request.cookies.get(LOGIN_COOKIE, "")
            )
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        if len(csrf) != 43:
            csrf = secrets.token_urlsafe(32)
        ticket = tickets.sign("request", {"items": items, "csrf": csrf}, proxy.pending_ttl_s)
        client = proxy.clients.get(client_id)
        name = client.metadata.get("client_name") if client is not None else None
        body, headers = consent_page(
            action=proxy.issuer + "/consent",
            client_id=client_id,
            client_name=name if isinstance(name, str) else None,
            redirect_uri=grant.redirect_uri,
            provider=proxy.upstream.name,
            upstream_scopes=proxy.upstream.scopes,
            scopes=str(grant.request.scope or "").split(),
            csrf=csrf,
            ticket=ticket,
        )
        response = HTMLResponse(body, headers=headers)
        response.headers.append("Set-Cookie", cookie_header(CSRF_COOKIE, csrf, proxy.pending_ttl_s))
        return response

    async def consent(request: Request) -> Response:
        """Rule 3."""
        try:
            form = dict(FormRequest.parse_form(await read_body(request, max_body)))
        except BodyTooLarge:
            return _page(413, "request too large")
        cookie = request.cookies.get(CSRF_COOKIE, "")
        ticket = tickets.open("request", form.get("ticket"))
        sent = form.get("csrf", "")
        if (
            ticket is None
            or not cookie
            or not hmac.compare_digest(sent.encode(), cookie.encode())
            or not hmac.compare_digest(str(ticket.get("csrf", "")).encode(), cookie.encode())
        ):
            return _page(403, "this approval did not come from the consent page: start again")
        items = [(str(k), str(v)) for k, v in ticket.get("items", [])]
        checked = await validated(items)
        if isinstance(checked, Response):
            return checked
        oauth_request, grant = checked
        if form.get("decision") != "approve":
            return fail(oauth_request, grant, AccessDeniedError())
        approval = tickets.sign(
            "consent",
            {
                "client_id": oauth_request.params.client_id,
                "redirect_uri": grant.redirect_uri,
                "scopes": sorted(str(grant.request.scope or "").split()),
            },
            proxy.consent_ttl_s,
        )
        # the CSRF cookie stays: another consent page open in this browser carries it
        cookies = [cookie_header(CONSENT_COOKIE, approval, proxy.consent_ttl_s)]
        return await to_upstream(
            oauth_request, grant, cookies, request.cookies.get(LOGIN_COOKIE, "")
        )

    async def callback(request: Request) -> Response:
        """Rules 4-6."""
        query = request.query_params
        state = query.get("state")
        if not state or len(state) > 512:
            return _page(400, "the identity provider's answer has no state")
        pending = await proxy.vault.pop("pending", state)
        if pending is None:
            return _page(400, "this sign-in expired or was already used: start again")
        browser = request.cookies.get(LOGIN_COOKIE, "")
        if not hmac.compare_digest(_hash(browser).encode(), str(pending["browser"]).encode()):
            return _page(400, "this sign-in was started in another browser: start again")
        items = [(str(k), str(v)) for k, v in pending["items"]]
        checked = await validated(items)
        if isinstance(checked, Response):
            return checked
        oauth_request, grant = checked
        code = query.get("code") or ""
        if query.get("error") or not _vschar(code, MAX_UPSTREAM_CODE_CHARS):
            denied = query.get("error") == "access_denied"
            error = AccessDeniedError() if denied else _ServerError("the identity provider failed")
            return fail(oauth_request, grant, error)
        upstream = proxy.upstream
        try:
            tokens = await upstream.exchange(
                code=code,
                code_verifier=str(pending["verifier"]),
                redirect_uri=proxy.callback_url,
            )
            identity = await upstream.identity(tokens, nonce=str(pending["nonce"]))
        except UpstreamError as error:
            if error.error == "temporarily_unavailable":
                return fail(
                    oauth_request, grant, _Unavailable("the identity provider did not answer")
                )
            return fail(oauth_request, grant, _ServerError("the identity provider's login failed"))
        client_id = str(oauth_request.params.client_id)
        await proxy.keep_upstream(client_id, identity.subject, tokens)
        await persist.client(client_id)
        grant = proxy.oauth.consent_grant(oauth_request)  # no await from here to save()
        reply = proxy.oauth.respond(oauth_request, grant, identity.subject)
        response = to_starlette(reply)
        await persist.save()
        return response

    served = build_routes(proxy, authorize=authorize, persistence=persist)
    routes: list[Route] = []
    for route in served:
        if route.path.endswith("/authorize"):
            routes.append(route)
            continue
        methods = sorted((route.methods or {"GET"}) | {"OPTIONS"})
        routes.append(Route(route.path, with_cors(route.app), methods=methods))
    routes.append(Route(f"{path}/consent", consent, methods=["POST"]))
    routes.append(Route(f"{path}/callback", callback, methods=["GET"]))
    return routes


def _vschar(value: str, max_chars: int) -> bool:
    """Rule 8: a non-empty run of at most ``max_chars`` of ``%x20-7E``."""
    return 0 < len(value) <= max_chars and all(" " <= c <= "~" for c in value)


def _s256(verifier: str) -> str:
    import base64

    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _form(proxy: FlowHost, items: list[tuple[str, str]]) -> FormRequest | Response:
    """An authorization request rebuilt from its parameters (the issuer's URL, as
    :mod:`..devserver.app` rule 5 asks)."""
    try:
        return FormRequest("GET", proxy.authorization_endpoint, {}, items)
    except OAuth2Error as error:
        return _page(400, f"{error.error}: serve the proxy over https or loopback")
