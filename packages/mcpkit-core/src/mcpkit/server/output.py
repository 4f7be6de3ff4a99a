"""A tool's structured result matches the tool's own ``outputSchema`` before it is sent.

Spec: 2025-11-25 ``server/tools`` §Output Schema ("Servers MUST provide structured
results that conform to this schema"); ``basic/index`` §JSON Schema Usage.

Rules:
1. A successful result (``isError`` absent or false) of a tool that declares an
   ``outputSchema`` carries a ``structuredContent`` that conforms to it. When it does
   not, the result is replaced by a tool error (``isError: true``) whose text names the
   tool and each failure by JSON path, and the server logs it. An ``isError`` result is
   never checked (T2).
2. JSON has no NaN or Infinity. A ``structuredContent`` holding a non-finite float (an
   overflow such as ``1e308 + 1e308``, a ``float("nan")``) does not conform, whatever the
   schema says: the encoder would send ``null`` in its place. pydantic's JSON-mode dump
   already writes a non-finite float it finds under ``Any`` (a ``dict[str, Any]``
   return, a model field typed ``Any``) as ``None``, so when the encoded text holds
   ``null`` the tool's return value itself is searched too (:func:`output_problems`
   ``value``), in pydantic's python mode, which keeps floats.
3. What is checked depends on where the schema came from (a cost choice: ``tools/call``
   is the benchmarked hot path, and most tools return typed values):

   - Derived from the return annotation (:mod:`mcpkit.server.typed`): pydantic builds
     ``structuredContent`` from the value, so a value of the declared type conforms by
     construction, except for non-finite floats. The dump runs with
     ``warnings="error"``, which notices a value of another type at no extra cost; only
     then is the result validated in full with ``jsonschema``.
   - Explicit (``output_schema=``), or a tool that returns its own ``CallToolResult``:
     nothing vouches for the value, so it is always validated in full with
     ``jsonschema`` (an explicit schema is compiled once, at registration).

   Non-finite floats are searched for only when the encoded text contains ``null`` (the
   encoder writes them so): one C-speed substring test, so a typical result pays nothing
   beyond the encoding it needs anyway.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.core.shapes import as_list, as_object

if TYPE_CHECKING:
    import jsonschema.protocols
    import pydantic

__all__ = ["nonfinite_path", "output_problems"]

_NULL = "null"


def nonfinite_path(value: Any) -> str | None:
    """The JSON path of the first non-finite float in ``value`` (rule 2), or None."""
    pending: list[tuple[Any, str]] = [(value, "")]
    while pending:
        node, where = pending.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                return where or "(root)"
            continue
        obj = as_object(node)
        if obj is not None:
            pending.extend((v, f"{where}.{k}" if where else str(k)) for k, v in obj.items())
            continue
        items = as_list(node)
        if items is not None:
            pending.extend((v, f"{where}[{i}]") for i, v in enumerate(items))
    return None


@functools.cache
def _any_adapter() -> pydantic.TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(Any)


def _python_view(value: Any) -> Any:
    """``value`` as plain dicts and lists with its floats as they are (rule 2)."""
    try:
        return _any_adapter().dump_python(value, mode="python", by_alias=True, warnings=False)
    except Exception:  # a value pydantic cannot walk: the structured search stands
        return None


def output_problems(
    schema: Mapping[str, Any] | jsonschema.protocols.Validator | None,
    structured: Any,
    text: str | None = None,
    value: Any = None,
) -> list[str]:
    """What is wrong with ``structured`` as the ``structuredContent`` of a tool whose
    output schema is ``schema`` (rules 1-3); empty when it conforms.

    ``schema`` None skips the full validation (a derived schema and a value of the
    declared type, rule 3). ``text`` is the encoded ``structuredContent`` when the caller
    has it; without it the non-finite search always runs. ``value`` is what the tool
    returned, shaped like ``structuredContent`` (wrapped as ``{"result": ...}`` where it
    is), when ``structured`` is a JSON-mode dump of it: it is searched as well (rule 2).
    """
    problems: list[str] = []
    if schema is not None:
        from mcpkit.core.jsonschema import validation_errors

        problems = validation_errors(schema, structured)
    if text is None or _NULL in text:
        where = nonfinite_path(structured)
        if where is None and value is not None:
            where = nonfinite_path(_python_view(value))
        if where is not None:
            problems.append(f"{where}: not a finite number (JSON cannot carry NaN or infinity)")
    return problems
