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
3. A tool that raises :class:`ToolError` produces ``isError: true`` with its message;
   any other exception (but :class:`~mcpkit.core.jsonrpc.JSONRPCError` and MRTR's
   ``InputRequired``) produces ``isError: true`` without its text (rule 8).
   ``JSONRPCError`` becomes a protocol error, except an uncaught
   ``InputResponseError`` (a bad client answer to ``ctx.elicit`` & co.) on the
   handshake era, which is a tool error: the tool's own request was valid
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
7. A tool without a return annotation (or annotated ``Any``/``object``) is answered by
   what it returns: ``str`` is one text block, ``None`` no content; a value that is a
   content block (:func:`content_block`: a content helper, a content model, or a
   mapping with a known ``type`` and that type's required fields) is that block; a
   ``CallToolResult`` is sent as is; a list of content blocks and strings holding at
   least one block is that list of blocks; any other mapping (a pydantic model or a
   dataclass too) is JSON text plus ``structuredContent``; everything else (other
   lists, numbers, booleans) is JSON text only, as ``structuredContent`` must be an
   object. (Before, a dict with a ``type`` key was sent as a block whatever it held,
   which clients rejected.)
8. An unexpected exception (anything but :class:`ToolError`, argument validation,
   and the client-side ``RequestTimeoutError``/``PeerClosedError`` of a reverse call)
   is logged at ERROR with its traceback and an error id, and answered with a generic
   ``isError`` message carrying that id; ``Server(expose_errors=True)`` adds the
   exception's type and text (:func:`mcpkit.server.logs.report_failure`). The same
   holds for a return value that fails while it is turned into the result (bytes that
   are not UTF-8 under JSON, say): it used to escape as a -32603 protocol error.
9. An explicit ``input_schema`` must match the signature (its properties are
   parameters, required parameters are required), else ``TypeError`` at registration
   (:mod:`mcpkit.server.agreement` rule 4).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError, dumps
from mcpkit.core.shapes import JSON, as_object
from mcpkit.server.agreement import check_tool_schema
from mcpkit.server.answers import InputResponseError
from mcpkit.server.logs import report_failure
from mcpkit.server.mrtr import InputRequired
from mcpkit.server.output import output_problems
from mcpkit.server.typed import (
    ArgumentError,
    Binding,
    CallContext,
    bind,
    call_bound,
    is_pydantic_model,
)

if TYPE_CHECKING:
    import jsonschema.protocols

    from mcpkit.core.types.content import ContentBlockWire
    from mcpkit.core.types.tool_call import CallToolResultWire


__all__ = [
    "Tool",
    "ToolError",
    "ToolOptions",
    "content_block",
    "to_content_list",
    "tool_result",
]

logger = logging.getLogger("mcpkit.server")


class ToolError(Exception):
    """Raise inside a tool to answer ``isError: true`` with this message (rule 3)."""


class ToolOptions(TypedDict, total=False):
    """The options of :meth:`Server.tool <mcpkit.server.app.Server.tool>` and
    ``add_tool``; each becomes the matching ``Tool`` definition field."""

    title: str | None
    """``title``: a display name."""
    description: str | None
    """``description`` (default: the function's docstring)."""
    annotations: Mapping[str, Any] | None
    """``annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
    ``openWorldHint``, ``title``)."""
    icons: Sequence[Mapping[str, Any]] | None
    """``icons``: ``{"src", "mimeType"?, "sizes"?, "theme"?}`` objects."""
    meta: Mapping[str, Any] | None
    """``_meta``."""
    input_schema: JSON | None
    """Replaces the schema derived from the signature; arguments are then checked
    against it with ``jsonschema`` and passed through unconverted (rule 2)."""
    output_schema: JSON | None
    """Replaces the derived ``outputSchema``; every result is checked against it."""
    structured_output: bool | None
    """Force (True) or suppress (False) structured output; None decides from the
    return annotation (:mod:`mcpkit.server.typed` rule 3)."""
    execution: Mapping[str, Any] | None
    """``execution`` (e.g. ``{"taskSupport": "optional"}``, tasks extension)."""
    extra: Mapping[str, Any] | None
    """Further definition fields, merged last."""
    inline: bool
    """Run a sync (``def``) function on the event loop instead of a worker thread:
    only for functions that return at once and never block (no I/O, no sleeping, no
    long computation); it saves the thread hop (:mod:`mcpkit.server.typed` rule 4).
    Ignored for ``async def``."""


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
        inline: bool = False,
    ) -> None:
        self.name = name
        self.binding: Binding = bind(
            fn,
            name=name,
            structured_output=structured_output,
            input_schema=input_schema,
            inline=inline,
        )
        self.input_validator: jsonschema.protocols.Validator | None = None
        if input_schema is not None:
            from mcpkit.core.jsonschema import compile_schema

            self.input_validator = compile_schema(input_schema)
            check_tool_schema(name, input_schema, self.binding)  # rule 9
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

    async def call(
        self, ctx: CallContext, arguments: Mapping[str, Any] | None
    ) -> CallToolResultWire:
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
        except _passed_through() as exc:
            return error_result(str(exc))
        except Exception as exc:
            what = f"Tool {self.name!r}"
            return error_result(report_failure(what, exc, ctx.server.expose_errors))
        try:
            return self.result(value)
        except Exception as exc:  # rule 8: a value that cannot be sent (bytes that are not UTF-8)
            what = f"Tool {self.name!r} result"
            return error_result(report_failure(what, exc, ctx.server.expose_errors))

    def result(self, value: Any) -> CallToolResultWire:
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
        elif self.binding.output.loose:
            return self._loose(value)
        else:
            return tool_result(value)
        if problems:
            return self._nonconforming(problems)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }

    def _loose(self, value: Any) -> CallToolResultWire:
        """Rule 7: the result of a tool without a return annotation."""
        if isinstance(value, str):
            return {"content": [{"type": "text", "text": value}], "isError": False}
        if value is None:
            return {"content": [], "isError": False}
        block = content_block(value)
        if block is not None:
            return {"content": [block], "isError": False}
        if isinstance(value, (list, tuple)):
            blocks = _block_list(cast("Sequence[Any]", value))
            if blocks is not None:
                return {"content": blocks, "isError": False}
        elif _is_object(value):
            structured, text = _as_json(value)
            if isinstance(structured, dict):
                problems = output_problems(None, structured, text)
                if problems:
                    return self._nonconforming(problems, False)
                return {
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": structured,
                    "isError": False,
                }
        return {"content": [{"type": "text", "text": _as_json(value)[1]}], "isError": False}

    def _nonconforming(self, problems: list[str], schema: bool = True) -> CallToolResultWire:
        what = "does not match its outputSchema" if schema else "JSON cannot carry"
        logger.warning("tool %r returned a result that %s: %s", self.name, what, problems)
        return error_result(
            f"Tool {self.name!r} returned a result that {what}: " + "; ".join(problems)
        )


def _doc(fn: Callable[..., Any]) -> str | None:
    import inspect

    doc = inspect.getdoc(fn)
    return doc.strip() if doc else None


def error_result(message: str) -> CallToolResultWire:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _is_result(value: Any) -> bool:
    if isinstance(value, dict):
        return "content" in value and ("isError" in value or "structuredContent" in value)
    return type(value).__name__ == "CallToolResult"


def _block(value: Any) -> ContentBlockWire:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    block = content_block(value)
    if block is not None:
        return block
    if is_pydantic_model(value):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, dict):
        given = cast(JSON, value)
        if isinstance(given.get("type"), str):  # the user's block, sent as given
            return cast("ContentBlockWire", given)
    return {"type": "text", "text": dumps(value).decode("utf-8")}


_BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
}
_BLOCK_MODELS = frozenset(
    {"TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource"}
)


def content_block(value: Any) -> ContentBlockWire | None:
    """``value`` as a content block when it is one (rule 7), else None: a content helper
    (:mod:`mcpkit.server.content`), a content model of :mod:`mcpkit.core.types`, or a
    mapping with a known ``type`` and that type's required string fields (``text``;
    ``data`` and ``mimeType``; ``uri`` and ``name``; or a ``resource`` object with ``uri``
    and ``text`` or ``blob``)."""
    helpers = sys.modules.get("mcpkit.server.content")
    if helpers is not None and isinstance(value, helpers.ContentHelper):
        return value.to_block()
    if is_pydantic_model(value):
        if type(value).__name__ in _BLOCK_MODELS:
            return value.model_dump(by_alias=True, exclude_none=True, mode="json")
        return None
    if not isinstance(value, dict):
        return None
    block = cast(JSON, value)
    kind = block.get("type")
    fields = _BLOCK_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is not None:
        typed = all(isinstance(block.get(f), str) for f in fields)
        return cast("ContentBlockWire", block) if typed else None
    if kind == "resource":
        body = as_object(block.get("resource"))
        if (
            body is not None
            and isinstance(body.get("uri"), str)
            and (isinstance(body.get("text"), str) or isinstance(body.get("blob"), str))
        ):
            return cast("ContentBlockWire", block)
    return None


def _block_list(items: Sequence[Any]) -> list[ContentBlockWire] | None:
    """Rule 7: content blocks for a list of content blocks and strings that holds at
    least one block; None for any other list (sent as JSON text)."""
    blocks: list[ContentBlockWire] = []
    seen = False
    for item in items:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
            continue
        block = content_block(item)
        if block is None:
            return None
        seen = True
        blocks.append(block)
    return blocks if seen else None


def _is_object(value: Any) -> bool:
    """A mapping, a pydantic model or a dataclass instance: a JSON object (rule 7)."""
    return (
        isinstance(value, Mapping)
        or is_pydantic_model(value)
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    )


def _as_json(value: Any) -> tuple[Any, str]:
    """``(JSON value, its text)`` for any return value; plain JSON is encoded directly,
    anything else through pydantic's ``to_jsonable_python``."""
    if type(value) in (dict, list, tuple, int, float, bool):
        try:
            return value, dumps(value).decode("utf-8")
        except (TypeError, ValueError):  # non-str keys, objects inside: pydantic's way
            pass
    from pydantic_core import to_jsonable_python

    data = to_jsonable_python(value, by_alias=True, fallback=str)
    return data, dumps(data).decode("utf-8")


def to_content_list(value: Any) -> list[ContentBlockWire]:
    """Content blocks for an unstructured value: str, a block, or a list of them."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_block(v) for v in cast("list[Any] | tuple[Any, ...]", value)]
    return [_block(value)]


def tool_result(value: Any) -> CallToolResultWire:
    """A ``CallToolResult`` dict for an unstructured return value (rule 5)."""
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if is_pydantic_model(value) and type(value).__name__ == "CallToolResult":
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, dict) and _is_result(value):
        return cast("CallToolResultWire", value)
    return {"content": to_content_list(value), "isError": False}


def quoted_name(name: Any, max_chars: int = 64) -> str:
    """``repr(name)`` cut to about ``max_chars`` characters: an unknown name is the
    peer's choice, and an error message quoting it whole would carry it into logs,
    spans and event stores (issue 25 §3)."""
    if isinstance(name, str) and len(name) > max_chars:
        return f"{name[:max_chars]!r}... ({len(name)} characters)"
    text = repr(name)
    return text if len(text) <= max_chars + 2 else text[:max_chars] + "..."


def unknown_tool(name: Any, known: Sequence[str]) -> JSONRPCError:
    shown = ", ".join(sorted(known)[:20]) or "(none)"
    return JSONRPCError(
        INVALID_PARAMS, f"tools/call: unknown tool {quoted_name(name)}; known tools: {shown}"
    )


@functools.cache
def _passed_through() -> tuple[type[Exception], ...]:
    """The failures whose message a tool result passes on (rule 8): evaluated only when a
    tool raises, so importing this module does not import the engine (and asyncio)."""
    from mcpkit.core.engine import PeerClosedError, RequestTimeoutError

    return (ToolError, RequestTimeoutError, PeerClosedError)
