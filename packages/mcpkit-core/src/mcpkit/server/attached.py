"""Per-server state that core modules and extensions keep, owned by the server itself.

A module-level ``weakref.WeakKeyDictionary[Server, V]`` looks like per-server state
that dies with its server, but when ``V`` refers back to the server (a rule provider
``partial(view_rules, server)``, an extension object holding its server), the table's
strong reference to the value keeps the key alive forever: every server ever made,
with all it holds (task records, stores, connections), stays in memory. State kept here
hangs off the server instead, so the server and its state are collected together.

Rules:
1. :func:`attached` returns the state kept under ``key`` for ``server``, made by
   ``factory()`` the first time; it lives exactly as long as the server.
2. Keys are the owning module's name (``"mcpkit.server.names"``); nothing else reads
   another module's state.
3. A table keyed weakly by a server whose values may refer back to it is a defect of
   this kind; use :func:`attached` (``tests/server/test_server_lifetime.py`` holds every
   per-server registry of core to it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["attached", "peek"]

T = TypeVar("T")
_SLOT = "_mcpkit_attached"


def attached(server: Any, key: str, factory: Callable[[], T]) -> T:
    """Rule 1: ``server``'s state under ``key`` (made by ``factory()`` when absent)."""
    table: dict[str, Any] | None = getattr(server, _SLOT, None)
    if table is None:
        table = {}
        setattr(server, _SLOT, table)
    if key not in table:
        table[key] = factory()
    return cast("T", table[key])


def peek(server: Any, key: str) -> Any:
    """The state under ``key`` if any was made, else ``None`` (never creates it)."""
    table: dict[str, Any] | None = getattr(server, _SLOT, None)
    return None if table is None else table.get(key)
