"""What a request's :class:`~mcpkit.server.context.Context` reads of its server.

The context sits below the :class:`~mcpkit.server.Server` (the server's handler,
middleware and filter types name the context), so the context names its server by this
:class:`ServerView` protocol instead of the class; every ``Server`` satisfies it.

Rules:
1. What handlers, the built-in methods and the front ends read through ``ctx.server``
   is here, read-only; code that needs the rest of the server narrows with
   :func:`mcpkit.server.base.server_of` (an ``isinstance`` check).
2. This module imports nothing that names the context or the server, so it never
   closes an import circle (``tools/layers.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.server.visibility import Registries, Visibility

if TYPE_CHECKING:
    from mcpkit.core.limits import Limits
    from mcpkit.core.shapes import JSON
    from mcpkit.core.versions import Era
    from mcpkit.server.completions import Completer
    from mcpkit.server.hints import CacheHint
    from mcpkit.server.hub import NotificationHub
    from mcpkit.server.mrtr import RequestStateSealer

__all__ = ["ServerView"]


class ServerView(Registries, Protocol):
    """The server as a request's context reads it (rule 1): its registries
    (:class:`~mcpkit.server.visibility.Registries`) and what follows."""

    @property
    def limits(self) -> Limits: ...
    @property
    def lifespan_state(self) -> Any: ...
    @property
    def expose_errors(self) -> bool: ...
    @property
    def completers(self) -> Mapping[tuple[str, str], Completer]: ...
    @property
    def visibility(self) -> Visibility: ...
    @property
    def hub(self) -> NotificationHub: ...
    @property
    def sealer(self) -> RequestStateSealer: ...
    @property
    def cache_hints(self) -> Mapping[str, CacheHint]: ...
    @property
    def page_size(self) -> int: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def supported_versions(self) -> tuple[str, ...]: ...
    def tool_definitions(self) -> list[JSON]: ...
    def capabilities(self, era: Era, protocol_version: str | None = None) -> JSON: ...
    def add_extensions_meta(self, result: JSON, era: Era, protocol_version: str) -> None: ...
