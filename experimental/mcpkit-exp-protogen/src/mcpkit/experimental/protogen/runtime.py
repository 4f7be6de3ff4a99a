"""What generated modules register: tools, resources and prompts that forward each call to
a backend (a servicer in process, or a gRPC channel: :mod:`.grpc_forward`).

Rules:
1. A tool's ``inputSchema`` is the request message's schema and arguments are checked
   against it by core before the call (:mod:`.schema`); they become the request with
   ``ParseDict`` (a value the schema allows but proto JSON does not is a tool error
   naming the field). With ``structured_output`` (or a ``result_summary``, which implies
   it) the response's schema is the ``outputSchema`` and its JSON the
   ``structuredContent``; the text block is the rendered summary, else the JSON.
2. A backend failure with a gRPC status (``context.abort(...)`` in process, a status
   error over gRPC) is a tool error (``isError: true``) whose ``structuredContent`` and
   JSON text are ``{"code": "NOT_FOUND", "message": ..., "details": [...]}`` (the
   canonical status name; details are the status's ``Any`` messages as proto JSON).
3. A ``timeout`` bounds the whole call: in process by cancelling it, over gRPC as the
   call's deadline (grpcio's own cancellation is not interrupted from outside: it
   surfaces as ``DEADLINE_EXCEEDED``); past it the tool answers ``isError: true``.
4. A server-streaming method reports every streamed message but the last as
   ``notifications/progress`` (``progress`` counts messages; ``message`` is the
   message's summary or JSON, at most :data:`MAX_PROGRESS_MESSAGE` characters); the last
   message is the result. A stream with no message is a tool error.
5. Resources: a template's variables are request fields (string values converted to the
   field's type: ``true``/``false`` for bool, numbers as proto JSON reads them); the
   contents are the response's JSON text, ``mimeType`` the annotation's or
   ``application/json``. Prompts: each request field is an argument (required as the
   schema's required); the response becomes one user message: the text of its only
   string field, else its JSON. A variable or argument that does not read as its field
   is invalid params (-32602), for a resource and a prompt alike.
6. Completions: for each ``completable_fields`` entry the ``completer`` object's
   ``complete_<method in snake_case>_<field>(value, context)`` (sync or async) gives the
   values; a missing method is a ``TypeError`` at registration, and so is a servicer
   without one of the service's methods: nothing fails later, at the first call. A tool
   or prompt name or resource URI the server already has is a ``TypeError`` too (core
   would replace the earlier entry without a word).
7. A sync servicer method runs in a worker thread; an async one on the event loop.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

import anyio
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from mcpkit.experimental.protogen.names import render_summary
from mcpkit.experimental.protogen.schema import message_schema, to_json, to_message
from mcpkit.server import Context, Server

__all__ = [
    "MAX_PROGRESS_MESSAGE",
    "Backend",
    "Elicited",
    "PromptSpec",
    "Reply",
    "ResourceSpec",
    "RpcFailure",
    "SamplingSpec",
    "ServiceSpec",
    "Stream",
    "ToolSpec",
    "elicit",
    "register",
    "sample",
]

MAX_PROGRESS_MESSAGE = 4096
Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)
T = TypeVar("T")
Reply = T | Awaitable[T]
"""What a servicer method returns: the response, or an awaitable of it (async def)."""
Stream = Iterable[T] | AsyncIterator[T]
"""What a server-streaming servicer method returns: a (sync or async) iterator."""


@dataclass(frozen=True)
class ToolSpec:
    """One ``mcp_tool`` method, as the generator resolved it."""

    method: str
    name: str
    request: type[Message]
    response: type[Message]
    description: str | None = None
    structured: bool = False
    summary: str | None = None
    timeout_s: float | None = None
    streaming: bool = False


@dataclass(frozen=True)
class ResourceSpec:
    """One ``mcp_resource`` method."""

    method: str
    uri: str
    name: str
    request: type[Message]
    response: type[Message]
    description: str | None = None
    mime_type: str | None = None
    completable: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str | None
    required: bool


@dataclass(frozen=True)
class PromptSpec:
    """One ``mcp_prompt`` method; ``arguments`` are the request's fields."""

    method: str
    name: str
    request: type[Message]
    response: type[Message]
    arguments: tuple[PromptArgument, ...]
    description: str | None = None
    completable: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServiceSpec:
    """A service's MCP surface: ``name`` is the proto full name (``pkg.Service``)."""

    name: str
    tools: tuple[ToolSpec, ...] = ()
    resources: tuple[ResourceSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()


class RpcFailure(Exception):
    """A backend's gRPC status error (rule 2): ``code`` is the canonical name."""

    def __init__(self, code: str, message: str, details: Sequence[Any] = ()) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = list(details)

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class Backend(Protocol):
    """How a method is reached: in process or over gRPC (rule 7)."""

    async def unary(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> Message: ...

    def stream(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> AsyncIterator[Message]: ...


def _descriptor(cls: type[Message]) -> Descriptor:
    """A message class's descriptor (the stubs type it as a union with upb's own)."""
    return cast(Descriptor, cls.DESCRIPTOR)


def _error(text: str, structured: Mapping[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if structured is not None:
        out["structuredContent"] = dict(structured)
    return out


def _failure(exc: RpcFailure) -> dict[str, Any]:
    data = exc.as_json()
    return _error(json.dumps(data, separators=(",", ":")), data)


class _Tool:
    """The function registered for one tool (rules 1-4)."""

    def __init__(self, service: str, spec: ToolSpec, backend: Backend) -> None:
        self.service = service
        self.spec = spec
        self.backend = backend
        self.structured = spec.structured or spec.summary is not None

    def text(self, data: Mapping[str, Any]) -> str:
        if self.spec.summary is not None:
            return render_summary(self.spec.summary, data)
        return json.dumps(data, separators=(",", ":"))

    async def __call__(self, ctx: Context[Any], **arguments: Any) -> dict[str, Any]:
        spec = self.spec
        try:
            request = to_message(spec.request, arguments)
        except json_format.ParseError as exc:
            return _error(f"Invalid arguments: {exc} (tool {spec.name!r})")
        try:
            if spec.timeout_s is None or getattr(self.backend, "has_deadlines", False):
                response = await self.reach(ctx, request)
            else:
                with anyio.fail_after(spec.timeout_s):
                    response = await self.reach(ctx, request)
        except TimeoutError:
            return _error(f"Tool {spec.name!r} timed out after {spec.timeout_s:g} s")
        except RpcFailure as exc:
            return _failure(exc)
        if response is None:
            return _error(f"Tool {spec.name!r}: the stream ended without a message")
        data = to_json(response)
        out: dict[str, Any] = {"content": [{"type": "text", "text": self.text(data)}]}
        if self.structured:
            out["structuredContent"] = data
        else:
            out["isError"] = False
        return out

    async def reach(self, ctx: Context[Any], request: Message) -> Message | None:
        spec = self.spec
        if not spec.streaming:
            return await self.backend.unary(
                self.service, spec.method, request, spec.response, ctx, spec.timeout_s
            )
        last: Message | None = None
        count = 0
        async for message in self.backend.stream(
            self.service, spec.method, request, spec.response, ctx, spec.timeout_s
        ):
            if last is not None:
                count += 1
                note = self.text(to_json(last))[:MAX_PROGRESS_MESSAGE]
                await ctx.report_progress(count, message=note)
            last = message
        return last


def _from_strings(cls: type[Message], values: Mapping[str, Any]) -> Message:
    """Rule 5: template variables and prompt arguments (strings) as a request."""
    fields = cls.DESCRIPTOR.fields_by_name
    data: dict[str, Any] = {}
    for name, value in values.items():
        fd = fields.get(name)
        if fd is None or value is None:
            continue
        if isinstance(value, str) and (fd.is_repeated or fd.message_type is not None):
            value = json.loads(value)
        elif isinstance(value, str) and fd.type == fd.TYPE_BOOL:
            if value not in ("true", "false"):
                raise json_format.ParseError(f"{name}: {value!r} is not true or false")
            value = value == "true"
        data[name] = value
    return to_message(cls, data)


def _strings_request(cls: type[Message], values: Mapping[str, Any], what: str) -> Message:
    """:func:`_from_strings`, a value it cannot read being invalid params (-32602)."""
    try:
        return _from_strings(cls, values)
    except (json_format.ParseError, ValueError) as exc:
        from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError

        raise JSONRPCError(INVALID_PARAMS, f"Invalid {what}: {exc}") from None


def _signature(names: Sequence[str], required: Iterable[str]) -> inspect.Signature:
    must = set(required)
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)]
    for name in names:
        default = inspect.Parameter.empty if name in must else None
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=str if name in must else (str | None),
            )
        )
    return inspect.Signature(params)


def _reader(service: str, spec: ResourceSpec, backend: Backend, variables: Sequence[str]) -> Any:
    async def read(ctx: Context[Any], **values: Any) -> str:
        request = _strings_request(spec.request, values, "URI variables")
        response = await backend.unary(service, spec.method, request, spec.response, ctx, None)
        return json.dumps(to_json(response), separators=(",", ":"))

    read.__signature__ = _signature(variables, variables)  # type: ignore[attr-defined] - the reader's parameters are the template's variables
    read.__name__ = spec.method
    return read


def _prompt(service: str, spec: PromptSpec, backend: Backend) -> Any:
    async def get(ctx: Context[Any], **values: Any) -> str:
        request = _strings_request(spec.request, values, f"arguments of prompt {spec.name!r}")
        response = await backend.unary(service, spec.method, request, spec.response, ctx, None)
        data = to_json(response)
        strings = [v for v in data.values() if isinstance(v, str)]
        if len(data) == 1 and len(strings) == 1:
            return strings[0]
        return json.dumps(data, separators=(",", ":"))

    names = [a.name for a in spec.arguments]
    get.__signature__ = _signature(names, [a.name for a in spec.arguments if a.required])  # type: ignore[attr-defined] - the prompt's parameters are the request's fields
    get.__name__ = spec.method
    return get


def _completion(completer: Any, method: str, fields: Sequence[str]) -> Callable[..., Any]:
    from mcpkit.experimental.protogen.names import snake_case

    handlers: dict[str, Callable[..., Any]] = {}
    for name in fields:
        attr = f"complete_{snake_case(method)}_{name}"
        handler = getattr(completer, attr, None)
        if not callable(handler):
            raise TypeError(f"the completer {type(completer).__name__} has no method {attr}()")
        handlers[name] = handler

    async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        handler = handlers.get(argument)
        if handler is None:
            return []
        got = handler(value, context)
        if inspect.isawaitable(got):
            got = await got
        return [str(v) for v in got]

    return complete


def register(server: Server, service: ServiceSpec, backend: Backend, completer: Any = None) -> None:
    """Register every tool, resource and prompt of ``service`` on ``server``, each
    forwarding to ``backend`` (rules 1-7). Raises ``TypeError`` before registering
    anything when the backend cannot reach a method (an in-process servicer without it)
    or when ``completer`` lacks a method a ``completable_fields`` entry needs (rule 6)."""
    methods = [s.method for s in (*service.tools, *service.resources, *service.prompts)]
    require = getattr(backend, "require", None)
    if require is not None:
        require(methods)
    for item in (*service.resources, *service.prompts):
        if item.completable and completer is not None:
            _completion(completer, item.method, item.completable)
    taken = [t.name for t in service.tools if t.name in server.tools]
    taken += [p.name for p in service.prompts if p.name in server.prompts]
    taken += [r.uri for r in service.resources if r.uri in server.resources]
    taken += [
        r.uri for r in service.resources for t in server.templates if t.matcher.template == r.uri
    ]
    if taken:
        raise TypeError(
            f"{service.name}: {', '.join(taken)} already registered on this server (another "
            "service, or this one twice); set mcp_service.namespace or rename"
        )
    for tool in service.tools:
        fn = _Tool(service.name, tool, backend)
        structured = fn.structured
        server.add_tool(
            fn.__call__,
            name=tool.name,
            description=tool.description or "",
            input_schema=message_schema(_descriptor(tool.request)),
            output_schema=message_schema(_descriptor(tool.response)) if structured else None,
            structured_output=structured,
        )
    for resource in service.resources:
        from uri_template import URITemplate

        variables = list(URITemplate(resource.uri).variable_names)
        server.add_resource(
            _reader(service.name, resource, backend, variables),
            resource.uri,
            name=resource.name,
            description=resource.description,
            mime_type=resource.mime_type or "application/json",
        )
        if resource.completable and completer is not None:
            handler = _completion(completer, resource.method, resource.completable)
            server.completion(resource=resource.uri)(handler)
    for prompt in service.prompts:
        server.add_prompt(
            _prompt(service.name, prompt, backend),
            name=prompt.name,
            description=prompt.description,
            arguments=[
                {"name": a.name, "required": a.required}
                | ({"description": a.description} if a.description else {})
                for a in prompt.arguments
            ],
        )
        if prompt.completable and completer is not None:
            handler = _completion(completer, prompt.method, prompt.completable)
            server.completion(prompt=prompt.name)(handler)


# -- elicitation and sampling helpers (mcp_elicit, mcp_sampling) ----------------------------


@dataclass(frozen=True)
class Elicited(Generic[Req]):
    """The answer to a typed elicitation: ``action`` is ``accept``, ``decline`` or
    ``cancel``; ``message`` the form as the named message when accepted, else None."""

    action: str
    message: Req | None = None


async def elicit(
    ctx: Context[Any], message: str, form: type[Req], *, key: str | None = None
) -> Elicited[Req]:
    """Ask the user for ``form``'s fields (``elicitation/create`` on the handshake era,
    an MRTR input request on 2026-07-28: ``ctx.elicit`` picks). The schema is the
    message's (:func:`message_schema`); raises ``ValueError`` when it is not a flat form
    and ``InputResponseError`` (-32602) when an accepted answer is not the message."""
    answer = await ctx.elicit(message, message_schema(_descriptor(form)), key=key)
    action = str(answer.get("action", "cancel"))
    if action != "accept":
        return Elicited(action)
    try:
        return Elicited(action, to_message(form, answer.get("content") or {}))
    except json_format.ParseError as exc:
        from mcpkit.server import InputResponseError

        problem = f"the answer is not a {form.DESCRIPTOR.full_name}: {exc}"
        name = key or form.DESCRIPTOR.full_name
        raise InputResponseError(name, "elicitation/create", [problem]) from None


@dataclass(frozen=True)
class SamplingSpec:
    """An ``mcp_sampling`` annotation: the request's fixed parameters."""

    system_prompt: str | None = None
    max_tokens: int = 0
    include_context: str | None = None
    intelligence_priority: float | None = None
    speed_priority: float | None = None
    cost_priority: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])


async def sample(ctx: Context[Any], messages: Any, spec: SamplingSpec, **options: Any) -> Any:
    """``sampling/createMessage`` with the annotation's parameters (``ctx.sample``:
    both eras); ``messages`` as ``ctx.sample`` takes them. ``max_tokens`` 0 in the
    annotation means 1024."""
    preferences = {
        k: v
        for k, v in (
            ("intelligencePriority", spec.intelligence_priority),
            ("speedPriority", spec.speed_priority),
            ("costPriority", spec.cost_priority),
        )
        if v is not None
    }
    if spec.include_context:
        options.setdefault("includeContext", spec.include_context)
    return await ctx.sample(
        messages,
        max_tokens=spec.max_tokens or 1024,
        system_prompt=spec.system_prompt,
        model_preferences=preferences or None,
        **options,
    )
