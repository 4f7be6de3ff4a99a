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
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``), given its globals
    (``namespace``) and the ``where`` table (rules 1-3)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        qualified = module if "." in module else f"{package}.{module}"
        value = getattr(importlib.import_module(qualified), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
