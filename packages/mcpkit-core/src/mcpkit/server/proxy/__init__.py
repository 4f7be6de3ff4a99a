"""Deprecated: the proxy moved to :mod:`mcpkit.proxy` (issue 27); this path is kept for
one release.

The proxy joins a client and a server, so it is its own package above both; the server
floor cannot import it. Import ``proxy``, ``ProxyLimits``, ``Proxy`` and
``UpstreamEraError`` from :mod:`mcpkit.proxy` instead.

Rules:
1. Every public name of :mod:`mcpkit.proxy` resolves here too, and reading it warns
   ``DeprecationWarning`` naming the new path (at the line that reads it).
2. This module is callable like :mod:`mcpkit.proxy`: ``mcpkit.server.proxy(target)``
   warns and returns ``mcpkit.proxy.proxy(target)``, however the module was imported
   (``from mcpkit.server import proxy`` binds this module once a submodule is imported).
3. ``mcpkit.server.proxy.options`` re-exports ``mcpkit.proxy.options`` the same way.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcpkit.proxy as _new

if TYPE_CHECKING:
    from mcpkit.proxy import Proxy, ProxyLimits, UpstreamEraError, proxy

__all__ = ["Proxy", "ProxyLimits", "UpstreamEraError", "proxy"]


def moved(old: str, new: types.ModuleType, names: frozenset[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the deprecated module named ``old``: each of ``names``
    is read from the module ``new`` with a ``DeprecationWarning`` (rule 1)."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old}.{name} moved to {new.__name__}.{name}; import it from {new.__name__} "
            "(the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(new, name)

    return __getattr__


__getattr__ = moved(__name__, _new, frozenset(__all__))
__moved_to__ = _new
"""Where this module's names live now (read by :func:`mcpkit.core.lazy.lazy_exports`)."""


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _CallableModule(types.ModuleType):
    def __call__(self, target: Any, **options: Any) -> Any:  # rule 2
        warnings.warn(
            "mcpkit.server.proxy(target) moved to mcpkit.proxy(target); import it from "
            "mcpkit.proxy (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _new.proxy(target, **options)


sys.modules[__name__].__class__ = _CallableModule
