"""The OAuth proxy's consent page and its cookies.

Source: MCP security best practices (2025-11-25), "Confused Deputy Problem", the MUSTs
for MCP proxy servers using static client IDs.

Rules:
1. The page names the client (its ``client_name`` when registered, always its
   ``client_id``), the exact ``redirect_uri`` the code will go to, the upstream provider
   and its scopes; every value is HTML-escaped (:func:`html.escape`), none is put in a
   URL or script.
2. The page is served with ``Content-Security-Policy: frame-ancestors 'none'`` (and
   ``default-src 'none'``), ``X-Frame-Options: DENY``, ``Cache-Control: no-store`` and
   ``Referrer-Policy: no-referrer``: it cannot be framed (clickjacking) or cached.
3. CSRF: the page's form carries a token that must equal the ``__Host-`` CSRF cookie,
   and the authorization request it approves travels in a signed ticket (HS256 JWS by
   joserfc, key derived from the proxy's secret) bound to that token and expiring with
   the pending-authorization lifetime; a form that does not match all three is refused.
4. Every cookie is ``__Host-`` prefixed, ``Secure``, ``HttpOnly``, ``SameSite=Lax``,
   ``Path=/`` and has no ``Domain``. The consent cookie is a signed ticket naming the
   ``client_id``, exact ``redirect_uri`` and scopes approved; it proves consent for that
   pair and at most those scopes, until it expires.
5. Signed tickets carry a ``typ`` of their purpose; a ticket of one purpose is not
   accepted for another.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONSENT_COOKIE",
    "CSRF_COOKIE",
    "LOGIN_COOKIE",
    "Tickets",
    "consent_page",
    "cookie_header",
]

CONSENT_COOKIE = "__Host-mcpkit-consent"
CSRF_COOKIE = "__Host-mcpkit-csrf"
LOGIN_COOKIE = "__Host-mcpkit-login"

_HEADERS = {
    "Content-Security-Policy": (
        "frame-ancestors 'none'; default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


class Tickets:
    """Rule 3, 5: signed, expiring, purpose-bound tickets (HS256 JWS, joserfc)."""

    def __init__(self, key: bytes) -> None:
        from joserfc.jwk import OctKey

        self._key = OctKey.import_key(key)

    def sign(self, purpose: str, claims: Mapping[str, Any], ttl_s: float) -> str:
        from joserfc import jwt

        body = {**claims, "typ": purpose, "exp": int(time.time() + ttl_s)}
        return jwt.encode({"alg": "HS256"}, body, self._key, algorithms=["HS256"])

    def open(self, purpose: str, ticket: str | None) -> dict[str, Any] | None:
        """The claims of a valid, unexpired ticket of ``purpose``, else ``None``."""
        from joserfc import jwt
        from joserfc.errors import JoseError

        if not ticket or len(ticket) > 16_384:
            return None
        try:
            token = jwt.decode(ticket, self._key, algorithms=["HS256"])
            jwt.JWTClaimsRegistry(
                exp={"essential": True}, typ={"essential": True, "value": purpose}
            ).validate(token.claims)
        except (JoseError, ValueError):
            return None
        return dict(token.claims)


def cookie_header(name: str, value: str, max_age_s: int) -> str:
    """Rule 4: one ``Set-Cookie`` value (``max_age_s`` 0 deletes it)."""
    return f"{name}={value}; Max-Age={max_age_s}; Path=/; Secure; HttpOnly; SameSite=Lax"


def consent_page(
    *,
    action: str,
    client_id: str,
    client_name: str | None,
    redirect_uri: str,
    provider: str,
    upstream_scopes: Sequence[str],
    scopes: Sequence[str],
    csrf: str,
    ticket: str,
) -> tuple[str, dict[str, str]]:
    """Rules 1-2: the page's HTML and its headers."""
    e = html.escape
    name = f"<strong>{e(client_name)}</strong> " if client_name else ""
    up = ", ".join(upstream_scopes) or "(none)"
    mcp = ", ".join(scopes) or "(none)"
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Allow access?</title>
<style>body{{font-family:sans-serif;max-width:40em;margin:2em auto}}
code{{word-break:break-all}}</style>
</head><body>
<h1>Allow access?</h1>
<p>The application {name}(client id <code>{e(client_id)}</code>) asks to use this server
on your behalf. You will sign in with <strong>{e(provider)}</strong>.</p>
<dl>
<dt>It will receive the authorization at</dt><dd><code>{e(redirect_uri)}</code></dd>
<dt>Scopes requested from {e(provider)}</dt><dd><code>{e(up)}</code></dd>
<dt>Scopes on this server</dt><dd><code>{e(mcp)}</code></dd>
</dl>
<p>Only approve if you started this sign-in and you trust this address.</p>
<form method="post" action="{e(action)}">
<input type="hidden" name="csrf" value="{e(csrf)}">
<input type="hidden" name="ticket" value="{e(ticket)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>
"""
    return body, dict(_HEADERS)
