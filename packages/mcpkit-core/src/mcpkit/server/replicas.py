"""Multi-replica mode's start-up checks on a server (:mod:`mcpkit.server.replication`
rules 2 and 3; the secret itself is read there, rule 1).

Rules:
1. :func:`apply_shared_secret`: a server whose secret was not set in code seals with the
   shared one; a random (none configured, or the configured one unusable) or placeholder
   secret is refused with a one-line :class:`~mcpkit.server.replication.SecretError`
   before anything is served.
2. :func:`check_workers`: without Redis, ``workers > 1`` refuses stateful HTTP with
   :class:`~mcpkit.server.replication.ReplicaModeError`, unless the endpoint is
   stateless or the server speaks only 2026-07-28.
3. Both errors say their fix in code and at the shell (replication rule 5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.remedies import Remedy
from mcpkit.core.versions import MODERN_VERSION
from mcpkit.server.mrtr import RequestStateSealer
from mcpkit.server.replication import SET_SECRET, ReplicaModeError, SecretError

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase

__all__ = ["apply_shared_secret", "check_workers"]


def apply_shared_secret(server: ServerBase, secret: bytes | None, *, why: str) -> None:
    """Rule 2: make ``server`` seal with ``secret`` (when its own secret was not set in
    code) and refuse a random or placeholder one. ``why`` names the multi-replica mode
    (e.g. ``"--workers 4"``) for the error."""
    sealer = server.sealer
    if secret is not None and not sealer.configured:
        server.sealer = RequestStateSealer(secret, ttl_s=sealer.ttl_s)
        return
    if not sealer.configured and sealer.problem is not None:
        raise SecretError(f"multi-replica mode ({why}): {sealer.problem}")
    if not sealer.configured:
        raise SecretError(
            f"multi-replica mode ({why}) needs one secret shared by every process, and "
            "refuses to start with a random per-process secret",
            SET_SECRET,
        )
    if sealer.weak:
        raise SecretError(
            f"multi-replica mode ({why}): the server's state_secret is a placeholder",
            SET_SECRET,
        )


def check_workers(server: ServerBase, workers: int, *, redis: bool, stateless: bool) -> None:
    """Rule 3: refuse ``workers > 1`` for stateful handshake-era HTTP without Redis."""
    if workers < 1:
        raise ReplicaModeError(f"workers must be at least 1, not {workers}")
    if workers == 1 or redis or stateless:
        return
    if tuple(server.supported_versions) == (MODERN_VERSION,):
        return
    raise ReplicaModeError(
        f"{workers} worker processes without Redis cannot serve stateful HTTP: "
        "handshake-era sessions live in one process",
        Remedy(
            python="pass redis='redis://HOST' (or set MCPKIT_REDIS_URL), or stateless=True",
            cli="add --redis URL (or set MCPKIT_REDIS_URL), or --stateless",
        ),
    )
