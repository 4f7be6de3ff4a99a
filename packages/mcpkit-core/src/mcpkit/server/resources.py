"""Resources and resource templates (spec ``server/resources``).

Rules:
1. A static resource is matched by exact URI; otherwise templates are tried in
   registration order (RFC 6570 matching, see :mod:`mcpkit.server.uritemplates`).
2. An unknown URI raises :class:`ResourceNotFoundError`: -32002 in the handshake era,
   -32602 with ``data.uri`` on 2026-07-28 (SEP-2164); the dispatcher picks the code.
3. A ``str`` return is one text content; ``bytes`` one base64 ``blob``; a content
   helper (:mod:`mcpkit.server.content`) its own blob or text. A pydantic model, a
   dataclass, a mapping or a list becomes one entry whose ``text`` is its JSON, with
   ``mimeType`` ``application/json`` (before, a dict's fields were merged into the entry
   and it had no ``text``). Already-shaped results pass as they are: a dict with a
   ``contents`` list is the whole result, and a contents entry (``uri`` plus ``text`` or
   ``blob``), or a list of only such entries, is the contents. ``mimeType`` is the one
   registered when there is one, for every kind of value.
5. A template whose variables fail its function's parameter types is -32602 with the
   validation message (it was an internal error).
4. A URI a client asks to be kept (a subscription) is at most ``Limits.max_uri_bytes``
   UTF-8 bytes (:func:`check_uri_length`, -32602 beyond).
6. At registration, a template's variables and its function's parameters match both
   ways, and a static resource's function needs no argument; else ``TypeError``
   (:mod:`mcpkit.server.agreement` rules 1, 2).
"""

from __future__ import annotations

import base64
import dataclasses
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, JSONRPCError, dumps
from mcpkit.core.shapes import JSON, as_list, as_object
from mcpkit.server.agreement import check_static_resource, check_template
from mcpkit.server.typed import (
    ArgumentError,
    Binding,
    CallContext,
    bind,
    call_bound,
    is_pydantic_model,
)
from mcpkit.server.uritemplates import TemplateMatcher

__all__ = [
    "Resource",
    "ResourceNotFoundError",
    "ResourceOptions",
    "ResourceTemplate",
    "check_uri_length",
    "contents_of",
]


class ResourceOptions(TypedDict, total=False):
    """The options of :meth:`Server.resource <mcpkit.server.app.Server.resource>` and
    ``add_resource``; each becomes the matching definition field."""

    title: str | None
    """``title``: a display name."""
    description: str | None
    """``description`` (default: the function's docstring)."""
    mime_type: str | None
    """``mimeType`` of the definition and of every contents entry read (rule 3)."""
    size: int | None
    """``size`` in bytes (static resources only; ignored for a template)."""
    annotations: Mapping[str, Any] | None
    """``annotations`` (``audience``, ``priority``, ``lastModified``)."""
    icons: Sequence[Mapping[str, Any]] | None
    """``icons``: ``{"src", "mimeType"?, "sizes"?, "theme"?}`` objects."""
    meta: Mapping[str, Any] | None
    """``_meta``."""
    inline: bool
    """Run a sync (``def``) function on the event loop instead of a worker thread:
    only for functions that return at once and never block (no I/O, no sleeping, no
    long computation); it saves the thread hop (:mod:`mcpkit.server.typed` rule 4).
    Ignored for ``async def``."""


class ResourceNotFoundError(JSONRPCError):
    """No resource has this URI (rule 2)."""

    def __init__(self, uri: str) -> None:
        super().__init__(RESOURCE_NOT_FOUND_LEGACY, f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


def check_uri_length(uri: str, max_bytes: int, method: str) -> None:
    """Rule 4: raise -32602 when ``uri`` is longer than ``max_bytes`` UTF-8 bytes."""
    if len(uri) > max_bytes or len(uri.encode("utf-8", "surrogatepass")) > max_bytes:
        raise JSONRPCError(
            INVALID_PARAMS,
            f"{method}: the URI is longer than {max_bytes} bytes (Limits.max_uri_bytes)",
            {"limit": max_bytes},
        )


def _definition(
    kind_key: str,
    value: str,
    name: str,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    annotations: Mapping[str, Any] | None,
    icons: Sequence[Mapping[str, Any]] | None,
    meta: Mapping[str, Any] | None,
) -> JSON:
    d: JSON = {kind_key: value, "name": name}
    if title is not None:
        d["title"] = title
    if description:
        d["description"] = description
    if mime_type is not None:
        d["mimeType"] = mime_type
    if size is not None:
        d["size"] = size
    if annotations:
        d["annotations"] = dict(annotations)
    if icons:
        d["icons"] = [dict(i) for i in icons]
    if meta:
        d["_meta"] = dict(meta)
    return d


class Resource:
    """A static resource: a fixed URI and the function that reads it."""

    __slots__ = ("binding", "definition", "mime_type", "uri")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        uri: str,
        name: str,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.uri = uri
        self.mime_type = mime_type
        self.binding: Binding = bind(fn, name=name, structured_output=False, inline=inline)
        check_static_resource(uri, self.binding)  # rule 6
        desc = description if description is not None else inspect.getdoc(fn)
        self.definition = _definition(
            "uri", uri, name, title, desc, mime_type, size, annotations, icons, meta
        )

    async def read(self, ctx: CallContext, uri: str) -> JSON:
        value = await call_bound(self.binding, {}, ctx)
        return contents_of(value, uri, self.mime_type)


class ResourceTemplate:
    """A parameterised resource: an RFC 6570 template and a function of its variables."""

    __slots__ = ("binding", "definition", "matcher", "mime_type")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        uri_template: str,
        name: str,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.matcher = TemplateMatcher(uri_template)
        self.mime_type = mime_type
        self.binding: Binding = bind(fn, name=name, structured_output=False, inline=inline)
        check_template(self.matcher, self.binding)  # rule 6
        desc = description if description is not None else inspect.getdoc(fn)
        self.definition = _definition(
            "uriTemplate",
            uri_template,
            name,
            title,
            desc,
            mime_type,
            None,
            annotations,
            icons,
            meta,
        )

    async def read(self, ctx: CallContext, uri: str, variables: Mapping[str, Any]) -> JSON:
        accepted = set(self.binding.field_names)
        try:
            kwargs = self.binding.validate({k: v for k, v in variables.items() if k in accepted})
        except ArgumentError as exc:  # rule 5
            raise JSONRPCError(INVALID_PARAMS, f"resources/read {uri!r}: {exc}") from None
        value = await call_bound(self.binding, kwargs, ctx)
        return contents_of(value, uri, self.mime_type)


def _is_contents(item: Any) -> bool:
    """A ``ResourceContents`` object: a ``uri`` string and a ``text`` or ``blob`` string."""
    if not isinstance(item, dict):
        return False
    entry = cast(JSON, item)
    return isinstance(entry.get("uri"), str) and (
        isinstance(entry.get("text"), str) or isinstance(entry.get("blob"), str)
    )


def _entry(value: Any, uri: str, mime_type: str | None) -> JSON:
    """Rule 3: one contents entry for a value that is not already contents."""
    helpers = sys.modules.get("mcpkit.server.content")
    if helpers is not None and isinstance(value, helpers.ContentHelper):
        d: JSON = value.resource_contents(uri)
        if mime_type is not None:
            d["mimeType"] = mime_type
        return d
    d = {"uri": uri}
    if isinstance(value, (bytes, bytearray, memoryview)):
        if mime_type is not None:
            d["mimeType"] = mime_type
        d["blob"] = base64.b64encode(bytes(cast(bytes, value))).decode("ascii")
    elif isinstance(value, str):
        if mime_type is not None:
            d["mimeType"] = mime_type
        d["text"] = value
    elif (
        isinstance(value, (Mapping, list, tuple))
        or is_pydantic_model(value)
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    ):
        from pydantic_core import to_jsonable_python

        data = to_jsonable_python(value, by_alias=True, fallback=str)
        d["mimeType"] = mime_type or "application/json"
        d["text"] = dumps(data).decode("utf-8")
    else:
        if mime_type is not None:
            d["mimeType"] = mime_type
        d["text"] = str(value)
    return d


def _as_contents(item: Any, uri: str, mime_type: str | None) -> JSON | None:
    """``item`` as a contents entry when it already is one (a dict or a
    ``TextResourceContents``/``BlobResourceContents`` model), else None."""
    if is_pydantic_model(item) and type(item).__name__ in _CONTENTS_MODELS:
        item = item.model_dump(by_alias=True, exclude_none=True, mode="json")
    if not _is_contents(item):
        return None
    d: JSON = dict(item)
    if mime_type is not None:
        d.setdefault("mimeType", mime_type)
    return d


_CONTENTS_MODELS = frozenset({"TextResourceContents", "BlobResourceContents"})


def contents_of(value: Any, uri: str, mime_type: str | None) -> JSON:
    """A ``ReadResourceResult`` dict for a reader's return value (rule 3)."""
    obj = as_object(value)
    if obj is not None and isinstance(obj.get("contents"), list):
        return obj
    one = _as_contents(value, uri, mime_type)
    if one is not None:
        return {"contents": [one]}
    items = as_list(value)
    if items:
        entries = [_as_contents(i, uri, mime_type) for i in items]
        if all(e is not None for e in entries):
            return {"contents": entries}
    return {"contents": [_entry(value, uri, mime_type)]}
