"""Typed binding: Python signatures to JSON Schema and back (spec ``server/tools``).

Rules:
1. The input schema is derived from the function's parameters with pydantic (JSON
   Schema 2020-12, the MCP default dialect, SEP-2106). A parameter annotated with
   :class:`~mcpkit.server.context.Context` (or ``Context[AppState]``) is injected,
   never part of the schema.
   Unannotated parameters accept any JSON value.
2. Arguments are validated once, in lax mode (``"5"`` is accepted for an integer, as
   JSON clients often send strings). Unknown arguments are ignored. A failure is
   reported as :class:`ArgumentError` whose message names each bad field, so the model
   can correct itself (SEP-1303).
3. A return annotation that is structured (a pydantic model, TypedDict, dataclass or
   mapping) yields an ``outputSchema`` and ``structuredContent``; other non-content
   types (int, float, bool, list, ...) are structured as ``{"result": value}``.
   ``str``, content blocks (models, their wire ``TypedDict``s such as ``TextContentWire``
   and ``CallToolResultWire``, and the :mod:`mcpkit.server.content` helpers) and
   ``None`` are unstructured. Without a return annotation
   (or with ``Any``/``object``) the value returned decides
   (:mod:`mcpkit.server.tools` rule 7). Structured results also carry
   one text block with the same JSON, for clients that predate structured content. A
   value that is not of the declared type is reported (``exact`` False) so the caller
   can check it against the schema.
4. Sync functions run in a worker thread so they never block the event loop
   (:mod:`mcpkit.server.threads`), unless registered with ``inline=True``: then they
   run on the event loop itself, for functions that return at once and never block
   (no I/O, no sleeping, no long computation), which saves the thread hop.
5. Plain signatures (:mod:`mcpkit.server.plainargs`: ``str``/``int``/``float``/``bool``,
   lists and optionals of those, plain defaults) are bound without pydantic: the same
   schema, and arguments that already have their exact types are accepted directly.
   Anything else, and any argument that is not exactly typed, goes through the pydantic
   model, built on first need, so coercions and error messages are pydantic's.
   pydantic is imported only when a binding needs it (start-up time, issue 8).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast, get_args, get_origin

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import Era
from mcpkit.server.plainargs import PlainArgs, plain_args

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = ["ArgumentError", "Binding", "OutputSpec", "bind", "call_bound", "is_pydantic_model"]

_EMPTY = inspect.Parameter.empty


class ArgumentError(ValueError):
    """Arguments did not match the input schema; ``str()`` is model-readable."""


def is_pydantic_model(value: Any) -> bool:
    """Whether ``value`` is a pydantic model instance, without importing pydantic: if it
    has not been imported, nothing can be one (rule 5)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


CONTEXT_MARKER = "__mcpkit_context__"
"""Set to True in the class body of the injected handler context
(:class:`mcpkit.server.context.Context`): a parameter annotated with that very class
(not a subclass) receives the request's context (rule 1)."""


class ErrorPolicy(Protocol):
    """What the registries read of the server serving a call."""

    @property
    def expose_errors(self) -> bool: ...


class CallContext(Protocol):
    """What the registries (tools, prompts, resources, completions) read of a request's
    context; :class:`~mcpkit.server.context.Context` satisfies it."""

    @property
    def era(self) -> Era: ...
    @property
    def server(self) -> ErrorPolicy: ...


def _is_injected(annotation: Any) -> bool:
    return isinstance(annotation, type) and vars(annotation).get(CONTEXT_MARKER) is True


def _is_context(annotation: Any) -> bool:
    if _is_injected(annotation):
        return True
    origin = get_origin(annotation)
    if _is_injected(origin):  # Context[AppState]
        return True
    if origin is typing.Annotated:
        return _is_context(get_args(annotation)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_is_context(a) for a in get_args(annotation) if a is not type(None))
    return False


def _strip_titles(schema: Any, top: bool = True) -> Any:
    """Drop pydantic's auto-generated titles: noise on the wire and in model prompts."""
    if isinstance(schema, dict):
        out: JSON = {}
        for k, v in cast(JSON, schema).items():
            if k == "title" and isinstance(v, str):
                continue
            if k in ("properties", "$defs") and isinstance(v, dict):
                out[k] = {name: _strip_titles(sub, False) for name, sub in cast(JSON, v).items()}
            else:
                out[k] = _strip_titles(v, False)
        return out
    if isinstance(schema, list):
        return [_strip_titles(v, False) for v in cast(list[Any], schema)]
    return schema


@dataclasses.dataclass(slots=True)
class OutputSpec:
    """How a function's return value becomes a ``CallToolResult``."""

    schema: JSON | None
    """``outputSchema`` (a JSON object schema) or None for unstructured results."""
    adapter: TypeAdapter[Any] | None = None
    wrap: bool = False
    """Structured as ``{"result": value}`` because the type is not an object."""
    loose: bool = False
    """No return annotation (or ``Any``/``object``): the tool's result is shaped by the
    value returned (:mod:`mcpkit.server.tools` rule 7)."""


_UNSTRUCTURED_NAMES = frozenset(
    {
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
        "CallToolResult",
        "TextContentWire",
        "ImageContentWire",
        "AudioContentWire",
        "ResourceLinkWire",
        "EmbeddedResourceWire",
        "CallToolResultWire",
    }
)


def _is_content_name(ann: Any) -> bool:
    """A content type: by name for the models, by module for the helpers (Image...)."""
    return getattr(ann, "__name__", "") in _UNSTRUCTURED_NAMES or (
        isinstance(ann, type) and ann.__module__ == "mcpkit.server.content"
    )


def _is_unstructured(ann: Any) -> bool:
    if ann in (_EMPTY, None, type(None), str, Any, object):
        return True
    origin = get_origin(ann)
    if origin is typing.Annotated:
        return _is_unstructured(get_args(ann)[0])
    if origin in (list, tuple, typing.Union) or (
        origin is not None and getattr(origin, "__name__", "") == "UnionType"
    ):
        args = [a for a in get_args(ann) if a is not type(None) and a is not Ellipsis]
        return bool(args) and all(_is_content_name(a) or a is str for a in args)
    return _is_content_name(ann)


def _is_object_type(ann: Any) -> bool:
    from pydantic import BaseModel

    if isinstance(ann, type):
        cls = cast(type[Any], ann)
        if issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls):
            return True
        if typing.is_typeddict(cls):
            return True
        if issubclass(cls, Mapping):
            return True
    origin = get_origin(ann)
    return origin is not None and isinstance(origin, type) and issubclass(origin, Mapping)


def output_spec(ann: Any, structured: bool | None) -> OutputSpec:
    if structured is None and (ann is _EMPTY or ann is Any or ann is object):
        return OutputSpec(None, loose=True)
    if structured is False or (structured is None and _is_unstructured(ann)):
        return OutputSpec(None)
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(ann)
    inner = _strip_titles(adapter.json_schema(mode="serialization"))
    if _is_object_type(ann) and inner.get("type", "object") == "object":
        if "type" not in inner and "$ref" not in inner:
            inner["type"] = "object"
        return OutputSpec(inner, adapter)
    defs = inner.pop("$defs", None)
    schema: JSON = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if defs:
        schema["$defs"] = defs
    return OutputSpec(schema, adapter, wrap=True)


class Binding:
    """A function bound to MCP: its schemas and how to call it.

    ``fields`` maps each schema parameter to ``(annotation, default)`` (``...`` when
    required); ``plain`` is the pydantic-free fast path when the signature allows one
    (rule 5); ``model`` the pydantic model, built on first use; ``validated`` is False
    when an explicit input schema replaced the derived one (arguments then pass through).
    """

    __slots__ = (
        "_model",
        "context_param",
        "field_names",
        "fields",
        "fn",
        "inline",
        "input_schema",
        "is_async",
        "name",
        "output",
        "plain",
        "validated",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        fields: dict[str, tuple[Any, Any]],
        input_schema: JSON | None,
        context_param: str | None,
        is_async: bool,
        output: OutputSpec,
        inline: bool = False,
    ) -> None:
        self.fn = fn
        self.inline = inline
        self.name = name
        self.fields = fields
        self.field_names = tuple(fields)
        self.context_param = context_param
        self.is_async = is_async
        self.output = output
        self.validated = input_schema is None
        self.plain: PlainArgs | None = plain_args(fields) if self.validated else None
        self._model: type[BaseModel] | None = None
        if input_schema is not None:
            schema = dict(input_schema)
        elif self.plain is not None:
            schema = self.plain.schema
        else:
            model = self.model
            assert model is not None  # validated and no explicit schema: the model exists
            schema = _strip_titles(model.model_json_schema())
            schema.setdefault("properties", {})
        self.input_schema: JSON = schema

    @property
    def model(self) -> type[BaseModel] | None:
        """The pydantic model validating the arguments (None with an explicit schema)."""
        model: type[BaseModel] | None = self._model
        if model is None and self.validated:
            from pydantic import ConfigDict, create_model

            model = create_model(
                f"{self.name}_arguments",
                __config__=ConfigDict(extra="ignore", arbitrary_types_allowed=True),
                **cast(dict[str, Any], self.fields),
            )
            self._model = model
        return model

    def validate(self, arguments: Mapping[str, Any] | None) -> JSON:
        """Validated keyword arguments (rules 2, 5); raises :class:`ArgumentError`."""
        if not self.validated:
            return dict(arguments or {})
        args = arguments or {}
        if self.plain is not None:
            kwargs = self.plain.validate(args)
            if kwargs is not None:
                return kwargs
        from pydantic import ValidationError

        model = self.model
        assert model is not None
        try:
            instance = model.model_validate(args)
        except ValidationError as exc:
            raise ArgumentError(_describe(exc)) from None
        return dict(instance.__dict__)

    def structured(self, value: Any) -> tuple[Any, str, bool]:
        """``(structuredContent, text, exact)`` for a structured return value (rule 3).

        ``exact`` is False when ``value`` is not of the declared return type: the dump is
        then pydantic's best effort, which the caller must check against the schema
        (:mod:`mcpkit.server.output` rule 3). Raises ``PydanticSerializationError`` for
        a value pydantic cannot serialise at all.
        """
        from pydantic_core import PydanticSerializationError

        adapter = self.output.adapter
        assert adapter is not None
        exact = True
        try:
            data = adapter.dump_python(value, mode="json", by_alias=True, warnings="error")
        except PydanticSerializationError:
            exact = False
            data = adapter.dump_python(value, mode="json", by_alias=True, warnings=False)
        if self.output.wrap:
            data = {"result": data}
        return data, dumps(data).decode("utf-8"), exact


def _describe(exc: ValidationError) -> str:
    parts: list[str] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = repr(got) if not isinstance(got, dict) else "an object"
        if err["type"] == "missing":
            parts.append(f"{loc}: required argument is missing")
        else:
            parts.append(f"{loc}: {err['msg']} (got {shown})")
    return "Invalid arguments: " + "; ".join(parts)


def bind(
    fn: Callable[..., Any],
    *,
    name: str,
    structured_output: bool | None = None,
    input_schema: JSON | None = None,
    inline: bool = False,
) -> Binding:
    """Bind ``fn`` (rules 1-4). ``input_schema`` overrides the derived schema; then
    arguments are passed through unvalidated by pydantic (the caller validates).
    ``inline``: a sync ``fn`` runs on the event loop (rule 4)."""
    sig = inspect.signature(fn)
    # a callable instance's annotations live on its class's __call__
    annotated: Any = fn if inspect.isroutine(fn) else type(fn).__call__
    try:
        hints = typing.get_type_hints(annotated, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        hints = {}
    context_param: str | None = None
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        ann = hints.get(pname, param.annotation)
        if _is_context(ann):
            context_param = pname
            continue
        ann = Any if ann is _EMPTY else ann
        default = ... if param.default is _EMPTY else param.default
        fields[pname] = (ann, default)
    ret = hints.get("return", sig.return_annotation)
    return Binding(
        fn,
        name=name,
        fields=fields,
        input_schema=input_schema,
        context_param=context_param,
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__),
        output=output_spec(ret, structured_output),
        inline=inline,
    )


async def call_bound(binding: Binding, kwargs: JSON, ctx: Any) -> Any:
    """Call the bound function with validated ``kwargs`` (rule 4)."""
    if binding.context_param is not None:
        kwargs[binding.context_param] = ctx
    if binding.is_async:
        result: Awaitable[Any] = binding.fn(**kwargs)  # no typing.cast call per request
        return await result
    if binding.inline:
        return binding.fn(**kwargs)
    from mcpkit.server.threads import run_sync  # asyncio: not at import (start-up time)

    return await run_sync(partial(binding.fn, **kwargs))
