"""Clients of the development authorization server (:class:`DevClient`, :class:`ClientStore`).

Rules:
1. A client is pre-registered (:meth:`ClientStore.add`, never evicted), dynamically
   registered (RFC 7591) or a client id metadata document (CIMD: the ``client_id`` is the
   document's URL); the last two live in a count-bounded store and expire.
2. Redirect URIs match exactly, except loopback ones (``http://127.0.0.1``, ``[::1]``,
   ``localhost``), whose port may differ (RFC 8252 section 7.3, native apps).
3. A client uses the grant types and the token endpoint authentication method it was
   registered with, and nothing else. ``none`` is a public client (PKCE only).
4. Client secrets are compared in constant time (``hmac.compare_digest``).
5. Without a registered ``scope`` a client may ask for any scope the server supports;
   with one, only scopes within it (RFC 7591 section 2), unless the server's
   :data:`ClientScopes` policy is ``"offered"`` and the client declared that scope itself
   (dynamic registration or CIMD): then the declared scope is kept and echoed but limits
   nothing, and the client may ask for any scope the server offers (development only:
   the official SDKs register with their first challenge's scope, then step up). A
   pre-registered client's ``scope`` was set by the operator and always limits it.
"""

from __future__ import annotations

import difflib
import hmac
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from authlib.oauth2.rfc6749 import ClientMixin

from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.store import ExpiringStore

__all__ = ["CLIENT_SCOPES", "ClientScopes", "ClientStore", "DevClient", "check_client_scopes"]

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})

ClientScopes = Literal["registered", "offered"]
"""Rule 5: what a client that declared a ``scope`` at registration may ask for.
``"registered"``: scopes within the declared one (what RFC 7591 section 2 allows a server
to enforce; the library default). ``"offered"``: any scope the server offers
(``scopes_supported``, or any scope without it), so a client registered with its first
challenge's scope can step up (development; ``mcpkit auth-server``'s default)."""

CLIENT_SCOPES: tuple[ClientScopes, ...] = get_args(ClientScopes)


def check_client_scopes(value: object) -> ClientScopes:
    """``value`` when it is one of :data:`CLIENT_SCOPES`, else ``ValueError`` naming the
    allowed values and the closest one."""
    for allowed in CLIENT_SCOPES:
        if value == allowed:
            return allowed
    close = difflib.get_close_matches(str(value), CLIENT_SCOPES, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    allowed_text = " or ".join(map(repr, CLIENT_SCOPES))
    raise ValueError(f"client_scopes={value!r} is not {allowed_text}{hint}")


@dataclass(eq=False)
class DevClient(ClientMixin):
    """A registered client (Authlib's ``ClientMixin``). ``metadata`` holds the registered
    RFC 7591 fields as given (echoed by the registration endpoint)."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    redirect_uris: list[str] = field(default_factory=lambda: list[str]())
    grant_types: list[str] = field(
        default_factory=lambda: ["authorization_code", "refresh_token", "client_credentials"]
    )
    response_types: list[str] = field(default_factory=lambda: ["code"])
    token_endpoint_auth_method: str = "none"
    scope: str | None = None
    jwks: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    scope_limits: bool = True
    """Rule 5: whether ``scope`` limits what the client may ask for (set by
    :meth:`ClientStore.add_dynamic` from the server's :data:`ClientScopes`)."""

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        """The only registered redirect URI, else ``""`` (then ``redirect_uri`` is required)."""
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else ""

    def get_allowed_scope(self, scope: Collection[str] | str | None) -> str:
        """Rule 5: the requested scopes, filtered to the registered ones when any."""
        requested = scope.split() if isinstance(scope, str) else list(scope or ())
        if self.scope is not None and self.scope_limits:
            allowed = set(self.scope.split())
            requested = [s for s in requested if s in allowed]
        return " ".join(requested)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Rule 2."""
        if redirect_uri in self.redirect_uris:
            return True
        loose = _without_loopback_port(redirect_uri)
        return loose is not None and any(
            _without_loopback_port(uri) == loose for uri in self.redirect_uris
        )

    def check_client_secret(self, client_secret: str) -> bool:
        """Rule 4."""
        if self.client_secret is None:
            return False
        return hmac.compare_digest(self.client_secret.encode(), client_secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        """Rule 3."""
        del endpoint  # one method for every endpoint
        return method == self.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


def _without_loopback_port(uri: str) -> str | None:
    """``uri`` with its port removed when it is an ``http`` loopback URI, else ``None``."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme != "http" or host not in _LOOPBACK_HOSTS:
        return None
    netloc = f"[{host}]" if host == "::1" else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


class ClientStore:
    """Rule 1: pre-registered clients (unbounded: the operator adds them) and dynamic ones
    (DCR and CIMD, ``limits.max_clients``, expiring after ``client_ttl_s`` or
    ``cimd_ttl_s``). ``client_scopes``: rule 5's policy for the dynamic ones."""

    def __init__(self, limits: DevServerLimits, client_scopes: ClientScopes = "registered") -> None:
        self.client_scopes = check_client_scopes(client_scopes)
        # kind-ok: unbounded-table clients the operator pre-registers
        self._static: dict[str, DevClient] = {}
        self._dynamic: ExpiringStore[DevClient] = ExpiringStore(
            max_entries=limits.max_clients, ttl_s=limits.client_ttl_s
        )

    def __len__(self) -> int:
        return len(self._static) + len(self._dynamic)

    def add(self, client: DevClient) -> DevClient:
        """Pre-register ``client`` (kept for the server's lifetime)."""
        self._static[client.client_id] = client
        return client

    def add_dynamic(self, client: DevClient, *, ttl_s: float | None = None) -> DevClient:
        """Store a registered or fetched client (bounded, expiring); rule 5: its declared
        ``scope`` limits it unless the policy is ``"offered"``."""
        client.scope_limits = self.client_scopes == "registered"
        self._dynamic.put(client.client_id, client, ttl_s=ttl_s)
        return client

    def get(self, client_id: str) -> DevClient | None:
        return self._static.get(client_id) or self._dynamic.get(client_id)
