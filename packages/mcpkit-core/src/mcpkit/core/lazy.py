"""Lazy re-exports for package ``__init__`` modules: names resolve on first use.

``import mcpkit.server`` must stay cheap (a stdio server must not pay for HTTP code, a
client must not pay for pydantic models it never touches), so packages list their public
names with the module that defines each, and import that module only when the name is
first read.

Rules:
1. ``where`` maps a public name to the module defining it; a relative module name
   (``"errors"``) is taken inside the package.
2. A resolved name is cached in the package's globals, so the lookup runs once.
3. An unknown name raises ``AttributeError`` naming the package, as Python would.
4. A name in ``deprecated`` (name -> message) warns ``DeprecationWarning`` with that
   message at the caller's line (``from package import name`` included) on every read,
   and is never cached, so each place that still uses it is told. When the module it
   names is a deprecation shim, the name is read from the shim's ``__moved_to__`` module,
   so the user sees one warning, not two.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    where: Mapping[str, str],
    deprecated: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``), given its globals
    (``namespace``), the ``where`` table and the ``deprecated`` names (rules 1-4)."""
    old = deprecated or {}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        qualified = module if "." in module else f"{package}.{module}"
        if name in old:  # rule 4
            warnings.warn(old[name], DeprecationWarning, stacklevel=2)
            source = importlib.import_module(qualified)
            return getattr(getattr(source, "__moved_to__", source), name)
        value = getattr(importlib.import_module(qualified), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
