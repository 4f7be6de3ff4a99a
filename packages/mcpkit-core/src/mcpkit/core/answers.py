"""Checks that a client's answer to an input request matches what was asked.

An input request is ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``:
a live server-to-client request on the handshake era, an MRTR ``inputRequests`` entry on
2026-07-28 (SEP-2322). The server checks each answer before a handler sees it; the
client checks what its own handlers produce before sending it. Both use
:func:`answer_problems`, so the two sides agree on what a valid answer is.

Spec: 2025-11-25 / 2026-07-28 ``client/elicitation`` (``ElicitResult``), ``client/sampling``
(``CreateMessageResult``), ``client/roots`` (``ListRootsResult``); 2026-07-28
``basic/patterns/mrtr`` §Error Handling ("Servers SHOULD validate that the data provided
by the client is a valid InputResponses object").

Rules:
1. An answer is a JSON object; otherwise that is its only problem.
2. Its shape is the result type of the request's method, checked with the wire model
   (``ElicitResult``, ``CreateMessageResult``, ``ListRootsResult``). Unknown fields are
   allowed (``_meta``, newer revisions). Other methods (an extension's) are not checked.
3. An accepted form elicitation (``action: "accept"``, mode absent or ``"form"``) has
   ``content`` that satisfies the request's ``requestedSchema`` with JSON Schema
   (:mod:`mcpkit.core.jsonschema`); absent ``content`` is checked as ``{}``, so a
   required field is reported missing. ``decline``/``cancel`` and URL mode carry no
   content to check.
4. When the schema came from the peer (``schema_from_peer=True``: a client checking its
   own answer against a server's form), only the spec's form vocabulary is enforced:
   ``pattern`` and ``patternProperties`` are dropped wherever they are (also nested in
   ``anyOf``, ``not``, ``items``, ``propertyNames``, ``$defs``), since a peer-chosen
   regular expression could take unbounded time, and the elicitation spec defines
   neither.
5. What the wire model cannot see is checked against the request too: each root's
   ``uri`` is a ``file://`` URI (``client/roots`` §Root: "MUST be a file:// URI"); a
   sampling answer holds ``tool_use`` content only when the request offered tools,
   did not set ``toolChoice.mode`` to ``"none"``, and names one of the offered tools
   (``client/sampling`` §Tool Use, §Tool Choice Modes).
6. Problems are at most ``limit`` readable messages naming the JSON path of each bad
   value (``content.name: 5 is not of type 'string'``), each at most
   :data:`~mcpkit.core.jsonschema.MESSAGE_CHARS` characters (a quoted value is cut, so
   an error about a huge answer stays small); an empty list means valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.core.shapes import JSON, as_list, as_object

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

__all__ = ["INPUT_METHODS", "answer_problems"]

INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
"""The methods whose answers are checked (rule 2)."""
_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    for kind, name in _JSON_TYPES.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _model(method: str) -> type[BaseModel] | None:
    from mcpkit.core.types import CreateMessageResult, ElicitResult, ListRootsResult

    return {
        "elicitation/create": ElicitResult,
        "sampling/createMessage": CreateMessageResult,
        "roots/list": ListRootsResult,
    }.get(method)


def _model_problems(exc: ValidationError, limit: int) -> list[str]:
    from mcpkit.core.jsonschema import clip

    out: list[str] = []
    for err in exc.errors(include_url=False)[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        if err["type"] == "missing":
            out.append(clip(f"{where}: required field is missing"))
        else:
            out.append(clip(f"{where}: {err['msg']} (got {_json_type(err.get('input'))})"))
    return out


def _root_problems(answer: JSON, limit: int) -> list[str]:
    """Rule 5: every root is a ``file://`` URI (the model has checked the shape)."""
    from mcpkit.core.jsonschema import clip

    out: list[str] = []
    for i, root in enumerate(as_list(answer["roots"]) or []):
        uri = str((as_object(root) or {}).get("uri", ""))
        if uri[:7].lower() != "file://":
            out.append(clip(f"roots.{i}.uri: {uri!r} is not a file:// URI"))
            if len(out) >= limit:
                break
    return out


def _tool_use_problems(params: Mapping[str, Any], answer: JSON, limit: int) -> list[str]:
    """Rule 5: ``tool_use`` content only where the request allowed it."""
    from mcpkit.core.jsonschema import clip

    content = answer["content"]
    blocks = [as_object(b) or {} for b in as_list(content) or [content]]
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    if not uses:
        return []
    offered = [as_object(t) or {} for t in as_list(params.get("tools")) or []]
    if not offered:
        return ["content: tool_use, but the request offered no tools"]
    if (as_object(params.get("toolChoice")) or {}).get("mode") == "none":
        return ['content: tool_use, but the request set toolChoice.mode "none"']
    names = {t.get("name") for t in offered}
    out: list[str] = []
    for use in uses:
        if use.get("name") not in names:
            out.append(clip(f"content: tool_use of {use.get('name')!r}, a tool not offered"))
            if len(out) >= limit:
                break
    return out


_REGEX_KEYWORDS = frozenset({"pattern", "patternProperties"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "required"})


def _peer_schema(schema: Any) -> Any:
    """Rule 4: the schema without regular expressions (``pattern``,
    ``patternProperties``) at any depth: in properties, but also under ``anyOf``,
    ``not``, ``items``, ``propertyNames``, ``$defs``... A map of property names
    (``properties``) keeps its names, whatever they are; data (``enum``, ``const``...)
    is kept as is."""
    items = as_list(schema)
    if items is not None:
        return [_peer_schema(item) for item in items]
    obj = as_object(schema)
    if obj is None:
        return schema
    out: JSON = {}
    for key, value in obj.items():
        if key in _REGEX_KEYWORDS:
            continue
        named = as_object(value) if key in _SCHEMA_MAPS else None
        if named is not None:
            out[key] = {name: _peer_schema(sub) for name, sub in named.items()}
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = _peer_schema(value)
    return out


def answer_problems(
    method: str,
    params: Mapping[str, Any] | None,
    answer: Any,
    *,
    schema_from_peer: bool = False,
    limit: int = 10,
) -> list[str]:
    """What is wrong with ``answer`` as the result of ``method`` called with ``params``
    (rules 1-6); an empty list when it is valid.

    ``params`` are the request's params (for elicitation, ``mode`` and
    ``requestedSchema``). Raises :class:`mcpkit.core.jsonschema.SchemaError` when the
    requested schema itself is unusable.
    """
    if method not in INPUT_METHODS:
        return []
    obj = as_object(answer)
    if obj is None:
        return [f"(root): the answer must be an object (got {_json_type(answer)})"]
    from pydantic import ValidationError

    model = _model(method)
    assert model is not None
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        return _model_problems(exc, limit)
    p = params or {}
    if method == "roots/list":
        return _root_problems(obj, limit)
    if method == "sampling/createMessage":
        return _tool_use_problems(p, obj, limit)
    if obj.get("action") != "accept":
        return []
    schema = as_object(p.get("requestedSchema"))
    if p.get("mode", "form") != "form" or schema is None:
        return []
    from mcpkit.core.jsonschema import validation_errors

    content = obj.get("content")
    found = validation_errors(
        _peer_schema(schema) if schema_from_peer else schema,
        {} if content is None else content,
        limit=limit,
    )
    return [f"content.{m}" if not m.startswith("(root)") else f"content{m[6:]}" for m in found]
