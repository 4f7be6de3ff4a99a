"""Deprecated: moved to :mod:`mcpkit.proxy.options` (issue 27); kept for one release.

Rules:
1. ``ProxyLimits``, ``ClientFactory`` and ``client_factory`` resolve here too, and reading
   one warns ``DeprecationWarning`` naming the new path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mcpkit.proxy.options as _new
from mcpkit.server.proxy import moved

if TYPE_CHECKING:
    from mcpkit.proxy.options import ClientFactory, ProxyLimits, client_factory

__all__ = ["ClientFactory", "ProxyLimits", "client_factory"]

__getattr__ = moved(__name__, _new, frozenset(__all__))
