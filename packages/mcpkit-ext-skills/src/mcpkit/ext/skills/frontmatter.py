"""``SKILL.md`` frontmatter: the YAML block read into a JSON object.

Spec: ``skills.mdx`` §Skill Format (YAML frontmatter with ``name`` and ``description``),
§Frontmatter ("rendered verbatim as a JSON object"), §Frontmatter Verification.

The YAML-to-JSON mapping is the YAML 1.2 core schema, the one JavaScript's ``js-yaml``
(the conformance suite's parser) and YAML 1.2 parsers share; PyYAML's own YAML 1.1
resolver is not used.

Rules:
1. A ``SKILL.md`` is UTF-8 (a leading BOM is dropped). Its first line is ``---``; the
   frontmatter runs to the next line that is ``---`` (trailing blanks allowed). Anything
   else is a :class:`FrontmatterError`.
2. Plain scalars resolve by the YAML 1.2 core schema: ``null``/``Null``/``NULL``/``~``/
   empty are null; ``true``/``True``/``TRUE``/``false``/``False``/``FALSE`` booleans;
   decimal, ``0o`` octal and ``0x`` hex integers; decimal floats (``1.10`` is the number
   1.1; ``0777`` the decimal 777). Everything else is a string as written: ``yes``,
   ``on``, ``2026-01-01`` and ``1_000`` stay strings. ``.inf`` and ``.nan`` have no
   JSON form and stay the strings written.
3. The frontmatter is a mapping whose keys are strings. An explicit tag that makes a
   value JSON cannot carry (``!!timestamp``, ``!!binary``, ``!!set``), a non-string key,
   a duplicate key, an anchor/alias (no expansion bombs) or a frontmatter block over
   :data:`MAX_FRONTMATTER_BYTES` is a :class:`FrontmatterError`.
4. An integer too long for Python to convert to or from decimal
   (``sys.get_int_max_str_digits``, 4,300 digits by default) is a
   :class:`FrontmatterError`, never a bare ``ValueError``.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import yaml
from yaml.nodes import MappingNode, ScalarNode

from mcpkit.core.shapes import JSON

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "FrontmatterError",
    "parse_frontmatter",
    "same_json",
    "split_frontmatter",
]

MAX_FRONTMATTER_BYTES = 64 * 1024
"""The largest frontmatter block read (rule 3)."""


class FrontmatterError(ValueError):
    """A ``SKILL.md`` whose frontmatter cannot be read as a JSON object (rules 1-3)."""


_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


class _CoreLoader(yaml.SafeLoader):
    """PyYAML's safe loader with rule 2's resolvers in place of YAML 1.1's."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012  (PyYAML's class table)

    def compose_node(self, parent: Any, index: Any) -> Any:
        me: Any = self
        event: Any = me.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise FrontmatterError("frontmatter: anchors and aliases are not accepted")
        compose: Any = yaml.SafeLoader.compose_node
        return compose(self, parent, index)


_LOADER: Any = _CoreLoader
"""The loader class, untyped: PyYAML's class-level registration methods have no stubs."""


def _resolve(pattern: re.Pattern[str], tag: str, first: str) -> None:
    _LOADER.add_implicit_resolver(tag, pattern, list(first))


_resolve(_NULL, "tag:yaml.org,2002:null", "~nN")
_LOADER.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, [""])
_resolve(_BOOL, "tag:yaml.org,2002:bool", "tTfF")
_resolve(_INT10, "tag:yaml.org,2002:int", "-+0123456789")
_resolve(_INT8, "tag:yaml.org,2002:int", "0")
_resolve(_INT16, "tag:yaml.org,2002:int", "0")
_resolve(_FLOAT, "tag:yaml.org,2002:float", "-+.0123456789")


def _int(loader: _CoreLoader, node: ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    try:
        if _INT8.match(text):
            value = int(text[2:], 8)
        elif _INT16.match(text):
            value = int(text[2:], 16)
        elif _INT10.match(text):
            value = int(text, 10)
        else:
            raise FrontmatterError(f"frontmatter: {text!r} is not a YAML 1.2 integer")
        str(value)  # rule 4: a JSON number has a decimal form
    except ValueError as exc:
        if isinstance(exc, FrontmatterError):
            raise
        raise FrontmatterError(
            f"frontmatter: an integer of {len(text)} digits is over Python's limit"
        ) from None
    return value


def _float(loader: _CoreLoader, node: ScalarNode) -> float | str:
    text = str(loader.construct_scalar(node))
    try:
        value = float(text)
    except ValueError:
        return text  # .inf, .nan (explicitly tagged): no JSON form (rule 2)
    return value if math.isfinite(value) else text


def _bool(loader: _CoreLoader, node: ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


def _mapping(typed: _CoreLoader, node: MappingNode) -> dict[str, Any]:
    out: dict[str, Any] = {}
    loader: Any = typed
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key: Any = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise FrontmatterError(f"frontmatter: key {key!r} is not a string")
        if key in out:
            raise FrontmatterError(f"frontmatter: key {key!r} appears twice")
        out[key] = loader.construct_object(value_node, deep=True)
    return out


def _refused(loader: _CoreLoader, node: Any) -> Any:
    raise FrontmatterError(f"frontmatter: the tag {node.tag} has no JSON form")


_LOADER.add_constructor("tag:yaml.org,2002:int", _int)
_LOADER.add_constructor("tag:yaml.org,2002:float", _float)
_LOADER.add_constructor("tag:yaml.org,2002:bool", _bool)
_LOADER.add_constructor("tag:yaml.org,2002:map", _mapping)
for _tag in ("timestamp", "binary", "set", "omap", "pairs"):
    _LOADER.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


def split_frontmatter(text: str) -> tuple[str, str]:
    """Rule 1: ``(frontmatter YAML, body)`` of a ``SKILL.md``'s text."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise FrontmatterError("SKILL.md must begin with a '---' line opening its frontmatter")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip(" \t") == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise FrontmatterError("SKILL.md frontmatter has no closing '---' line")


def parse_frontmatter(data: bytes | str) -> JSON:
    """The frontmatter of a ``SKILL.md`` (its bytes or text) as a JSON object (rules
    1-3). Raises :class:`FrontmatterError`."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrontmatterError(f"SKILL.md is not UTF-8: {exc}") from None
    else:
        text = data
    block, _ = split_frontmatter(text)
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"SKILL.md frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
    try:
        value: Any = yaml.load(block, Loader=_CoreLoader)
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"SKILL.md frontmatter is not valid YAML: {exc}") from None
    if not isinstance(value, dict):
        raise FrontmatterError("SKILL.md frontmatter must be a YAML mapping")
    return cast(JSON, value)


def same_json(a: object, b: object) -> bool:
    """JSON equality, for the field-by-field frontmatter comparison: ``1`` and ``1.0`` are
    one JSON number, but ``1``, ``"1"`` and ``true`` differ (Python's ``==`` says
    ``True == 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        x = cast(dict[str, Any], a)
        y = cast(dict[str, Any], b)
        return x.keys() == y.keys() and all(same_json(x[k], y[k]) for k in x)
    if isinstance(a, list) and isinstance(b, list):
        p = cast(list[Any], a)
        q = cast(list[Any], b)
        return len(p) == len(q) and all(same_json(i, j) for i, j in zip(p, q, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(cast(object, a)) is type(b) and a == b
