"""``mcpkit.proxy(target)``: a server that forwards everything to another MCP server.

It is also the era bridge: a 2026-07-28 client can use a handshake-era server through it
and the other way round, and any transport can front any other (a stdio host reaching
a remote HTTP server). See ``docs/proxy.md``.

Modules, one job each:

- :mod:`.core`: the :func:`proxy` factory and the server it builds (capabilities,
  method table, fallbacks);
- :mod:`.upstream`: upstream connections (shared one, leased pool, reconnection) and
  the decision to lease a connection per call;
- :mod:`.pins`: one upstream process per caller for a handshake-era command upstream
  (a process is a server of its own: one caller's work never splits across processes);
- :mod:`.forward`: one request upstream (params, ``_meta``, progress, errors, results);
- :mod:`.calls`: calls, per-client admission and the input mapping per era pair;
- :mod:`.parked`: 2026-07-28 clients behind a handshake-era upstream (parked calls);
- :mod:`.lists`: lists, change notifications, subscriptions;
- :mod:`.visible`: the proxy's own list filters over forwarded lists and calls;
- :mod:`.options`: :class:`ProxyLimits` and the upstream client factory;
- :mod:`.era`: an upstream that does not speak the pinned era (:class:`UpstreamEraError`);
- :mod:`.task_calls`: task-augmented calls listed only where they are offered.
- :mod:`.host`: what the parts read of the proxy, as a Protocol (imports run from
  :mod:`.core` down to its parts, never back).

What crosses which era pair (upstream -> downstream):

==================  ==========================================================
handshake -> hs     everything as is; input requests are live on both sides
handshake -> 2026   live input requests become ``input_required`` rounds (the
                    upstream call is parked in the proxy process);
                    ``logging/setLevel`` becomes the per-request level
2026 -> handshake   ``input_required`` becomes live requests, the proxy
                    retries; subscriptions ride the upstream's listen stream
2026 -> 2026        everything as is (``requestState`` wrapped and sealed)
==================  ==========================================================

Not forwarded, by design: the downstream client's credentials (token passthrough is
forbidden); the upstream's server-to-client requests other than elicitation, sampling
and roots (a handshake-era upstream's extension requests are answered -32601); client
notifications are sent on the shared connection, so ``notifications/roots/list_changed``
does not reach the leased connections of earlier calls (each call's roots are asked
afresh).

``mcpkit.proxy`` is both this package and the function: the package module is
callable (``mcpkit.proxy(target)``) so that importing a submodule cannot shadow
the function.

The proxy is its own floor, above both the client and the server it joins (issue 27);
``mcpkit.server.proxy`` re-exports these names for one release, with a
``DeprecationWarning``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from mcpkit.proxy.core import Proxy, proxy
from mcpkit.proxy.era import UpstreamEraError
from mcpkit.proxy.options import ProxyLimits

__all__ = ["Proxy", "ProxyLimits", "UpstreamEraError", "proxy"]


class _CallableModule(types.ModuleType):
    def __call__(self, target: Any, **options: Any) -> Any:
        return proxy(target, **options)


sys.modules[__name__].__class__ = _CallableModule
