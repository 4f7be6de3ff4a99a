"""What one ``.proto`` file asks for, resolved and checked at generation time.

Rules:
1. Every annotation that cannot work fails generation with :class:`Problem`, whose text
   is ``file:line: what is wrong; how to fix it`` (the line of the option when protoc
   kept source info, else of the method): a tool name outside ``[a-z][a-z0-9_]*`` or
   over 64 characters (after the namespace prefix); two tools of one file with one
   name; a ``timeout`` that is not a positive Go duration; a ``result_summary`` field
   that is not a response field; a resource without ``uri_template``, or whose
   template variable or completable field is not a request field (resp. not a
   template variable); a prompt completable field that is not a request field; an
   ``schema_message`` that is no message of the file, or whose fields are not a flat
   form (scalars and enums only); ``mcp_elicit``/``mcp_sampling`` on a method without
   ``mcp_tool``; an annotated client-streaming or bidirectional method; a
   server-streaming resource or prompt; a request that is a well-known type (its JSON is
   not an object of fields; ``Empty`` is fine), and so is the response of a structured
   tool or a prompt.
2. Names default to the method name in snake_case; ``mcp_service.namespace`` prefixes
   tool and prompt names (``books`` + ``search`` = ``books_search``), not resources.
3. Descriptions are the annotation's, else the method's leading comment (its lines
   stripped and joined by newlines), else none. A prompt argument's description is its
   field's leading (else trailing) comment.
4. Method-level ``mcp_elicit``/``mcp_sampling`` replace the service's
   ``default_elicit``/``default_sampling`` (no merging).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message

from mcpkit.experimental.protogen import annotations_pb2 as mcp
from mcpkit.experimental.protogen.names import (
    parse_duration_s,
    snake_case,
    summary_fields,
    tool_name_problem,
)
from mcpkit.experimental.protogen.schema import WELL_KNOWN

__all__ = ["FilePlan", "Problem", "plan_file"]

_SERVICE, _METHOD, _MESSAGE, _FIELD, _NESTED, _OPTIONS = 6, 2, 4, 2, 3, 4


class Problem(Exception):
    """An annotation that cannot work (rule 1)."""


@dataclass
class Tool:
    method: str
    name: str
    request: str
    response: str
    description: str | None
    structured: bool
    summary: str | None
    timeout_s: float | None
    streaming: bool


@dataclass
class Resource:
    method: str
    uri: str
    name: str
    request: str
    response: str
    description: str | None
    mime_type: str | None
    completable: list[str]


@dataclass
class Prompt:
    method: str
    name: str
    request: str
    response: str
    description: str | None
    arguments: list[tuple[str, str | None, bool]]
    completable: list[str]


@dataclass
class Elicit:
    helper: str
    form: str
    message: str


@dataclass
class Sampling:
    helper: str
    options: dict[str, Any]


@dataclass
class ServicePlan:
    full_name: str
    name: str
    description: str | None
    tools: list[Tool] = field(default_factory=list[Tool])
    resources: list[Resource] = field(default_factory=list[Resource])
    prompts: list[Prompt] = field(default_factory=list[Prompt])
    elicits: list[Elicit] = field(default_factory=list[Elicit])
    samplings: list[Sampling] = field(default_factory=list[Sampling])
    methods: list[tuple[str, str, str, bool]] = field(
        default_factory=list[tuple[str, str, str, bool]]
    )


@dataclass
class FilePlan:
    proto: str
    package: str
    services: list[ServicePlan]
    modules: dict[str, str]
    """{proto file name: pb2 module} for every file whose messages the plan names."""


def pb2_module(proto_name: str) -> str:
    """The module protoc's Python generator writes for ``proto_name``."""
    return proto_name.removesuffix(".proto").replace("-", "_").replace("/", ".") + "_pb2"


class _Source:
    def __init__(self, fdp: descriptor_pb2.FileDescriptorProto) -> None:
        self.name = fdp.name
        self.locations = {tuple(loc.path): loc for loc in fdp.source_code_info.location}

    def line(self, *paths: tuple[int, ...]) -> int:
        for path in paths:
            for end in range(len(path), 0, -1):
                loc = self.locations.get(path[:end])
                if loc is not None:
                    return loc.span[0] + 1
        return 0

    def comment(self, path: tuple[int, ...]) -> str | None:
        loc = self.locations.get(path)
        if loc is None:
            return None
        text = loc.leading_comments or loc.trailing_comments
        lines = [ln.strip() for ln in text.strip().splitlines()]
        return "\n".join(lines) or None

    def fail(self, line: int, what: str, fix: str) -> Problem:
        return Problem(f"{self.name}:{line}: {what}; {fix}")


def _field_paths(fdp: descriptor_pb2.FileDescriptorProto) -> dict[str, tuple[int, ...]]:
    """{message full name: its path}, for field comments (rule 3)."""
    out: dict[str, tuple[int, ...]] = {}

    def walk(messages: Any, prefix: str, path: tuple[int, ...], tag: int) -> None:
        for i, m in enumerate(messages):
            full = f"{prefix}.{m.name}" if prefix else m.name
            out[full] = (*path, tag, i)
            walk(m.nested_type, full, (*path, tag, i), _NESTED)

    walk(fdp.message_type, fdp.package, (), _MESSAGE)
    return out


def python_name(message: Descriptor) -> str:
    """``Outer.Inner`` within its pb2 module."""
    parts: list[str] = []
    m: Descriptor | None = message
    while m is not None:
        parts.append(m.name)
        m = m.containing_type
    return ".".join(reversed(parts))


_FLAT = {
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_ENUM,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_FLOAT,
    FieldDescriptor.TYPE_DOUBLE,
}


def plan_file(fdp: descriptor_pb2.FileDescriptorProto, pool: DescriptorPool) -> FilePlan:
    """Resolve and check ``fdp``'s annotations (rules 1-4); raises :class:`Problem`."""
    src = _Source(fdp)
    fields_at = _field_paths(fdp)
    modules: dict[str, str] = {fdp.name: pb2_module(fdp.name)}
    services: list[ServicePlan] = []
    seen_tools: dict[str, str] = {}

    def ref(type_name: str) -> tuple[str, Descriptor]:
        message = pool.FindMessageTypeByName(type_name.lstrip("."))
        modules.setdefault(message.file.name, pb2_module(message.file.name))
        return f"{message.file.name}:{python_name(message)}", message

    def form(name: str, line: int) -> str:
        full = name if "." in name else f"{fdp.package}.{name}" if fdp.package else name
        try:
            message = pool.FindMessageTypeByName(full)
        except KeyError:
            message = None
        if message is None or message.file.name != fdp.name:
            known = ", ".join(m.name for m in fdp.message_type)
            raise src.fail(
                line,
                f"schema_message {name!r} is not a message of this file",
                f"name one of: {known}",
            ) from None
        for f in message.fields:
            if f.is_repeated or f.type not in _FLAT:
                raise src.fail(
                    line,
                    f"schema_message {name!r} has the field {f.name!r}, which an "
                    "elicitation form cannot hold",
                    "use only scalar and enum fields",
                )
        return ref(f".{message.full_name}")[0]

    for si, service in enumerate(fdp.service):
        sopts = _ext(service.options, "mcp_service", mcp.MCPServiceOptions)
        namespace = sopts.namespace
        plan = ServicePlan(
            f"{fdp.package}.{service.name}" if fdp.package else service.name,
            service.name,
            src.comment((_SERVICE, si)),
        )
        helpers: set[str] = set()
        for mi, method in enumerate(service.method):
            at = (_SERVICE, si, _METHOD, mi)
            opts = method.options
            has = {
                n: _has(opts, n)
                for n in ("mcp_tool", "mcp_resource", "mcp_prompt", "mcp_elicit", "mcp_sampling")
            }
            if not any(has.values()):
                continue
            line = src.line(at)
            if method.client_streaming:
                kind = "bidirectional" if method.server_streaming else "client-streaming"
                raise src.fail(
                    line,
                    f"{method.name} is a {kind} RPC, which MCP cannot expose (a tool "
                    "call is one request)",
                    "remove its mcp options, or make it unary or server-streaming",
                )
            req_ref, req = ref(method.input_type)
            resp_ref, resp = ref(method.output_type)
            plan.methods.append((method.name, req_ref, resp_ref, method.server_streaming))
            if req.full_name in WELL_KNOWN:
                raise src.fail(
                    line,
                    f"{method.name} takes {req.full_name}, whose JSON form is not an "
                    "object of its fields (tool arguments are)",
                    "wrap it in a request message of your own",
                )
            description = None
            if has["mcp_tool"]:
                t = _ext(opts, "mcp_tool", mcp.MCPToolOptions)
                tline = src.line((*at, _OPTIONS, 51001))
                base = t.name or snake_case(method.name)
                name = f"{namespace}_{base}" if namespace else base
                problem = tool_name_problem(name)
                if problem is not None:
                    raise src.fail(
                        tline,
                        f"tool name {name!r} for {method.name}: {problem}",
                        "use [a-z][a-z0-9_]*, at most 64 characters (namespace included)",
                    )
                if name in seen_tools:
                    raise src.fail(
                        tline,
                        f"tool name {name!r} is used by {seen_tools[name]} too",
                        "give one of them another name",
                    )
                seen_tools[name] = method.name
                timeout_s = None
                if t.timeout:
                    try:
                        timeout_s = parse_duration_s(t.timeout)
                    except ValueError as exc:
                        raise src.fail(
                            tline,
                            f"timeout of {method.name}: {exc}",
                            'write a Go duration such as "30s", "5m" or "1m30s"',
                        ) from None
                summary = t.result_summary or None
                if summary is not None:
                    try:
                        wanted = summary_fields(summary)
                    except ValueError as exc:
                        raise src.fail(tline, f"result_summary: {exc}", "use {field}") from None
                    for f in wanted:
                        if f not in resp.fields_by_name:
                            raise src.fail(
                                tline,
                                f"result_summary names {{{f}}}, which is not a field "
                                f"of {resp.full_name}",
                                f"use one of: {', '.join(resp.fields_by_name)}",
                            )
                structured = t.structured_output or summary is not None
                if structured and resp.full_name in WELL_KNOWN:
                    raise src.fail(
                        tline,
                        f"{method.name} returns {resp.full_name}, whose JSON form is not "
                        "an object of its fields (structuredContent is)",
                        "wrap it in a response message, or drop structured_output",
                    )
                description = t.description or src.comment(at)
                plan.tools.append(
                    Tool(
                        method.name,
                        name,
                        req_ref,
                        resp_ref,
                        description,
                        t.structured_output or summary is not None,
                        summary,
                        timeout_s,
                        method.server_streaming,
                    )
                )
            elif has["mcp_elicit"] or has["mcp_sampling"]:
                which = "mcp_elicit" if has["mcp_elicit"] else "mcp_sampling"
                number = 51004 if which == "mcp_elicit" else 51005
                raise src.fail(
                    src.line((*at, _OPTIONS, number)),
                    f"{which} on {method.name}, which has no mcp_tool",
                    "add an mcp_tool option or remove " + which,
                )
            if method.server_streaming and (has["mcp_resource"] or has["mcp_prompt"]):
                raise src.fail(
                    line,
                    f"{method.name} is server-streaming; only tools can stream",
                    "expose it with mcp_tool",
                )
            if has["mcp_resource"]:
                r = _ext(opts, "mcp_resource", mcp.MCPResourceOptions)
                rline = src.line((*at, _OPTIONS, 51002))
                if not r.uri_template:
                    raise src.fail(
                        rline,
                        f"mcp_resource of {method.name} has no uri_template",
                        'set uri_template, e.g. "book://{book_id}"',
                    )
                from uri_template import URITemplate

                try:
                    variables = list(URITemplate(r.uri_template).variable_names)
                except Exception as exc:  # the library's own error types
                    raise src.fail(
                        rline,
                        f"uri_template {r.uri_template!r}: {exc}",
                        "write an RFC 6570 template",
                    ) from None
                for v in variables:
                    if v not in req.fields_by_name:
                        raise src.fail(
                            rline,
                            f"uri_template variable {{{v}}} is not a field of {req.full_name}",
                            f"use one of: {', '.join(req.fields_by_name) or '(none)'}",
                        )
                for c in r.completable_fields:
                    if c not in variables:
                        raise src.fail(
                            rline,
                            f"completable field {c!r} is not a variable of {r.uri_template!r}",
                            "list template variables only",
                        )
                plan.resources.append(
                    Resource(
                        method.name,
                        r.uri_template,
                        r.name or method.name,
                        req_ref,
                        resp_ref,
                        r.description or src.comment(at),
                        r.mime_type or None,
                        list(r.completable_fields),
                    )
                )
            if has["mcp_prompt"]:
                p = _ext(opts, "mcp_prompt", mcp.MCPPromptOptions)
                pline = src.line((*at, _OPTIONS, 51003))
                if resp.full_name in WELL_KNOWN:
                    raise src.fail(
                        pline,
                        f"the prompt {method.name} returns {resp.full_name}",
                        "return a message of your own (its only string field is the text)",
                    )
                base = p.name or snake_case(method.name)
                for c in p.completable_fields:
                    if c not in req.fields_by_name:
                        raise src.fail(
                            pline,
                            f"completable field {c!r} is not a field of {req.full_name}",
                            "list request fields only",
                        )
                path = fields_at.get(req.full_name)
                arguments: list[tuple[str, str | None, bool]] = []
                optional = _optional(req)
                for i, f in enumerate(req.fields):
                    note = (
                        src.comment((*path, _FIELD, i))
                        if path and req.file.name == fdp.name
                        else None
                    )
                    required = not (
                        f.name in optional
                        or f.is_repeated
                        or f.message_type is not None
                        or f.containing_oneof is not None
                    )
                    arguments.append((f.name, note, required))
                plan.prompts.append(
                    Prompt(
                        method.name,
                        f"{namespace}_{base}" if namespace else base,
                        req_ref,
                        resp_ref,
                        p.description or src.comment(at),
                        arguments,
                        list(p.completable_fields),
                    )
                )
            elicit = (
                _ext(opts, "mcp_elicit", mcp.MCPElicitOptions)
                if has["mcp_elicit"]
                else (
                    sopts.default_elicit
                    if has["mcp_tool"] and sopts.HasField("default_elicit")
                    else None
                )
            )
            if elicit is not None and has["mcp_tool"]:
                eline = src.line((*at, _OPTIONS, 51004), (_SERVICE, si, 3))
                if not elicit.schema_message:
                    raise src.fail(
                        eline,
                        f"mcp_elicit of {method.name} has no schema_message",
                        "name a message of this file",
                    )
                helper = f"elicit_{snake_case(elicit.schema_message.rsplit('.', 1)[-1])}"
                if helper not in helpers:
                    helpers.add(helper)
                    plan.elicits.append(
                        Elicit(helper, form(elicit.schema_message, eline), elicit.message)
                    )
            sampling = (
                _ext(opts, "mcp_sampling", mcp.MCPSamplingOptions)
                if has["mcp_sampling"]
                else (
                    sopts.default_sampling
                    if has["mcp_tool"] and sopts.HasField("default_sampling")
                    else None
                )
            )
            if sampling is not None and has["mcp_tool"]:
                chosen = {
                    "system_prompt": sampling.system_prompt or None,
                    "max_tokens": sampling.max_tokens,
                    "include_context": sampling.include_context or None,
                    "intelligence_priority": sampling.intelligence_priority or None,
                    "speed_priority": sampling.speed_priority or None,
                    "cost_priority": sampling.cost_priority or None,
                }
                plan.samplings.append(Sampling(f"sample_for_{snake_case(method.name)}", chosen))
        if plan.methods:
            services.append(plan)
    return FilePlan(fdp.name, fdp.package, services, modules)


E = TypeVar("E", bound=Message)


def _has(options: Message, name: str) -> bool:
    handle = mcp.DESCRIPTOR.extensions_by_name[name]
    return bool(getattr(options, "HasExtension")(handle))  # noqa: B009 - untyped in the stubs


def _ext(options: Message, name: str, cls: type[E]) -> E:
    """The ``mcp.v1`` option ``name`` of ``options`` (its default when unset)."""
    handle = mcp.DESCRIPTOR.extensions_by_name[name]
    extensions: Any = getattr(options, "Extensions")  # noqa: B009 - untyped in the stubs
    return cast(E, extensions[handle])


def _optional(message: Descriptor) -> set[str]:
    proto = descriptor_pb2.DescriptorProto()
    message.CopyToProto(proto)
    return {f.name for f in proto.field if f.proto3_optional}
