"""Typed negotiation checks for the tasks extension, so callers never pass raw ids.

Every mcpkit extension ships the same pair (``docs/extensions.md`` §Negotiation helpers):

Rules:
1. :func:`client_supports` (server side): whether the request's client declared
   ``io.modelcontextprotocol/tasks`` in its capabilities (on 2026-07-28 in this request's
   ``_meta``; on the handshake era at ``initialize``). Wraps
   ``ctx.client_supports_extension(EXTENSION_ID)``.
2. :func:`server_supports` (client side): whether the connected server advertised the
   extension (``initialize`` or ``server/discover``). The server advertises it on
   2026-07-28 only, so a client on the handshake era sees False and uses the 2025-11-25
   ``capabilities.tasks`` surface instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.ext.tasks.model import EXTENSION_ID

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.server.context import Context

__all__ = ["client_supports", "server_supports"]


def client_supports(ctx: Context) -> bool:
    """Rule 1: did this request's client declare the tasks extension (SEP-2663)?"""
    return ctx.client_supports_extension(EXTENSION_ID)


def server_supports(client: Client) -> bool:
    """Rule 2: did the server ``client`` is connected to advertise the tasks extension?"""
    return client.server_supports_extension(EXTENSION_ID)
