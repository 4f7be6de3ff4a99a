"""The Python module generated for one ``.proto`` file (``<name>_mcp.py``).

Rules:
1. The module imports the runtime and core's ``Server``/``Context``, then the file's
   ``_pb2`` module (and the ``_pb2`` of each other file whose messages its methods use;
   a project's generated code sorts after the installed mcpkit); never ``grpc``.
2. Per annotated service ``S`` it defines: ``SServicer`` (a ``Protocol`` of the exposed
   methods, sync or async, grpcio's ``(request, context)`` shape), ``S_SPEC`` (a
   :class:`~.runtime.ServiceSpec`), ``register_<s>(server, servicer)`` (in process)
   and ``forward_<s>(server, channel, metadata=())`` (gRPC); with completable fields a
   ``SCompleter`` protocol and a required ``completer=`` argument (None says "no
   completions" explicitly, never by omission); ``elicit_<message>`` and
   ``sample_for_<method>`` helpers for ``mcp_elicit``/``mcp_sampling``.
3. The text is deterministic (same request, same bytes), formatted as ``ruff format``
   leaves it at line length 100, and passes pyright strict when the ``_pb2.pyi`` stubs
   are present (``mcpkit protogen`` writes them).
"""

from __future__ import annotations

import json
import struct
import textwrap

from mcpkit.experimental.protogen.names import snake_case
from mcpkit.experimental.protogen.plan import FilePlan, ServicePlan

__all__ = ["module_text"]

_WIDTH = 100


def _lit(value: object) -> str:
    """A literal as ``ruff format`` writes it (double quotes unless that needs escapes)."""
    if isinstance(value, str):
        return _sq(value) if value.count('"') > value.count("'") else _dq(value)
    if isinstance(value, float):
        return repr(_float32(value))
    return repr(value)


def _float32(value: float) -> float:
    """The shortest decimal that is the same float32 (annotation priorities are floats)."""
    packed = struct.pack("<f", value)
    for digits in range(1, 10):
        shorter = float(f"{value:.{digits}g}")
        if struct.pack("<f", shorter) == packed:
            return shorter
    return value


def _dq(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _sq(value: str) -> str:
    body = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"'{body}'"


def _doc(indent: int, text: str) -> list[str]:
    """A docstring wrapped to the line length."""
    pad = " " * indent
    one = f'{pad}"""{text}"""'
    if len(one) <= _WIDTH:
        return [one]
    lines = textwrap.wrap(text, width=_WIDTH - indent - 3, break_long_words=False)
    lines[0] = '"""' + lines[0]
    lines[-1] += '"""'
    return [pad + line for line in lines]


def _noqa_long(lines: list[str]) -> list[str]:
    """A code line ruff cannot shorten (a very long identifier) says so."""
    out: list[str] = []
    for line in lines:
        code = not line.lstrip().startswith(('"', "'")) and '"""' not in line
        out.append(line + "  # noqa: E501" if len(line) > _WIDTH and code else line)
    return out


def _def(indent: int, head: str, params: list[str], tail: str) -> list[str]:
    """A ``def`` (or call) line as ``ruff format`` breaks it: one line, else the
    parameters on one indented line, else one per line with a trailing comma."""
    pad = " " * indent
    one = f"{pad}{head}({', '.join(params)}){tail}"
    if len(one) <= _WIDTH:
        return [one]
    inner = f"{pad}    {', '.join(params)}"
    if len(inner) <= _WIDTH and not params[-1].endswith(","):
        return [f"{pad}{head}(", inner, f"{pad}){tail}"]
    return [f"{pad}{head}(", *(f"{pad}    {p}," for p in params), f"{pad}){tail}"]


def _kw(indent: int, name: str, value: object) -> list[str]:
    pad = " " * indent
    one = f"{pad}{name}={_lit(value)},"
    if len(one) <= _WIDTH or not isinstance(value, str):
        return [one]
    parts: list[str] = []
    chunk = ""
    for word in value.split(" "):
        piece = word if not chunk else " " + word
        if len(_dq(chunk + piece)) + indent + 4 > _WIDTH and chunk:
            parts.append(chunk)
            chunk = piece
        else:
            chunk += piece
    parts.append(chunk)
    return [f"{pad}{name}=(", *(f"{pad}    {_lit(p)}" for p in parts), f"{pad}),"]


class _Names:
    def __init__(self, plan: FilePlan) -> None:
        # kind-ok: unbounded-table one entry per .proto file the request names
        self.alias: dict[str, str] = {}
        others = sorted(f for f in plan.modules if f != plan.proto)
        self.alias[plan.proto] = "_pb"
        for i, f in enumerate(others, 1):
            self.alias[f] = f"_pb{i}"
        self.modules = plan.modules

    def cls(self, ref: str) -> str:
        file, name = ref.split(":", 1)
        return f"{self.alias[file]}.{name}"

    def imports(self, installed: list[str]) -> list[str]:
        """Rule 1's import block, sorted as isort sections: the installed packages
        (``google.protobuf``'s well-known types with mcpkit's ``installed`` lines), then
        the project's own generated modules."""
        third: list[tuple[str, str]] = [(ln.split()[1], ln) for ln in installed]
        first: list[tuple[str, str]] = []
        for file, alias in self.alias.items():
            module = self.modules[file]
            package, _, leaf = module.rpartition(".")
            if package:
                line = f"from {package} import {leaf} as {alias}"
            else:
                line = f"import {leaf} as {alias}"
            section = third if module.startswith("google.protobuf.") else first
            section.append((package or leaf, line))
        out: list[str] = []
        for section in (third, first):
            ordered = sorted(
                section, key=lambda item: (item[1].startswith("from "), item[0].lower(), item[1])
            )
            if ordered and out:
                out.append("")
            out += [line for _, line in ordered]
        return out


def _service(s: ServicePlan, n: _Names) -> list[str]:
    snake = snake_case(s.name)
    lines: list[str] = ["", ""]
    lines.append(f"class {s.name}Servicer(Protocol):")
    lines += [*_doc(4, f"{s.full_name}: the methods MCP calls (sync or async)."), ""]
    for method, req, resp, streaming in s.methods:
        reply = "_rt.Stream" if streaming else "_rt.Reply"
        lines += _def(
            4,
            f"def {method}",
            ["self", f"request: {n.cls(req)}", "context: Any", "/"],
            f" -> {reply}[{n.cls(resp)}]: ...",
        )
    completable = [(r.method, f) for r in s.resources for f in r.completable]
    completable += [(p.method, f) for p in s.prompts for f in p.completable]
    if completable:
        lines += ["", "", f"class {s.name}Completer(Protocol):"]
        lines.append('    """Completion values for the completable fields (sync or async)."""')
        lines.append("")
        for method, f in completable:
            lines += _def(
                4,
                f"def complete_{snake_case(method)}_{f}",
                ["self", "value: str", "context: Mapping[str, str]", "/"],
                " -> _Values: ...",
            )
    spec = f"{snake.upper()}_SPEC"
    lines += ["", "", f"{spec} = _rt.ServiceSpec("]
    lines += _kw(4, "name", s.full_name)
    for kind, items in (("tools", s.tools), ("resources", s.resources), ("prompts", s.prompts)):
        if not items:
            continue
        lines.append(f"    {kind}=(")
        for item in items:
            lines += _entry(kind, item, n)
        lines.append("    ),")
    lines.append(")")
    lines += _doc(0, f"The MCP surface of {s.full_name}.")
    params = ["server: Server", f"servicer: {s.name}Servicer"]
    if completable:
        params += ["*", f"completer: {s.name}Completer | None"]
    lines += ["", "", *_def(0, f"def register_{snake}", params, " -> None:")]
    lines += _doc(
        4,
        f"Register the tools, resources and prompts of {s.full_name}, each calling "
        "``servicer`` in process.",
    )
    args = ["server", spec, "InProcess(servicer)", *(["completer"] if completable else [])]
    lines += _def(4, "_rt.register", args, "")
    lines += ["", "", f"def forward_{snake}("]
    lines.append("    server: Server,")
    lines.append("    channel: Any,")
    lines.append("    metadata: Sequence[tuple[str, str]] = (),")
    if completable:
        lines.append(f"    *,\n    completer: {s.name}Completer | None,")
    lines.append(") -> None:")
    lines += _doc(
        4,
        f"Register the tools, resources and prompts of {s.full_name}, each forwarding "
        "over the grpcio ``channel`` (sync or ``grpc.aio``).",
    )
    lines.append("    from mcpkit.experimental.protogen.grpc_forward import GrpcChannel")
    lines.append("")
    args = [
        "server",
        spec,
        "GrpcChannel(channel, metadata)",
        *(["completer"] if completable else []),
    ]
    lines += _def(4, "_rt.register", args, "")
    for e in s.elicits:
        form = n.cls(e.form)
        lines += ["", "", f"async def {e.helper}("]
        lines.append("    ctx: Context[Any],")
        lines.append(f"    message: str = {_lit(e.message)},")
        lines.append(f") -> _rt.Elicited[{form}]:")
        lines.append(
            f'    """Ask the user for a {form.split(".", 1)[1]} (form elicitation, either era)."""'
        )
        lines.append(f"    return await _rt.elicit(ctx, message, {form})")
    for sm in s.samplings:
        lines += [
            "",
            "",
            *_def(
                0,
                f"async def {sm.helper}",
                ["ctx: Context[Any]", "messages: Any", "**options: Any"],
                " -> Any:",
            ),
        ]
        lines.append('    """``sampling/createMessage`` with the annotation\'s parameters."""')
        lines.append("    spec = _rt.SamplingSpec(")
        for k, v in sm.options.items():
            if v is not None:
                lines += _kw(8, k, v)
        lines.append("    )")
        lines.append("    return await _rt.sample(ctx, messages, spec, **options)")
    return lines


def _entry(kind: str, item: object, n: _Names) -> list[str]:
    from mcpkit.experimental.protogen import plan as p

    out: list[str] = []
    if isinstance(item, p.Tool):
        out.append("        _rt.ToolSpec(")
        out += _kw(12, "method", item.method) + _kw(12, "name", item.name)
        out += [
            f"            request={n.cls(item.request)},",
            f"            response={n.cls(item.response)},",
        ]
        if item.description:
            out += _kw(12, "description", item.description)
        if item.structured:
            out.append("            structured=True,")
        if item.summary is not None:
            out += _kw(12, "summary", item.summary)
        if item.timeout_s is not None:
            out.append(f"            timeout_s={item.timeout_s!r},")
        if item.streaming:
            out.append("            streaming=True,")
    elif isinstance(item, p.Resource):
        out.append("        _rt.ResourceSpec(")
        out += (
            _kw(12, "method", item.method) + _kw(12, "uri", item.uri) + _kw(12, "name", item.name)
        )
        out += [
            f"            request={n.cls(item.request)},",
            f"            response={n.cls(item.response)},",
        ]
        if item.description:
            out += _kw(12, "description", item.description)
        if item.mime_type:
            out += _kw(12, "mime_type", item.mime_type)
        if item.completable:
            out.append(f"            completable={tuple(item.completable)!r},".replace("'", '"'))
    elif isinstance(item, p.Prompt):
        out.append("        _rt.PromptSpec(")
        out += _kw(12, "method", item.method) + _kw(12, "name", item.name)
        out += [
            f"            request={n.cls(item.request)},",
            f"            response={n.cls(item.response)},",
        ]
        out.append("            arguments=(")
        for name, note, required in item.arguments:
            out += _def(16, "_rt.PromptArgument", [_lit(name), _lit(note), str(required)], ",")
        out.append("            ),")
        if item.description:
            out += _kw(12, "description", item.description)
        if item.completable:
            out.append(f"            completable={tuple(item.completable)!r},".replace("'", '"'))
    out.append("        ),")
    return out


def module_text(plan: FilePlan) -> str:
    """Rules 1-3: the module's source text."""
    n = _Names(plan)
    completable = any(r.completable for s in plan.services for r in s.resources) or any(
        p.completable for s in plan.services for p in s.prompts
    )
    typing = ["Any", "Protocol"]
    abc = ["Sequence"]
    if completable:
        abc = ["Awaitable", "Mapping", "Sequence"]
    helpers = any(s.elicits or s.samplings for s in plan.services)
    head = [
        f'"""MCP bindings of {plan.proto}.',
        "",
        'Generated by protoc-gen-mcpkit. DO NOT EDIT."""',
        "",
        "from __future__ import annotations",
        "",
        f"from collections.abc import {', '.join(abc)}",
        f"from typing import {', '.join(typing)}",
        "",
        *n.imports(
            [
                "from mcpkit.experimental.protogen import runtime as _rt",
                "from mcpkit.experimental.protogen.inprocess import InProcess",
                "from mcpkit.server import Context, Server"
                if helpers
                else "from mcpkit.server import Server",
            ]
        ),
    ]
    if completable:
        head += ["", "_Values = Sequence[str] | Awaitable[Sequence[str]]"]
    names: list[str] = []
    body: list[str] = []
    for s in plan.services:
        snake = snake_case(s.name)
        names += [
            f"{s.name}Servicer",
            f"{snake.upper()}_SPEC",
            f"register_{snake}",
            f"forward_{snake}",
        ]
        if any(r.completable for r in s.resources) or any(p.completable for p in s.prompts):
            names.append(f"{s.name}Completer")
        names += [e.helper for e in s.elicits] + [sm.helper for sm in s.samplings]
        body += _service(s, n)
    exports = ["", "__all__ = ["]
    exports += [f'    "{x}",' for x in sorted(names, key=_export_key)] + ["]"]
    return "\n".join(_noqa_long([*head, *exports, *body])) + "\n"


def _export_key(name: str) -> tuple[int, str]:
    """RUF022's isort-style order: constants, then classes, then the rest."""
    if name.isupper():
        return (0, name)
    return (1 if name[:1].isupper() else 2, name)
