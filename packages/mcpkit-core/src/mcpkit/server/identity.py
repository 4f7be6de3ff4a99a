"""Caller identity: the stable key that binds server state to the caller that made it.

Sessions, tasks, MRTR ``requestState``, resource subscriptions, resumable event
streams, a proxy's pooled upstream connections and every other caller-keyed store are
bound to the caller that created them; this module is the one place that turns a
principal object into its key (:func:`principal_key`) and a request into its caller's
key (:func:`caller_key`).

Rules (issue 11 §1; design sketch "secure by default"):
1. No principal (``None``) is anonymous: the key is ``None``.
2. The key comes from documented fields only, first match wins:
   - a principal that is itself a non-empty string (an auth layer's subject) is its key;
   - a principal with a ``stable_key`` attribute that is a non-empty string (any
     principal type; an authenticated Starlette user) is keyed by it: an auth layer whose
     subjects are only unique per issuer puts both there (the OAuth principal of
     ``mcpkit-ext-auth`` uses issuer plus subject), so a refreshed token, a new object
     with the same issuer and subject, keeps the caller's state;
   - a Starlette user (``starlette.authentication.BaseUser``): unauthenticated
     (``is_authenticated`` false) is anonymous; else ``identity`` (its
     ``NotImplementedError`` is caught), then ``username``;
   - any other principal (the project's own types, auth layers): ``subject``, then ``id``.
   A usable value is a non-empty string, an ``int`` (not ``bool``) or a ``uuid.UUID``;
   the key is its text.
3. ``display_name`` (not unique), ``str()``, ``repr()`` and ``id()`` are never used: a
   default object repr carries a memory address, so a fresh user object per request
   would be a fresh owner, and a reused address would hand one user's state to another.
4. A principal with no stable identity fails closed: :func:`principal_key` raises
   :class:`UnidentifiedPrincipal` (a -32603 :class:`~mcpkit.core.jsonrpc.JSONRPCError`)
   and logs the principal's type (never its value). The HTTP endpoint answers such a
   request with HTTP 500 and a JSON-RPC -32603 body before reading it.
5. A principal whose field raises anything but ``NotImplementedError`` (a lazy user
   object whose backing store is down) fails closed the same way (rule 4), with the
   exception's type in the log line: the next field is not tried, since a key that
   depends on which field answered this time would not be stable.

Who is the caller (:func:`caller_key`; issue 25 §1; spec 2025-11-25
``basic/transports`` §Session Management, ``basic/security_best_practices``
§Session Hijacking), first match wins:
6. An authenticated principal: ``"p:" + principal_key(principal)``.
7. Else the handshake-era session the request belongs to, as the transport named it:
   an HTTP session is ``"s:"`` plus the SHA-256 of its ``Mcp-Session-Id`` (128 bits in
   hex; the id itself is a credential and never becomes a key, a log line or a store
   entry); a stdio or in-memory connection's session is the connection's token (rule 8).
8. Else, on stdio and in-memory only, the connection's token: ``"c:"`` plus 128
   random bits (:func:`new_connection_key`), minted when the connection is created and
   never reused. A 2026-07-28 request on such a connection has no session but has this.
9. Else the caller has no identity: ``None``. Over HTTP a connection is never an
   identity (behind HAProxy or nginx one backend connection carries many users), so an
   unauthenticated HTTP caller without a session (stateless endpoint, 2026-07-28) is
   ``None``, and a store must give it nothing that another caller could reach: no
   entry, or one of its own that no later request can find.
10. Never ``id()`` of an object (CPython reuses a freed object's address, so a new
    caller inherits a departed one's key), a field the peer declares (``clientInfo``:
    every user of one app sends the same one), or a network address (one balancer,
    one host: every peer has the same one). ``tools/check_kinds.py`` (``id-key``)
    rejects ``id(...)`` in keys.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import sys
import uuid
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = [
    "CONNECTION_KEY",
    "UnidentifiedPrincipal",
    "caller_key",
    "new_connection_key",
    "principal_key",
    "session_caller_key",
]

CONNECTION_KEY = "connection_key"
"""``ctx.transport`` fact of a stdio or in-memory connection: its token (rule 8). The
HTTP transport never sets it."""

logger = logging.getLogger("mcpkit.server")

_OWN_FIELDS = ("subject", "id")
_STARLETTE_FIELDS = ("identity", "username")


class UnidentifiedPrincipal(JSONRPCError):
    """A principal without a stable identity (rule 4): JSON-RPC -32603.

    ``principal_type`` is the qualified name of the principal's class, for logs.
    """

    def __init__(self, principal_type: str) -> None:
        super().__init__(
            INTERNAL_ERROR,
            "Internal error: the authenticated caller has no stable identity "
            "(the server's principal needs a subject, id, identity or username)",
        )
        self.principal_type = principal_type


def _usable(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return None


class _Broken(Exception):
    """A principal's field raised (rule 5); ``reason`` names the field and the error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _attribute(principal: Any, name: str, default: Any) -> Any:
    try:
        return getattr(principal, name, default)
    except NotImplementedError:  # BaseUser.identity and friends
        return default
    except Exception as exc:  # rule 5
        raise _Broken(f"its {name} raised {type(exc).__name__}") from None


def _field(principal: Any, name: str) -> str | None:
    return _usable(_attribute(principal, name, None))


def _key(principal: Any) -> tuple[str | None, tuple[str, ...]]:
    """``(key, fields tried)`` by rule 2; raises :class:`_Broken` (rule 5)."""
    if _is_starlette_user(principal):
        if not _attribute(principal, "is_authenticated", True):
            return None, ()
        fields = _STARLETTE_FIELDS
    else:
        fields = _OWN_FIELDS
    stable = _attribute(principal, "stable_key", None)
    if isinstance(stable, str) and stable:
        return stable, fields
    for name in fields:
        key = _field(principal, name)
        if key is not None:
            return key, fields
    return None, fields


def _is_starlette_user(principal: Any) -> bool:
    # Only a module that was imported can have made this object: no import cost here.
    if "starlette.authentication" not in sys.modules:
        return False
    from starlette.authentication import BaseUser

    return isinstance(principal, BaseUser)


def principal_key(principal: Any) -> str | None:
    """The stable key of ``principal`` (rules 1-3); ``None`` when anonymous.

    Raises :class:`UnidentifiedPrincipal` (-32603) when the principal has none (rule 4)
    or one of its fields raises (rule 5).
    """
    if principal is None:
        return None
    if isinstance(principal, str) and principal:
        return principal
    try:
        key, fields = _key(principal)
    except _Broken as exc:
        why = exc.reason
    else:
        if key is not None or not fields:
            return key
        why = " / ".join(fields)
    kind: type[Any] = type(cast(object, principal))
    type_name = f"{kind.__module__}.{kind.__qualname__}"
    logger.error(
        "refusing a request: its principal of type %s has no stable identity (%s); "
        "give it one, or make principal_from_scope return an object that has one",
        type_name,
        why,
    )
    raise UnidentifiedPrincipal(type_name)


def new_connection_key() -> str:
    """Rule 8: a fresh connection token, ``"c:"`` plus 22 URL-safe characters (128
    random bits from :mod:`secrets`); unique per connection, never derived from it."""
    return "c:" + secrets.token_urlsafe(16)


def session_caller_key(session_id: str) -> str:
    """Rule 7: the caller key of an HTTP session with this ``Mcp-Session-Id``:
    ``"s:"`` plus the first 32 hex digits of its SHA-256. Every replica holding the
    session derives the same key; the key does not reveal the id."""
    return "s:" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]


def caller_key(ctx: Context) -> str | None:
    """Who sent ``ctx``'s request (rules 6-10): ``"p:..."`` (principal), ``"s:..."``
    (HTTP session), ``"c:..."`` (stdio / in-memory connection), or ``None`` when the
    caller has no identity (unauthenticated HTTP without a session). Callers with
    ``None`` share nothing keyed by caller.

    Raises :class:`UnidentifiedPrincipal` (-32603) when the request's principal has no
    stable identity (rule 4): failing closed, never falling back to the session.
    """
    if ctx.principal is not None:
        pkey = principal_key(ctx.principal)
        if pkey is not None:
            return "p:" + pkey
    session = ctx.session
    if session is not None and session.caller is not None:
        return session.caller
    token: Any = ctx.transport.get(CONNECTION_KEY)
    if isinstance(token, str) and token.startswith("c:"):
        return token
    return None
