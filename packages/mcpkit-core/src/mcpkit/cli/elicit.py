"""Answering a server's form elicitation from the shell (``mcpkit call``, ``prompt``, ``read``).

Spec: 2025-11-25 ``client/elicitation`` (form mode, §Response Actions); on 2026-07-28 the
same request arrives as an MRTR input request and is answered by the same handler.

Rules:
1. On a terminal (stdin is a TTY) the person is asked: first whether to answer
   (``y`` accept, ``n`` decline, ``c`` cancel), then one prompt per field of the
   ``requestedSchema`` on stderr, showing its title, description, type, choices and
   default. An empty answer takes the default, or leaves an optional field out.
2. Each answer is read by the field's type (:func:`mcpkit.cli.arguments.coerce`; a
   choice may be given by its number) and validated against the field's schema
   (:func:`mcpkit.core.jsonschema.validation_errors`); an invalid answer is explained
   and asked again.
3. End of input (Ctrl-D) while answering cancels the request.
4. Without a terminal nobody can answer: the request is answered ``cancel`` (the user
   made no explicit choice) and one line on stderr says so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from mcpkit.cli.arguments import coerce
from mcpkit.client._json import as_list, as_object
from mcpkit.core.shapes import JSON

__all__ = ["ask_form", "elicitation_handler"]


class _Cancelled(Exception):
    pass


def _choices(schema: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """``(value, label)`` of an enum field (single-select, or the items of a multi-select)."""
    source: Mapping[str, Any] = schema
    items = as_object(schema.get("items"))
    if schema.get("type") == "array" and items is not None:
        source = items
    options = as_list(source.get("oneOf") or source.get("anyOf"))
    if options is not None:
        consts = [o for o in map(as_object, options) if o is not None and "const" in o]
        return [(o["const"], str(o.get("title", o["const"]))) for o in consts]
    values = as_list(source.get("enum"))
    names = as_list(source.get("enumNames"))
    if values is not None:
        labels = names if names is not None and len(names) == len(values) else values
        return [(v, str(label)) for v, label in zip(values, labels, strict=True)]
    return []


def _read(text: str, schema: Mapping[str, Any]) -> Any:
    choices = _choices(schema)
    if schema.get("type") == "array":
        words = [w.strip() for w in text.split(",") if w.strip()]
        return [_pick(w, choices) for w in words]
    if choices:
        return _pick(text, choices)
    return coerce(text, schema)


def _pick(word: str, choices: list[tuple[Any, str]]) -> Any:
    if word.isdigit() and 1 <= int(word) <= len(choices):
        return choices[int(word) - 1][0]
    return word


class _Prompter:
    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out

    def line(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        text = self.stdin.readline()
        if not text:  # rule 3
            self.out.write("\n")
            raise _Cancelled
        return text.rstrip("\r\n")

    def field(self, name: str, schema: Mapping[str, Any], required: bool) -> Any:
        from mcpkit.core.jsonschema import validation_errors

        title = str(schema.get("title") or name)
        kind = str(schema.get("type", "value"))
        choices = _choices(schema)
        if choices:
            for i, (_, label) in enumerate(choices, 1):
                self.out.write(f"    {i}. {label}\n")
        if schema.get("description"):
            self.out.write(f"    {schema['description']}\n")
        default = schema.get("default")
        hint = kind + (", comma-separated" if kind == "array" else "")
        hint += f", default {default!r}" if "default" in schema else ""
        hint += "" if required else ", optional"
        while True:
            text = self.line(f"  {title} ({hint}): ")
            if not text:
                if "default" in schema:
                    return default
                if not required:
                    return _Skip
                self.out.write("    an answer is required\n")
                continue
            try:
                value = _read(text, schema)
            except ValueError as exc:
                self.out.write(f"    {exc}\n")
                continue
            errors = validation_errors(dict(schema), value)
            if not errors:
                return value
            self.out.write(f"    {'; '.join(errors)}\n")


class _Skip:
    pass


def ask_form(message: str, schema: Mapping[str, Any], stdin: TextIO, out: TextIO) -> JSON:
    """Rules 1-3: ask the person on ``stdin``/``out``; returns the ``ElicitResult`` as a
    dict (``action`` and, when accepted, ``content``)."""
    prompter = _Prompter(stdin, out)
    out.write(f"The server asks: {message}\n")
    try:
        while True:
            choice = prompter.line("Answer? [Y]es / [n]o (decline) / [c]ancel: ").strip().lower()
            if choice in ("", "y", "yes"):
                break
            if choice in ("n", "no"):
                return {"action": "decline"}
            if choice in ("c", "cancel"):
                return {"action": "cancel"}
        props = as_object(schema.get("properties")) or {}
        required = as_list(schema.get("required")) or []
        content: JSON = {}
        for name, prop in props.items():
            value = prompter.field(name, as_object(prop) or {}, name in required)
            if value is not _Skip:
                content[name] = value
    except _Cancelled:
        return {"action": "cancel"}
    return {"action": "accept", "content": content}


def elicitation_handler(command: str, interactive: bool | None = None) -> Callable[[Any], Any]:
    """The ``elicitation=`` handler of the CLI's client: rules 1-3 on a terminal,
    rule 4 otherwise (``interactive`` None: ``sys.stdin.isatty()``)."""
    tty = sys.stdin.isatty() if interactive is None else interactive

    async def answer(params: Any) -> JSON:
        from mcpkit.core.types import to_wire

        message = str(getattr(params, "message", ""))
        schema: Any = getattr(params, "requested_schema", None)
        wire: Any = to_wire(schema) if schema is not None else {}
        if not tty:
            sys.stderr.write(
                f"mcpkit {command}: the server asks for input ({message!r}) but stdin is "
                "not a terminal; answered 'cancel'\n"
            )
            return {"action": "cancel"}
        import anyio.to_thread

        return await anyio.to_thread.run_sync(ask_form, message, wire, sys.stdin, sys.stderr)

    return answer
