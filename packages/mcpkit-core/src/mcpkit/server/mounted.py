"""The table of what is mounted into a server, and what it implies for names
(:mod:`mcpkit.server.mount` rule 3).

Rules:
1. A parent's mounts are kept on it (:mod:`mcpkit.server.attached`), in mount order;
   ``mount()`` appends to :func:`mount_table`, everything else reads :func:`entries`.
2. :func:`shadowed` names each tool or prompt hidden by another of the same name (the
   first wins: the parent's own, then the mounts in order); :func:`static_names` is
   what a server lists without a caller, its mounts' names prefixed.
3. This module imports nothing above the server's state, so the name rules
   (:mod:`mcpkit.server.names`) read it without importing ``mount``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mcpkit.server.attached import attached, peek

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase

__all__ = ["Mounted", "entries", "mount_table", "mounted", "reaches", "shadowed", "static_names"]


@dataclass(frozen=True, slots=True)
class Mounted:
    """One server mounted into a parent: its namespace, the prefix of its tool and
    prompt names, and how to stop relaying its changes."""

    server: ServerBase
    namespace: str | None
    prefix: str
    detach: Callable[[], None]


def shadowed(server: ServerBase) -> list[str]:
    """Rule 3 for what ``mount`` could not know: a tool or prompt registered after
    mounting (on the parent, or on a child) whose name hides another one; one message
    per hidden entry (warned at start-up by :func:`mcpkit.server.names.check_names`)."""
    out: list[str] = []
    if not entries(server):
        return out
    for kind in ("tools", "prompts"):
        owner = dict.fromkeys(
            server.tools if kind == "tools" else server.prompts, "the server's own"
        )
        for m in entries(server):
            where = f"mount {m.namespace!r} ({m.server.info['name']!r})"
            for name in sorted(m.prefix + n for n in static_names(m.server, kind)):
                if name in owner:
                    out.append(
                        f"{where}: {kind[:-1]} {name!r} is hidden by {owner[name]} "
                        f"{kind[:-1]} of that name (mount rule 3: the first wins); rename one "
                        "of them or mount under another namespace"
                    )
                else:
                    owner[name] = f"{where}'s"
    return out


def mounted(server: ServerBase) -> list[tuple[ServerBase, str]]:
    """The servers mounted directly into ``server``, each with its name prefix
    (``"weather_"``; ``""`` without a namespace), in mount order."""
    return [(m.server, m.prefix) for m in entries(server)]


def entries(server: ServerBase) -> list[Mounted]:
    """The mounts of ``server``, in mount order (``[]`` when nothing is mounted)."""
    found: list[Mounted] | None = peek(server, __name__)
    return found if found is not None else []


def mount_table(server: ServerBase) -> list[Mounted]:
    """The list :func:`entries` reads, created when absent (``mount()`` appends)."""
    return attached(server, __name__, list[Mounted])


def reaches(server: ServerBase, target: ServerBase) -> bool:
    """Whether ``target`` is ``server`` or mounted into it, at any depth."""
    return server is target or any(reaches(m.server, target) for m in entries(server))


def static_names(server: ServerBase, kind: Literal["tools", "prompts"]) -> set[str]:
    """Names registered on ``server`` and, prefixed, on its mounts (rule 3)."""
    names = set(server.tools if kind == "tools" else server.prompts)
    for m in entries(server):
        names.update(m.prefix + n for n in static_names(m.server, kind))
    return names
