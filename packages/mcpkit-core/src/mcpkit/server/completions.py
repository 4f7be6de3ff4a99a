"""Argument completion: ``completion/complete`` (spec ``server/utilities/completion``).

Rules:
1. Handlers are registered per reference: a prompt name (``ref/prompt``) or a resource
   template URI (``ref/resource``). A reference without a handler gets an empty result.
2. The handler receives the argument name, the partial value and
   ``context.arguments`` (already-resolved arguments, T3) as a ``dict[str, str]``.
3. At most 100 values are returned; when more exist the result carries ``total`` and
   ``hasMore: true``.
4. The ``completions`` capability is advertised only when a handler is registered.
5. A handler needing more than ``(argument, value, context)`` is a ``TypeError`` at
   registration; a reference naming no registered prompt, resource or template is a
   warning at start-up (:mod:`mcpkit.server.agreement` rule 5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_list, as_object, as_str
from mcpkit.server.agreement import check_completer
from mcpkit.server.typed import Binding, CallContext, bind, call_bound

__all__ = ["MAX_COMPLETION_VALUES", "Completer", "completion_result"]

MAX_COMPLETION_VALUES = 100


class Completer:
    """A completion handler ``fn(argument, value, context) -> list[str] | dict``."""

    __slots__ = ("binding",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.binding: Binding = bind(fn, name="completion", structured_output=False)
        check_completer(self.binding)  # rule 5

    async def complete(
        self, ctx: CallContext, argument: str, value: str, context: Mapping[str, str]
    ) -> JSON:
        names = self.binding.field_names
        kwargs: JSON = dict(zip(names, (argument, value, dict(context)), strict=False))
        result = await call_bound(self.binding, kwargs, ctx)
        return completion_result(result)


def completion_result(value: Any) -> JSON:
    """Normalise a handler's return into ``{"completion": {...}}`` (rule 3)."""
    obj = as_object(value)
    if obj is not None and "completion" in obj:
        return obj
    total: Any = None
    has_more = False
    if obj is not None:
        values: list[Any] = as_list(obj.get("values")) or []
        total = obj.get("total")
        has_more = bool(obj.get("hasMore", False))
    else:
        values = as_list(value) or list(value or [])
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
    ref = as_object(params.get("ref"))
    if ref is None:
        raise JSONRPCError(INVALID_PARAMS, "completion/complete: params.ref must be an object")
    kind = as_str(ref.get("type"))
    name = as_str(ref.get("name"))
    uri = as_str(ref.get("uri"))
    if kind == "ref/prompt" and name is not None:
        return kind, name
    if kind == "ref/resource" and uri is not None:
        return kind, uri
    raise JSONRPCError(
        INVALID_PARAMS,
        "completion/complete: ref must be {type: 'ref/prompt', name} or "
        "{type: 'ref/resource', uri}",
    )
