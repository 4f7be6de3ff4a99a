"""Bounds of the development authorization server (:class:`DevServerLimits`).

Rules:
1. Every store the server keeps (authorization codes, refresh tokens, registered clients,
   fetched client metadata documents) is bounded in count and every entry expires; at the
   count bound the oldest entry is evicted first.
2. Every input the server reads is bounded in size (request bodies, CIMD documents, DPoP
   proofs) and every outbound fetch in time.
3. Every field is checked when made (:func:`mcpkit.core.limits.check_limits`): counts
   and sizes positive integers, lifetimes positive and finite (an access token that is
   born expired is refused, not issued).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.core.limits import check_limits

__all__ = ["DevServerLimits"]


@dataclass(frozen=True, slots=True)
class DevServerLimits:
    """Counts, sizes and lifetimes of the development authorization server.

    - ``max_clients`` (1000): registered clients (DCR, CIMD documents, pre-registered);
      the oldest dynamic one is evicted first. ``client_ttl_s`` (86400): a dynamically
      registered client, and a fetched CIMD document (``cimd_ttl_s``, 300), expire after.
    - ``max_codes`` (1000) authorization codes, each valid ``code_ttl_s`` (60) and once.
    - ``max_refresh_tokens`` (10000), each valid ``refresh_token_ttl_s`` (86400) and once
      (rotation: using one issues its successor and revokes it).
    - ``access_token_ttl_s`` (3600): ``exp - iat`` of issued access tokens.
    - ``max_request_body_bytes`` (65536): token, registration and form bodies; larger is 413.
    - ``max_cimd_document_bytes`` (16384) and ``cimd_fetch_timeout_s`` (5.0): a client id
      metadata document larger or slower than this is refused (``invalid_client``).
    - ``max_revoked_tokens`` (10000): revoked access tokens' ``jti`` values remembered
      (each until the token's ``exp``); the oldest is forgotten first.
    - ``max_dpop_proof_bytes`` (8192) and ``dpop_iat_window_s`` (300): a DPoP proof larger,
      or whose ``iat`` is further from now than this, is refused (``invalid_dpop_proof``).
    - ``dpop_nonce_ttl_s`` (300): with server nonces on, each nonce is accepted this long
      after the next one replaces it, at most.
    """

    max_clients: int = 1000
    client_ttl_s: float = 86400.0
    cimd_ttl_s: float = 300.0
    max_codes: int = 1000
    code_ttl_s: float = 60.0
    max_refresh_tokens: int = 10000
    refresh_token_ttl_s: float = 86400.0
    access_token_ttl_s: int = 3600
    max_request_body_bytes: int = 65536
    max_cimd_document_bytes: int = 16384
    cimd_fetch_timeout_s: float = 5.0
    max_revoked_tokens: int = 10000
    max_dpop_proof_bytes: int = 8192
    dpop_iat_window_s: int = 300
    dpop_nonce_ttl_s: float = 300.0

    def __post_init__(self) -> None:
        check_limits(self)
