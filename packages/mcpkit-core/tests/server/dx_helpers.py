"""Helpers of the ``test_dx_*`` files: one request on either protocol era through the
in-process test peer."""

from __future__ import annotations

from typing import Any, Literal

from peer import Peer

JSON = dict[str, Any]
Era = Literal["legacy", "modern"]
ERAS: list[Era] = ["legacy", "modern"]


def envelope(**params: Any) -> JSON:
    """``params`` with the 2026-07-28 per-request ``_meta`` envelope."""
    return {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }


async def ask(peer: Peer, era: Era, method: str, **params: Any) -> JSON:
    """``method`` on the handshake-era session, or as a 2026-07-28 request; the
    2026-07-28 result decorations (``resultType``, ``_meta``, cache hints) removed."""
    result = await peer.request(method, envelope(**params) if era == "modern" else params)
    for key in ("resultType", "_meta", "ttlMs", "cacheScope"):
        result.pop(key, None)
    return result
