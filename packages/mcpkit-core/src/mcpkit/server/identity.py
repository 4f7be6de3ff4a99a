"""Principal identity: the stable key that binds server state to an authenticated caller.

Sessions, tasks, MRTR ``requestState``, resource subscriptions and resumable event
streams are all bound to the principal that created them; this module is the one place
that turns a principal object into the key compared for that binding.

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
"""

from __future__ import annotations

import logging
import sys
import uuid
from typing import Any

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError

__all__ = ["UnidentifiedPrincipal", "principal_key"]

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
    kind: type[Any] = type(principal)  # pyright: ignore[reportUnknownVariableType]
    type_name = f"{kind.__module__}.{kind.__qualname__}"
    logger.error(
        "refusing a request: its principal of type %s has no stable identity (%s); "
        "give it one, or make principal_from_scope return an object that has one",
        type_name,
        why,
    )
    raise UnidentifiedPrincipal(type_name)
