"""Tool registry and the ``tools/list`` / ``tools/call`` handlers (spec ``server/tools``).

Rules:
1. An unknown tool name is a protocol error: -32602 naming the known tools (T1).
2. Arguments that fail the input schema are a tool execution error: a result with
   ``isError: true`` and a message the model can act on (SEP-1303), not a protocol error.
   A derived schema is enforced by the signature's binding (:mod:`mcpkit.server.typed`);
   an explicit ``input_schema`` by :mod:`mcpkit.core.jsonschema` (its ``$schema``
   dialect, 2020-12 by default), compiled at registration so a bad schema fails there.
   That module (and the ``jsonschema`` library) is imported only when a tool has an
   explicit schema, and pydantic only when a binding or a return value needs it, so a
   server of plain tools starts without either (issue 8).
3. A tool that raises :class:`ToolError` (or any exception other than
   :class:`~mcpkit.core.jsonrpc.JSONRPCError` and MRTR's ``InputRequired``) produces
   ``isError: true`` with the message. ``JSONRPCError`` becomes a protocol error, except
   an uncaught ``InputResponseError`` (a bad client answer to ``ctx.elicit`` & co.) on
   the handshake era, which is a tool error: the tool's own request was valid
   (:mod:`mcpkit.server.answers` rule 2).
4. A structured return becomes ``structuredContent`` plus one text block with the same
   JSON; an ``isError`` result is never checked against ``outputSchema`` (T2). With an
   explicit ``output_schema`` the return value (a mapping or model) is structured as is.
   Every other result of a tool with an ``outputSchema`` is checked against it before
   it is sent, and one that does not conform (non-finite numbers included) becomes a
   tool error (:mod:`mcpkit.server.output`). A ``structuredContent`` returned as is (a
   ``CallToolResult``) holding a non-finite number is a tool error even without an
   ``outputSchema``: the encoder would send ``null``.
5. A plain ``str`` return is exactly one text block.
6. Tool definitions are built once, at registration; ``tools/list`` pages over them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError, dumps
from mcpkit.server.answers import InputResponseError
from mcpkit.server.mrtr import InputRequired
from mcpkit.server.output import output_problems
from mcpkit.server.typed import ArgumentError, Binding, bind, call_bound, is_pydantic_model

if TYPE_CHECKING:
    import jsonschema.protocols

    from mcpkit.server.context import Context

__all__ = ["Tool", "ToolError", "to_content_list", "tool_result"]

JSON = dict[str, Any]
logger = logging.getLogger("mcpkit.server")


class ToolError(Exception):
    """Raise inside a tool to answer ``isError: true`` with this message (rule 3)."""


class Tool:
    """A registered tool: its wire definition and its bound function."""

    __slots__ = ("binding", "definition", "input_validator", "name", "output_validator")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        input_schema: JSON | None = None,
        output_schema: JSON | None = None,
        structured_output: bool | None = None,
        execution: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.binding: Binding = bind(
            fn, name=name, structured_output=structured_output, input_schema=input_schema
        )
        self.input_validator: jsonschema.protocols.Validator | None = None
        if input_schema is not None:
            from mcpkit.core.jsonschema import compile_schema

            self.input_validator = compile_schema(input_schema)
        self.output_validator: jsonschema.protocols.Validator | None = None
        if output_schema is not None:
            from mcpkit.core.jsonschema import compile_schema

            self.output_validator = compile_schema(output_schema)
        d: JSON = {"name": name}
        if title is not None:
            d["title"] = title
        desc = description if description is not None else _doc(fn)
        if desc:
            d["description"] = desc
        d["inputSchema"] = self.binding.input_schema
        out = output_schema if output_schema is not None else self.binding.output.schema
        if out is not None:
            d["outputSchema"] = out
        if annotations:
            d["annotations"] = dict(annotations)
        if icons:
            d["icons"] = [dict(i) for i in icons]
        if execution:
            d["execution"] = dict(execution)
        if meta:
            d["_meta"] = dict(meta)
        if extra:
            d.update(extra)
        self.definition = d

    async def call(self, ctx: Context, arguments: Mapping[str, Any] | None) -> JSON:
        """Run the tool and build its ``CallToolResult`` dict (rules 2-5)."""
        if self.input_validator is not None:
            from mcpkit.core.jsonschema import validation_errors

            errors = validation_errors(self.input_validator, dict(arguments or {}))
            if errors:
                return error_result(f"Invalid arguments: {'; '.join(errors)} (tool {self.name!r})")
        try:
            kwargs = self.binding.validate(arguments)
        except ArgumentError as exc:
            return error_result(f"{exc} (tool {self.name!r})")
        try:
            value = await call_bound(self.binding, kwargs, ctx)
        except InputResponseError as exc:
            if ctx.era == "modern":
                raise
            return error_result(f"Tool {self.name!r} failed: {exc.message}")
        except (JSONRPCError, InputRequired):
            raise
        except ToolError as exc:
            return error_result(str(exc))
        except Exception as exc:
            logger.info("tool %r raised %s", self.name, type(exc).__name__, exc_info=True)
            return error_result(f"Tool {self.name!r} failed: {type(exc).__name__}: {exc}")
        return self.result(value)

    def result(self, value: Any) -> JSON:
        """The ``CallToolResult`` for a return value, checked against the tool's
        ``outputSchema`` (rule 4)."""
        schema: JSON | None = self.definition.get("outputSchema")
        if _is_result(value):
            result = tool_result(value)
            if result.get("isError"):
                return result
            if "structuredContent" not in result:
                if schema is None:
                    return result
                return self._nonconforming(["(root): structuredContent is missing"])
            structured = result["structuredContent"]
            # A CallToolResult model was dumped in JSON mode (NaN under Any became None):
            # its own structured_content is searched too.
            source = None if isinstance(value, dict) else getattr(value, "structured_content", None)
            full = None if schema is None else self.output_validator or schema
            problems = output_problems(full, structured, None, source)
            return self._nonconforming(problems, schema is not None) if problems else result
        if self.binding.output.schema is not None:
            from pydantic_core import PydanticSerializationError

            try:
                structured, text, exact = self.binding.structured(value)
            except PydanticSerializationError as exc:
                return self._nonconforming([f"(root): cannot be serialised: {exc}"])
            full = self.output_validator or (None if exact else schema)
            source = value
            if self.binding.output.wrap and "null" in text:  # searched only then (output rule 2)
                source = {"result": value}
            problems = output_problems(full, structured, text, source)
        elif schema is not None:
            from pydantic_core import to_jsonable_python

            structured = to_jsonable_python(value, by_alias=True)
            if not isinstance(structured, dict):
                return error_result(
                    f"Tool {self.name!r} declares an outputSchema but returned "
                    f"{type(value).__name__}, not a JSON object"
                )
            text = dumps(structured).decode("utf-8")
            problems = output_problems(self.output_validator or schema, structured, text, value)
        else:
            return tool_result(value)
        if problems:
            return self._nonconforming(problems)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }

    def _nonconforming(self, problems: list[str], schema: bool = True) -> JSON:
        what = "does not match its outputSchema" if schema else "JSON cannot carry"
        logger.warning("tool %r returned a result that %s: %s", self.name, what, problems)
        return error_result(
            f"Tool {self.name!r} returned a result that {what}: " + "; ".join(problems)
        )


def _doc(fn: Callable[..., Any]) -> str | None:
    import inspect

    doc = inspect.getdoc(fn)
    return doc.strip() if doc else None


def error_result(message: str) -> JSON:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _is_result(value: Any) -> bool:
    if isinstance(value, dict):
        return "content" in value and ("isError" in value or "structuredContent" in value)
    return type(value).__name__ == "CallToolResult"


def _block(value: Any) -> JSON:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if is_pydantic_model(value):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, dict) and isinstance(value.get("type"), str):  # pyright: ignore[reportUnknownMemberType]
        return value  # pyright: ignore[reportUnknownVariableType]
    return {"type": "text", "text": dumps(value).decode("utf-8")}


def to_content_list(value: Any) -> list[JSON]:
    """Content blocks for an unstructured value: str, a block, or a list of them."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_block(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return [_block(value)]


def tool_result(value: Any) -> JSON:
    """A ``CallToolResult`` dict for an unstructured return value (rule 5)."""
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if is_pydantic_model(value) and type(value).__name__ == "CallToolResult":
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, dict) and _is_result(value):
        return value  # pyright: ignore[reportUnknownVariableType]
    return {"content": to_content_list(value), "isError": False}


def unknown_tool(name: Any, known: Sequence[str]) -> JSONRPCError:
    shown = ", ".join(sorted(known)[:20]) or "(none)"
    return JSONRPCError(INVALID_PARAMS, f"tools/call: unknown tool {name!r}; known tools: {shown}")
