"""Argument completion: ``completion/complete`` (spec ``server/utilities/completion``).

Rules:
1. Handlers are registered per reference: a prompt name (``ref/prompt``) or a resource
   template URI (``ref/resource``). A reference without a handler gets an empty result.
2. The handler receives the argument name, the partial value and
   ``context.arguments`` (already-resolved arguments, T3) as a ``dict[str, str]``.
3. At most 100 values are returned; when more exist the result carries ``total`` and
   ``hasMore: true``.
4. The ``completions`` capability is advertised only when a handler is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.server.typed import Binding, bind, call_bound

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = ["MAX_COMPLETION_VALUES", "Completer", "completion_result"]

JSON = dict[str, Any]
MAX_COMPLETION_VALUES = 100


class Completer:
    """A completion handler ``fn(argument, value, context) -> list[str] | dict``."""

    __slots__ = ("binding",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.binding: Binding = bind(fn, name="completion", structured_output=False)

    async def complete(
        self, ctx: Context, argument: str, value: str, context: Mapping[str, str]
    ) -> JSON:
        names = self.binding.field_names
        kwargs: JSON = dict(zip(names, (argument, value, dict(context)), strict=False))
        result = await call_bound(self.binding, kwargs, ctx)
        return completion_result(result)


def completion_result(value: Any) -> JSON:
    """Normalise a handler's return into ``{"completion": {...}}`` (rule 3)."""
    if isinstance(value, dict) and "completion" in value:
        return value  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        values = list(value.get("values", []))  # pyright: ignore[reportUnknownArgumentType]
        total = value.get("total")  # pyright: ignore[reportUnknownMemberType]
        has_more = bool(value.get("hasMore", False))  # pyright: ignore[reportUnknownMemberType]
    else:
        values = list(value or [])
        total, has_more = None, False
    completion: JSON = {"values": [str(v) for v in values[:MAX_COMPLETION_VALUES]]}
    if len(values) > MAX_COMPLETION_VALUES:
        completion["total"] = total if total is not None else len(values)
        completion["hasMore"] = True
    else:
        if total is not None:
            completion["total"] = total
        completion["hasMore"] = has_more
    return {"completion": completion}


def parse_ref(params: JSON) -> tuple[str, str]:
    """``(ref type, prompt name or template URI)``; -32602 when malformed."""
    ref = params.get("ref")
    if not isinstance(ref, dict):
        raise JSONRPCError(INVALID_PARAMS, "completion/complete: params.ref must be an object")
    kind = ref.get("type")  # pyright: ignore[reportUnknownMemberType]
    if kind == "ref/prompt" and isinstance(ref.get("name"), str):  # pyright: ignore
        return kind, ref["name"]  # pyright: ignore[reportUnknownVariableType]
    if kind == "ref/resource" and isinstance(ref.get("uri"), str):  # pyright: ignore
        return kind, ref["uri"]  # pyright: ignore[reportUnknownVariableType]
    raise JSONRPCError(
        INVALID_PARAMS,
        "completion/complete: ref must be {type: 'ref/prompt', name} or "
        "{type: 'ref/resource', uri}",
    )
