"""Parsing the server's results into the typed models, with errors that name the item.

Rules:
1. A result that does not fit its model raises :class:`MalformedResultError` (a
   :class:`~mcpkit.client.errors.InvalidResponseError`, so a ``ClientError``), never a
   bare pydantic ``ValidationError``. Its message names the method, and for an entry of
   a list (``tools[3]``, ``content[0]``) the entry's index and its ``name`` (or ``uri``,
   ``uriTemplate``), then the field and what is wrong with it: ``tools/list: tools[3]
   (name 'save_note'): execution.taskSupport: Input should be 'forbidden', 'optional'
   or 'required' (got 'optinal')``.
2. Listing (``list_tools`` & co., across pages) is all or nothing, as in the
   TypeScript SDK (``Protocol.request`` rejects with the result schema's parse error)
   and the official Python SDK ``mcp`` (``send_request`` validates the whole result):
   one malformed entry fails the call. Unlike them, the entries that did parse are not
   lost: they are :attr:`MalformedResultError.items` (in order, the malformed ones left
   out), so a caller that can live without the broken entry (``mcpkit call`` of
   another tool) goes on with them. docs/client.md says so.
3. Peer data in messages is bounded and escaped: at most :data:`MAX_PROBLEMS` problems
   are shown (then how many more); each name, value and field name at most
   :data:`MAX_SHOWN` characters and each of pydantic's messages (which may quote the
   peer's value) at most :data:`MAX_MESSAGE`, control characters escaped (``\\x1b``).
4. Field paths read as the JSON does: list indexes in brackets (``icons[0].theme``), and
   the union members pydantic names in its paths (``image``, ``blob``, validator names)
   left out (``contents[0]: blob``, not ``blob.blob``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit.client._json import as_list, as_object
from mcpkit.client.errors import InvalidResponseError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError
    from pydantic_core import ErrorDetails

__all__ = [
    "MAX_MESSAGE",
    "MAX_PROBLEMS",
    "MAX_SHOWN",
    "MalformedResultError",
    "parse_items",
    "parse_result",
]

M = TypeVar("M", bound="BaseModel")
MAX_PROBLEMS = 5
MAX_SHOWN = 80
MAX_MESSAGE = 300
_IDENTITIES = ("name", "uri", "uriTemplate")


class MalformedResultError(InvalidResponseError):
    """A server's result that does not fit the spec's shape (rule 1). ``method``: the
    request method; ``problems``: one line per malformed field; ``items``: for a list,
    the entries that parsed (rule 2), else empty."""

    def __init__(self, method: str, problems: Sequence[str], items: Sequence[Any] = ()) -> None:
        shown = list(problems[:MAX_PROBLEMS])
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"and {len(problems) - MAX_PROBLEMS} more")
        super().__init__(f"{method}: the server sent a malformed result: {'; '.join(shown)}")
        self.method = method
        self.problems = list(problems)
        self.items = list(items)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short(value: Any) -> str:
    return _cut(repr(value), MAX_SHOWN)


def _escaped(text: str) -> str:
    """``text`` with control and other unprintable characters escaped (rule 3)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _message(err: ErrorDetails) -> str:
    """Pydantic's ``msg`` with the peer's values in it cut, escaped, bounded (rule 3)."""
    msg = err["msg"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    for value in ctx.values():
        if isinstance(value, str) and len(value) > MAX_SHOWN:
            msg = msg.replace(value, _cut(value, MAX_SHOWN))
    return _cut(_escaped(msg), MAX_MESSAGE)


def _path(node: Any, loc: tuple[int | str, ...]) -> str:
    """``loc`` as the JSON reads (rule 4): ``icons[0].theme``; a string part that is
    not a field of the data there (a union member's tag) is left out."""
    out = ""
    for depth, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
            entries = as_list(node)
            node = entries[part] if entries is not None and part < len(entries) else None
            continue
        fields = as_object(node)
        rest = loc[depth + 1 :]
        if fields is not None and rest and not _leads(fields.get(part), rest[0]):
            continue  # a union member's tag: ``image`` in ``image.mimeType``
        name = _cut(_escaped(part), MAX_SHOWN)
        out += f".{name}" if out else name
        node = fields.get(part) if fields is not None else None
    return out


def _entry(data: Any, loc: tuple[int | str, ...]) -> tuple[str, tuple[int | str, ...]]:
    """``("tools[3] (name 'x')", rest of loc)`` for a loc into a list entry, else
    ``("", loc)``."""
    node = data
    for depth, part in enumerate(loc):
        if isinstance(part, int):
            entries = as_list(node)
            if entries is None or part >= len(entries):
                return "", loc
            item = entries[part]
            label = f"{'.'.join(str(p) for p in loc[:depth])}[{part}]"
            fields = as_object(item)
            if fields is not None:
                for key in _IDENTITIES:
                    value = fields.get(key)
                    if isinstance(value, str):
                        label += f" ({key} {_short(value)})"
                        break
            return label, loc[depth + 1 :]
        fields = as_object(node)
        if fields is None:
            return "", loc
        node = fields.get(part)
    return "", loc


def _leads(node: Any, part: int | str) -> bool:
    """Whether ``part`` may step into ``node``: an index into a list, a field of an
    object (present or missing: "Field required")."""
    if isinstance(part, int):
        return as_list(node) is not None
    return as_object(node) is not None


def _problems(exc: ValidationError, data: Any, prefix: tuple[int | str, ...] = ()) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_url=False):
        loc = (*prefix, *err["loc"])
        entry, rest = _entry(data, loc)
        field = _path(_node(data, loc[: len(loc) - len(rest)]), rest) or "the entry"
        got = err.get("input")
        shown = "an object" if isinstance(got, dict) else _short(got)
        where = f"{entry}: {field}" if entry else field
        out.append(f"{where}: {_message(err)} (got {shown})")
    return out


def _node(data: Any, loc: tuple[int | str, ...]) -> Any:
    """The value at ``loc`` in ``data``, or None where it leads nowhere."""
    for part in loc:
        if isinstance(part, int):
            entries = as_list(data)
            data = entries[part] if entries is not None and part < len(entries) else None
        else:
            fields = as_object(data)
            data = fields.get(part) if fields is not None else None
    return data


def parse_result(model: type[M], data: Any, method: str) -> M:
    """``model.model_validate(data)``, or :class:`MalformedResultError` (rule 1)."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise MalformedResultError(method, _problems(exc, data)) from None


def parse_items(model: type[M], items: Sequence[Any], method: str, key: str) -> list[M]:
    """Every entry of a listed ``key`` parsed with ``model``; a malformed one raises
    :class:`MalformedResultError` naming each by index and name, carrying the entries
    that parsed (rule 2)."""
    from pydantic import ValidationError

    parsed: list[M] = []
    problems: list[str] = []
    whole = {key: list(items)}
    for index, item in enumerate(items):
        try:
            parsed.append(model.model_validate(item))
        except ValidationError as exc:
            problems.extend(_problems(exc, whole, (key, index)))
    if problems:
        raise MalformedResultError(method, problems, parsed)
    return parsed
