"""Resources and resource templates (spec ``server/resources``).

Rules:
1. A static resource is matched by exact URI; otherwise templates are tried in
   registration order (RFC 6570 matching, see :mod:`mcpkit.server.uritemplates`).
2. An unknown URI raises :class:`ResourceNotFoundError`: -32002 in the handshake era,
   -32602 with ``data.uri`` on 2026-07-28 (SEP-2164); the dispatcher picks the code.
3. A ``str`` return is one text content; ``bytes`` one base64 ``blob``; a dict with
   ``contents`` is the whole result; a list holds content dicts (``uri`` filled in when
   missing). ``mimeType`` defaults to the one registered.
4. A URI a client asks to be kept (a subscription) is at most ``Limits.max_uri_bytes``
   UTF-8 bytes (:func:`check_uri_length`, -32602 beyond).
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, JSONRPCError
from mcpkit.core.shapes import as_list, as_object
from mcpkit.server.typed import Binding, bind, call_bound, is_pydantic_model
from mcpkit.server.uritemplates import TemplateMatcher

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = [
    "Resource",
    "ResourceNotFoundError",
    "ResourceTemplate",
    "check_uri_length",
    "contents_of",
]

JSON = dict[str, Any]


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
    ) -> None:
        self.uri = uri
        self.mime_type = mime_type
        self.binding: Binding = bind(fn, name=name, structured_output=False)
        desc = description if description is not None else inspect.getdoc(fn)
        self.definition = _definition(
            "uri", uri, name, title, desc, mime_type, size, annotations, icons, meta
        )

    async def read(self, ctx: Context, uri: str) -> JSON:
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
    ) -> None:
        self.matcher = TemplateMatcher(uri_template)
        self.mime_type = mime_type
        self.binding: Binding = bind(fn, name=name, structured_output=False)
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

    async def read(self, ctx: Context, uri: str, variables: Mapping[str, Any]) -> JSON:
        accepted = set(self.binding.field_names)
        kwargs = self.binding.validate({k: v for k, v in variables.items() if k in accepted})
        value = await call_bound(self.binding, kwargs, ctx)
        return contents_of(value, uri, self.mime_type)


def _one(item: Any, uri: str, mime_type: str | None) -> JSON:
    if is_pydantic_model(item):
        item = item.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(item, dict):
        d: JSON = dict(item)  # pyright: ignore[reportUnknownArgumentType]
        d.setdefault("uri", uri)
        if mime_type is not None:
            d.setdefault("mimeType", mime_type)
        return d
    d = {"uri": uri}
    if mime_type is not None:
        d["mimeType"] = mime_type
    if isinstance(item, (bytes, bytearray, memoryview)):
        d["blob"] = base64.b64encode(bytes(cast(bytes, item))).decode("ascii")
    else:
        d["text"] = item if isinstance(item, str) else str(item)
    return d


def contents_of(value: Any, uri: str, mime_type: str | None) -> JSON:
    """A ``ReadResourceResult`` dict for a reader's return value (rule 3)."""
    obj = as_object(value)
    if obj is not None and "contents" in obj:
        return obj
    items: list[Any] = as_list(value) or [value]
    return {"contents": [_one(i, uri, mime_type) for i in items]}
