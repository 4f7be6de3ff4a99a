"""Read access by wire key, for typed results that used to be plain dicts.

``ctx.sample()`` returned a ``CreateMessageResult`` dict and ``ctx.list_roots()`` a list
of ``Root`` dicts; they now return the models. Code written against the dicts keeps
working: ``result["content"]["text"]``, ``root.get("uri")`` and ``"model" in result``
read the model's wire form (:func:`~mcpkit.core.types._base.to_wire`).

Sources: spec 2025-11-25 / 2026-07-28 ``client/sampling`` (``CreateMessageResult``),
``client/roots`` (``Root``); issue 13 §2 (typed results, dicts still accepted).

Rules:
1. Keys are wire names (camelCase, ``_meta``); values are wire values (plain dicts and
   lists), exactly what the dict used to hold. Absent optional fields are absent.
2. Read-only: there is no item assignment.
"""

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["WireDictView"]


class WireDictView:
    """Mixin for a wire model: ``model[key]``, ``model.get(key, default)``,
    ``key in model`` over its wire form (rules 1, 2)."""

    def _wire_dict(self) -> dict[str, Any]:
        from mcpkit.core.types._base import to_wire

        return to_wire(cast("BaseModel", self))  # mixed into wire models only

    def __getitem__(self, key: str) -> Any:
        return self._wire_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._wire_dict().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._wire_dict()
