"""Task ownership under composition (issue 25 §4; :mod:`mcpkit.server.protections`).

A task belongs to its creator: the caller's principal, else (2025-11-25) its session
(:func:`~mcpkit.ext.tasks.shared.principal_owner`, ``legacy_owner``). The extension
records that as a :class:`~mcpkit.server.protections.Protection` so that composition
keeps it or refuses.

Rules:
1. Mounted, ownership travels: the mounted server's middleware and ``tasks/*``
   handlers run with the parent request's principal and session (mount rule 4). Note
   that the mounted server's ``tasks/*`` methods are not mounted (mount rule 7): install
   the extension on the parent to serve tasks there.
2. Proxied in memory, the proxied server sees the proxy's upstream connection, never
   the downstream caller's principal (token passthrough is forbidden). When the proxy
   identifies its callers (it has protections of its own, such as ``protect()``), their
   tasks would all share one owner upstream, so the composition is refused; a proxy
   whose callers are anonymous anyway changes nothing, and ownership travels.
"""

from __future__ import annotations

from mcpkit.server.protections import Composition, Installer, Protection

__all__ = ["TASK_OWNERSHIP"]


def _nothing() -> None:
    """Ownership needs nothing installed where it travels (rules 1, 2)."""


def _carry(site: Composition) -> Installer | None:
    if site.kind == "proxy" and site.outer.protections:
        return None
    return _nothing


TASK_OWNERSHIP = Protection(
    "mcpkit-ext-tasks task ownership (a task belongs to its creator's principal)",
    "a proxy that authenticates its callers cannot pass their principals to the proxied "
    "server, so their tasks would share one owner: mount the tasks server into the "
    "protected server instead (a mount keeps the caller's principal), or protect and "
    "serve the tasks server itself",
    _carry,
)
