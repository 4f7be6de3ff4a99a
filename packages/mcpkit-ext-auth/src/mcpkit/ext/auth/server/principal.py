"""The authenticated caller of a protected MCP server: :class:`Principal`.

Sources: RFC 9068 §2.2 (``sub``, ``client_id``, ``scope``), RFC 7662 §2.2 (``scope``,
``client_id``, ``username``), RFC 8693 §4.2 (``scope``); ``scp`` and ``scopes`` arrays
as identity providers send them.

Rules:
1. A principal is immutable: subject, client id, scopes (a ``frozenset``), issuer and the
   raw claims (a read-only mapping).
2. Its stable key (``stable_key``, read by :func:`mcpkit.server.identity.principal_key`)
   is issuer plus subject, the JSON text ``["<issuer>","<subject>"]``: a refreshed token
   (a new principal object with the same issuer and subject) keeps the caller's
   sessions, tasks and MRTR ``requestState``; the same subject from another issuer is
   another caller.
3. Scopes come from ``scope`` (a space-separated string, RFC 6749 §3.3), else ``scp``
   or ``scopes`` (an array of strings, or a space-separated string); anything else is
   no scopes.
4. Handlers read it with :func:`principal` (``auth.principal(ctx)``): the principal of
   a request that came through the auth layer, else None (stdio, an unprotected
   transport). ``ctx.principal`` is the same object.
5. :func:`require_principal` is :func:`principal` for a handler that cannot work without
   a caller: with none (stdio, an unprotected transport) it raises -32600 (invalid
   request) "Unauthorized: ...", the code and wording of the HTTP layer's 401 body, with
   no ``data.error`` (RFC 6750 §3.1: a request without credentials gets no error code),
   so the client sees what is missing instead of an internal error (-32603) from
   ``None.subject``. That message is for the remote client, so it gives no server-code
   advice; the server's own fix (serve over HTTP with ``protect()``, or handle None)
   goes to the server's log, one WARNING on ``mcpkit.ext.auth`` per refusal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from mcpkit.core.jsonrpc import INVALID_REQUEST, JSONRPCError
from mcpkit.core.shapes import as_list

__all__ = ["Principal", "principal", "require_principal", "scopes_of"]

logger = logging.getLogger("mcpkit.ext.auth")


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """Rule 3: the scopes a token's claims (or an introspection answer) grant."""
    for name in ("scope", "scp", "scopes"):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(value.split())
        items = as_list(value)
        if items is not None:
            return frozenset(s for s in items if isinstance(s, str) and s)
    return frozenset()


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller (rule 1).

    - ``subject``: the ``sub`` claim (or the static token's subject).
    - ``issuer``: the ``iss`` claim; ``""`` when the validator has none (static tokens).
    - ``client_id``: the OAuth client (``client_id``, else ``azp``), None if not said.
    - ``scopes``: the granted scopes (rule 3).
    - ``claims``: every claim, read-only.
    - ``expires_at``: ``exp`` in seconds since the epoch, None when the token has none.
    - ``stable_key``: rule 2.
    """

    subject: str
    issuer: str = ""
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    expires_at: float | None = None
    stable_key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.claims, MappingProxyType):
            object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))
        key = json.dumps([self.issuer, self.subject], separators=(",", ":"))
        object.__setattr__(self, "stable_key", key)

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any]) -> Principal:
        """A principal from validated token claims (JWT or introspection answer);
        ``sub`` must be a non-empty string (``ValueError`` otherwise)."""
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise ValueError("the token has no subject")
        client = claims.get("client_id", claims.get("azp"))
        issuer = claims.get("iss")
        exp = claims.get("exp")
        return cls(
            subject=subject,
            issuer=issuer if isinstance(issuer, str) else "",
            client_id=client if isinstance(client, str) else None,
            scopes=scopes_of(claims),
            claims=claims,
            expires_at=float(exp) if isinstance(exp, int | float) else None,
        )

    def has(self, *scopes: str) -> bool:
        """Whether every one of ``scopes`` was granted."""
        return all(s in self.scopes for s in scopes)

    @property
    def confirmation_jkt(self) -> str | None:
        """The RFC 9449 §6 key binding (``cnf.jkt``), None for a bearer token."""
        cnf = self.claims.get("cnf")
        if isinstance(cnf, Mapping):
            jkt = cast("Mapping[str, Any]", cnf).get("jkt")
            if isinstance(jkt, str) and jkt:
                return jkt
        return None


def principal(ctx: Any) -> Principal | None:
    """Rule 4: the :class:`Principal` of the request behind ``ctx`` (a
    :class:`~mcpkit.server.Context`), None when it did not come through the auth layer."""
    value = getattr(ctx, "principal", None)
    return value if isinstance(value, Principal) else None


_advised = False
"""Whether :func:`require_principal` has logged its advice (once per process)."""


def require_principal(ctx: Any) -> Principal:
    """Rule 5: the :class:`Principal` of the request behind ``ctx`` (a
    :class:`~mcpkit.server.Context`).

    Raises :class:`~mcpkit.core.jsonrpc.JSONRPCError` -32600 (``INVALID_REQUEST``) with
    the message ``"Unauthorized: ..."`` when the request did not come through the auth
    layer (over stdio, or on a transport :func:`~mcpkit.ext.auth.server.protect` does
    not cover): the same code the protected HTTP endpoint puts in its 401 body (MCP
    ``basic/authorization`` §Error Handling), without ``data`` (RFC 6750 §3.1).
    """
    found = principal(ctx)
    if found is None:
        global _advised
        if not _advised:  # once per process: a peer's calls must not flood the log
            _advised = True
            logger.warning(
                "require_principal(ctx): the request has no authenticated caller (stdio, or "
                "a transport protect() does not cover); refused with -32600. Serve the "
                "server over HTTP with protect(), or handle principal(ctx) being None"
            )
        raise JSONRPCError(
            INVALID_REQUEST,
            "Unauthorized: this operation needs an authenticated caller, and the request "
            "has none (this connection carries no access token)",
        )
    return found
