"""The shapes of what a :class:`~mcpkit.server.Server` runs: method handlers, receive-
and send-side middleware, listen filters, served-method specs and cache hints.

Rules:
1. These are types and plain values only; they sit below the server so that the server's
   parts (:mod:`mcpkit.server.base`, :mod:`mcpkit.server.app`) and the modules they use
   name them without an import circle. :mod:`mcpkit.server.app` re-exports them.
2. :class:`CacheHint` and :data:`DEFAULT_CACHE_HINTS` live in :mod:`mcpkit.server.hints`
   (re-exported here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpkit.core.shapes import JSON
from mcpkit.core.versions import Era
from mcpkit.server.hints import DEFAULT_CACHE_HINTS, CacheHint
from mcpkit.server.visibility import ListKind

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.hub import Change

__all__ = [
    "DEFAULT_CACHE_HINTS",
    "CacheHint",
    "ListFilter",
    "ListenFilter",
    "MethodHandler",
    "MethodSpec",
    "Middleware",
    "SendMiddleware",
]

MethodHandler = Callable[["Context"], Awaitable[JSON]]
Middleware = Callable[["Context", MethodHandler], Awaitable[JSON]]
"""Receive side: ``async def mw(ctx, call_next) -> result``."""
SendMiddleware = Callable[[JSON, Callable[[JSON], Awaitable[None]]], Awaitable[None]]
"""Send side: ``async def mw(message, send_next) -> None``; sees every outgoing message."""
ListFilter = Callable[["Context", ListKind, Mapping[str, Any]], bool]
"""``(ctx, kind, definition) -> visible`` (:meth:`~mcpkit.server.Server.add_list_filter`)."""
ListenFilter = Callable[["Context", Any], "tuple[Any, Callable[[Change], bool]] | None"]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """A served method. ``name_param`` names the params field that HTTP mirrors in the
    ``Mcp-Name`` header on 2026-07-28 (``name``, ``uri``, ``taskId``...; SEP-2243)."""

    handler: MethodHandler
    eras: frozenset[Era]
    input_capable: bool = False
    name_param: str | None = None
