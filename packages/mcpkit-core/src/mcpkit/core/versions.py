"""Protocol versions and eras (spec 2026-07-28 ``basic/versioning``).

Rules:
1. The handshake era ("legacy") is every version negotiated by ``initialize``:
   2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25. The stateless era ("modern") is
   2026-07-28: every request carries its version in ``_meta``.
2. Version strings compare as dates; lists here are newest first.
3. A server answering ``initialize`` for a version it does not speak offers its newest
   legacy version instead (2025-11-25 ``basic/lifecycle``).
4. HTTP requests of a legacy session without ``MCP-Protocol-Version`` are taken to be
   2025-03-26 (2025-11-25 ``basic/transports``).
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "DEFAULT_HTTP_LEGACY_VERSION",
    "LATEST_LEGACY_VERSION",
    "LEGACY_VERSIONS",
    "MODERN_VERSION",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Era",
    "era_of",
    "is_supported",
]

Era = Literal["legacy", "modern"]

MODERN_VERSION: Final = "2026-07-28"
MODERN_VERSIONS: Final = (MODERN_VERSION,)
LATEST_LEGACY_VERSION: Final = "2025-11-25"
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS: Final = MODERN_VERSIONS + LEGACY_VERSIONS
DEFAULT_HTTP_LEGACY_VERSION: Final = "2025-03-26"
BATCH_VERSIONS: Final = ("2025-03-26",)
"""Versions whose sessions accept JSON-RPC batches (only 2025-03-26 allowed them)."""


def era_of(version: str) -> Era:
    """The era a version belongs to; unknown versions later than 2025-11-25 are modern."""
    return "legacy" if version in LEGACY_VERSIONS or version < MODERN_VERSION else "modern"


def is_supported(version: str) -> bool:
    return version in SUPPORTED_VERSIONS
