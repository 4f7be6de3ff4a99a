"""Roots: the directories and files the client exposes (``roots/list``).

Sources: spec 2025-11-25 / 2026-07-28 ``client/roots`` and schema ``Root``,
``ListRootsRequest``, ``ListRootsResult``, ``RootsListChangedNotification`` (handshake
era only). Deprecated in 2026-07-28 (SEP-2577) but fully functional.

Rules:
1. In the handshake era ``roots/list`` is a server->client request; in 2026-07-28 it is
   only an MRTR input request, and ``notifications/roots/list_changed`` is removed.
2. A root ``uri`` is a ``file://`` URI in the current spec; it is kept as received.
"""

from typing import Literal

from mcpkit.core.types._base import MCPModel, Meta, NotificationParams, RequestParams, Result
from mcpkit.core.types._dictview import WireDictView

__all__ = [
    "ListRootsRequest",
    "ListRootsResult",
    "Root",
    "RootsListChangedNotification",
]


class Root(WireDictView, MCPModel):
    """A root directory or file, with an optional display ``name``. Dict reads by wire
    key (``root["uri"]``) still work (``_dictview``)."""

    uri: str
    name: str | None = None
    meta: Meta = None


class ListRootsRequest(MCPModel):
    """``roots/list``."""

    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(Result):
    """The client's roots."""

    roots: list[Root]


class RootsListChangedNotification(MCPModel):
    """``notifications/roots/list_changed`` (client->server, handshake era only)."""

    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None
