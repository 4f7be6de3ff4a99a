"""``mcpkit inspect module:server``: what a server offers, read from the object, offline.

Rules:
1. The server is loaded like ``mcpkit run`` loads it (:func:`mcpkit.cli.run.load_server`,
   same errors); nothing is served and no connection is made. What the module prints
   while it is imported goes to stderr.
2. The text output names the server, then its tools as Python signatures with their
   types (``save_note(title: str, body: str) -> Saved``; the ``Context`` parameter left
   out, ``Annotated`` metadata and ``Field(...)`` defaults shown as the type and the
   default they stand for), prompts likewise, static resources with URI and MIME type,
   resource templates, and extensions with their spec version; each with the first line
   of its description.
3. ``--json`` prints one object: ``server`` (the ``serverInfo``), ``instructions``,
   ``tools``/``prompts``/``resources``/``resourceTemplates`` (the wire definitions as a
   client would list them, each tool and prompt with a ``signature`` added) and
   ``extensions`` (the advertised ``capabilities.extensions`` entries, each exactly
   its extension's settings object) and ``_meta`` (``{"io.mcpkit/extensions": {id:
   {"specVersion", "stability"}}}``, as the ``initialize`` result carries it; absent
   when no extension says either).
4. Extensions describe what they add (scope rules, task support, app views) through
   :mod:`mcpkit.server.inspection`: each section follows core's in the text, and its
   warnings (a view no resource serves) close the output as ``warning:`` lines; in
   ``--json``, ``sections`` maps each section's key to its data and ``warnings`` lists
   every warning (both absent when no extension added any).
5. Late-bound rules (:func:`mcpkit.server.names.late_bound_rules`: rules keyed by a
   name that start-up does not check because the item is added at run time) are listed
   as ``Late-bound rules`` (text) and ``lateBoundRules`` (JSON: ``kind``, ``name``,
   ``source``, ``where``, ``protects``), when there are any (:func:`late_bound`).
6. Every rule keyed by a name that names nothing registered, and every mounted name
   hidden by a later registration (:func:`mcpkit.server.names.problems`,
   :func:`mcpkit.server.mount.shadowed`), is shown with the message ``mcpkit run``
   logs or refuses with: one that ``run`` refuses (:func:`mcpkit.server.names.refuses`)
   as an ``error:`` line (``--json``: ``errors``), the others as ``warning:`` lines
   (``warnings``). ``inspect`` still describes the whole server, and then exits with
   status 1 when there is an error (the server would not start), else 0.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from mcpkit.core.shapes import JSON
from mcpkit.server.inspection import InspectSection, inspect_sections

__all__ = ["add_arguments", "describe", "late_bound", "late_bound_rows", "run", "signature_of"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``mcpkit inspect`` (registered lazily by :mod:`mcpkit.cli.main`)."""
    p.description = (
        "Import a server (module[:attr] or file.py[:attr]) and print what it offers, "
        "without serving it or connecting to it."
    )
    p.add_argument("target", help="module[:attr] or path/to/file.py[:attr]")
    p.add_argument("--json", action="store_true", help="print the definitions as JSON")
    p.set_defaults(handler=run)


def _type_name(annotation: Any) -> str:
    """Rule 2: a type as written in Python, ``Annotated`` metadata (``Field(...)``) left
    out: ``Annotated[str, Field(description=...)]`` is ``str``."""
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    if annotation is None or annotation is type(None):
        return "None"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None and args and not any(isinstance(a, list) for a in args):
        base = getattr(origin, "__qualname__", None) or _plain(origin)
        return f"{base}[{', '.join('...' if a is Ellipsis else _type_name(a) for a in args)}]"
    if isinstance(annotation, type) and not args:
        return annotation.__qualname__
    return _plain(annotation)


def _plain(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace("typing_extensions.", "")


def _default(value: Any) -> str | None:
    """A parameter's default as shown; a pydantic ``Field(...)`` default shows its own
    default, or nothing when it has none (the parameter is required)."""
    if isinstance(value, FieldInfo):
        if value.default is not PydanticUndefined:
            return repr(value.default)
        if value.default_factory is not None:
            return "..."
        return None
    return repr(value)


def signature_of(binding: Any) -> str:
    """``name(param: type = default, ...) -> type`` of a bound tool or prompt function,
    without its ``Context`` parameter (rule 2)."""
    fn = binding.fn
    try:
        sig = inspect.signature(fn, eval_str=True)
    except Exception:  # an annotation that does not evaluate: show it as written
        sig = inspect.signature(fn)
    params: list[str] = []
    for name, param in sig.parameters.items():
        if name == binding.context_param:
            continue
        text = name
        kind = _type_name(param.annotation)
        if kind:
            text += f": {kind}"
        default = None if param.default is inspect.Parameter.empty else _default(param.default)
        if default is not None:
            text += f" = {default}" if kind else f"={default}"
        params.append(text)
    out = f"{binding.name}({', '.join(params)})"
    returns = _type_name(sig.return_annotation)
    return out + (f" -> {returns}" if returns else "")


def describe(server: Any, sections: Sequence[InspectSection] | None = None) -> JSON:
    """Rule 3's object for ``server``, with rule 4's ``sections`` (default: those of
    :func:`~mcpkit.server.inspection.inspect_sections`)."""
    from mcpkit.core.extensions import EXTENSIONS_META, advertised_extensions, extensions_meta

    if sections is None:
        sections = inspect_sections(server)

    tools = [{**t.definition, "signature": signature_of(t.binding)} for t in server.tools.values()]
    prompts = [
        {**p.definition, "signature": signature_of(p.binding)} for p in server.prompts.values()
    ]
    summary: JSON = {
        "server": dict(server.info),
        "instructions": server.instructions,
        "tools": tools,
        "prompts": prompts,
        "resources": [dict(r.definition) for r in server.resources.values()],
        "resourceTemplates": [dict(t.definition) for t in server.templates],
        "extensions": advertised_extensions(server.extensions),
    }
    about = extensions_meta(server.extensions)
    if about:
        summary["_meta"] = {EXTENSIONS_META: about}
    summary.update(late_bound(server))  # rule 5
    errors, warnings = _name_problems(server)
    if errors:
        summary["errors"] = errors
    _add_extension_sections(summary, sections, warnings)
    return summary


def _name_problems(server: Any) -> tuple[list[str], list[str]]:
    """Rule 6: what start-up would refuse, and what it would warn about, one line each."""
    from mcpkit.server.mount import shadowed
    from mcpkit.server.names import problems, refuses

    found = problems(server)
    errors = [message for rule, message in found if refuses(rule)]
    warnings = [message for rule, message in found if not refuses(rule)]
    return errors, warnings + list(shadowed(server))


def _add_extension_sections(
    summary: JSON, sections: Sequence[InspectSection], core_warnings: Sequence[str] = ()
) -> None:
    """Rules 4, 6: the sections extensions contribute and every warning, as ``--json``
    holds them."""
    if sections:
        summary["sections"] = {section.key: section.as_json() for section in sections}
    warnings = [*core_warnings, *(w for section in sections for w in section.warnings)]
    if warnings:
        summary["warnings"] = warnings


def _line(text: Any) -> str:
    stripped = str(text or "").strip()
    return stripped.splitlines()[0] if stripped else ""


def _section(title: str, rows: list[tuple[str, str]], count: int | None = None) -> list[str]:
    if not rows:
        return []
    width = max(len(a) for a, _ in rows)
    lines = [f"{title} ({len(rows) if count is None else count})"]
    lines += [f"  {a.ljust(width)}  {b}".rstrip() for a, b in rows]
    return lines


def render(summary: JSON, sections: Sequence[InspectSection] = ()) -> str:
    """Rule 2's text for :func:`describe`'s object, then rule 4's ``sections``."""
    info = summary["server"]
    out = [f"{info.get('name', '?')} {info.get('version', '')}".rstrip()]
    if summary["instructions"]:
        out.append(_line(summary["instructions"]))
    tools = [(t["signature"], _line(t.get("description"))) for t in summary["tools"]]
    prompts = [(p["signature"], _line(p.get("description"))) for p in summary["prompts"]]
    resources = [
        (
            str(r["uri"]),
            " ".join(x for x in (r.get("mimeType", ""), _line(r.get("description"))) if x),
        )
        for r in summary["resources"]
    ]
    templates = [
        (str(t["uriTemplate"]), _line(t.get("description"))) for t in summary["resourceTemplates"]
    ]
    extensions = [(ext_id, _extension_line(summary, ext_id)) for ext_id in summary["extensions"]]
    for title, rows in (
        ("Tools", tools),
        ("Prompts", prompts),
        ("Resources", resources),
        ("Resource templates", templates),
        ("Extensions", extensions),
        ("Late-bound rules", late_bound_rows(summary)),
    ):
        section = _section(title, rows)
        if section:
            out.append("")
            out += section
    out += _render_extension_sections(
        sections, summary.get("warnings", ()), summary.get("errors", ())
    )
    return "\n".join(out)


def _render_extension_sections(
    sections: Sequence[InspectSection], warnings: Sequence[str], errors: Sequence[str] = ()
) -> list[str]:
    """Rules 4, 6: each extension's section after core's, then every error and warning."""
    lines: list[str] = []
    for section in sections:
        rows = [(str(a), str(b)) for a, b in section.rows]
        if rows:
            lines += ["", *_section(section.title, rows, section.count)]
    if errors or warnings:
        lines += ["", *(f"error: {e}" for e in errors), *(f"warning: {w}" for w in warnings)]
    return lines


def _extension_line(summary: JSON, extension_id: str) -> str:
    """``specVersion X, stability Y`` from rule 3's ``_meta`` map (empty when unsaid)."""
    from mcpkit.client._json import as_object
    from mcpkit.core.extensions import EXTENSIONS_META

    meta = as_object(summary.get("_meta")) or {}
    mine = as_object((as_object(meta.get(EXTENSIONS_META)) or {}).get(extension_id)) or {}
    return ", ".join(f"{k} {v}" for k, v in mine.items())


def run(args: argparse.Namespace) -> int:
    """``mcpkit inspect``: rules 1-3; user errors are :class:`CliError` (status 2)."""
    from mcpkit.cli.run import UserCodeError, load_server

    try:
        with contextlib.redirect_stdout(sys.stderr):
            server = load_server(args.target)
    except UserCodeError as exc:
        sys.stderr.write(f"mcpkit inspect: {exc}\n")
        return 1
    sections = inspect_sections(server)
    summary = describe(server, sections)
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    else:
        print(render(summary, sections))
    return 1 if summary.get("errors") else 0  # rule 6: run would refuse it


def late_bound(server: Any) -> JSON:
    """Rule 4: ``{"lateBoundRules": [...]}``, or ``{}`` when the server has none."""
    from mcpkit.server.names import late_bound_rules

    rules = [
        {
            "kind": r.kind,
            "name": r.name,
            "source": r.source,
            "where": r.where,
            "protects": r.protects,
        }
        for r in late_bound_rules(server)
    ]
    return {"lateBoundRules": rules} if rules else {}


def late_bound_rows(summary: JSON) -> list[tuple[str, str]]:
    """Rule 4's text rows: ``tool 'export'`` and the rule's source."""
    rules: list[JSON] = summary.get("lateBoundRules") or []
    return [(f"{r['kind']} {r['name']!r}", str(r["source"])) for r in rules]
