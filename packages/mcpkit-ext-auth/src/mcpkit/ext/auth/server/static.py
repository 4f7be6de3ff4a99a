"""A static-token validator for development and tests.

Rules:
1. Tokens map to principals given up front; lookup is by a SHA-256 digest of the
   presented token (the table holds digests, never the tokens).
2. An unknown token is ``invalid_token``; the principal's ``expires_at``, when set, is
   honoured.
3. Not for production: there is no issuer, no expiry by default and no revocation.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from mcpkit.ext.auth.server.cache import token_digest
from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.principal import Principal

__all__ = ["StaticTokenValidator"]


class StaticTokenValidator:
    """Rules 1-3. ``tokens``: ``{token: Principal}``, or ``{token: scopes}`` (the subject
    is then ``"dev"``)."""

    def __init__(self, tokens: Mapping[str, Principal | Iterable[str]]) -> None:
        # kind-ok: unbounded-table tokens the operator configures
        self._table: dict[bytes, Principal] = {}
        for token, value in tokens.items():
            principal = (
                value if isinstance(value, Principal) else Principal("dev", scopes=frozenset(value))
            )
            self._table[token_digest(token)] = principal

    async def validate(self, token: str) -> Principal:
        principal = self._table.get(token_digest(token))
        if principal is None:
            raise InvalidToken("unknown token")
        if principal.expires_at is not None and principal.expires_at <= time.time():
            raise InvalidToken("token expired")
        return principal

    async def aclose(self) -> None:
        return None
