"""What the proxy's parts read of the proxy they serve, as a Protocol (issue 27).

:class:`~mcpkit.proxy.core.Proxy` owns the lists, the parked calls and the upstream, and
they read back a few of its fields; typing them with this Protocol instead of ``Proxy``
keeps the imports running one way (``core`` imports its parts, never the reverse).

Rules:
1. :class:`ProxyHost` names only what the parts read: the proxy's server, its bounds,
   its upstream, its per-caller processes and the capabilities it mirrors
   (:class:`~mcpkit.proxy.task_calls.Mirrors`). ``Proxy`` satisfies it structurally.
2. Nothing here runs: the module holds types only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from mcpkit.proxy.task_calls import Mirrors

if TYPE_CHECKING:
    from mcpkit.proxy.options import ProxyLimits
    from mcpkit.proxy.pins import Pins
    from mcpkit.proxy.upstream import Upstream
    from mcpkit.server.app import Server

__all__ = ["ProxyHost"]


class ProxyHost(Mirrors, Protocol):
    """Rule 1: the fields of :class:`~mcpkit.proxy.core.Proxy` its parts read."""

    @property
    def server(self) -> Server:
        """The proxy's own server (its hub, its limits, its resource notifications)."""
        ...

    @property
    def limits(self) -> ProxyLimits:
        """The proxy's bounds."""
        ...

    @property
    def upstream(self) -> Upstream:
        """The upstream connections."""
        ...

    @property
    def pins(self) -> Pins | None:
        """The per-caller upstream processes (:mod:`.pins`), when they apply."""
        ...
