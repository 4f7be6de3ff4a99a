"""Why a credential was refused: :class:`InvalidToken`, never carrying the token.

Sources: RFC 6750 §3.1 (``invalid_request``, ``invalid_token``,
``insufficient_scope``), RFC 9449 §7.1 and §8 (``invalid_dpop_proof``,
``use_dpop_nonce``).

Rules:
1. The description is fixed text chosen by the code that refuses (``"token expired"``,
   ``"wrong audience"``); it never includes the token, a proof, a claim value taken
   from them, or a library's exception text (which could quote input).
2. ``error`` is one of the RFC error codes above; ``dpop`` marks a failure the DPoP
   challenge should carry.
"""

from __future__ import annotations

__all__ = ["InvalidToken"]


class InvalidToken(Exception):
    """A refused credential (rules 1-2): ``error`` (RFC code), ``description`` (safe
    text), ``dpop`` (the DPoP challenge carries it)."""

    def __init__(
        self, description: str, *, error: str = "invalid_token", dpop: bool = False
    ) -> None:
        super().__init__(description)
        self.description = description
        self.error = error
        self.dpop = dpop
