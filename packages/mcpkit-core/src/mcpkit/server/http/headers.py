"""Request headers of the MCP endpoint, read once, and the 2026-07-28 routing headers.

Sources: MCP 2025-11-25 ``basic/transports`` (``Mcp-Session-Id``,
``MCP-Protocol-Version``, ``Last-Event-ID``); 2026-07-28 ``transports/streamable-http``
§Request Metadata (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``, Value Encoding,
Server Validation); RFC 9110 §5.1 (field names are case-insensitive), §5.5 (values).

Rules:
1. Header names compare case-insensitively; values are case-sensitive and compared
   after trimming surrounding spaces and tabs (optional whitespace is not content).
2. ``Mcp-Method`` is required on every 2026-07-28 request and must equal ``method``;
   ``Mcp-Name`` is required on ``tools/call``, ``prompts/get`` (``params.name``) and
   ``resources/read`` (``params.uri``) and must equal that value. Any failure is
   -32020 (HeaderMismatch), HTTP 400.
3. ``Mcp-Name`` and ``Mcp-Param-*`` values may use the sentinel ``=?base64?...?=``
   (case-sensitive markers): the inside must be canonical padded base64 of UTF-8 and is
   decoded before comparing. A value that only starts or only ends like the sentinel is
   a literal. Plain values must be visible ASCII, space or tab.
4. ``x-mcp-header`` tool parameters (reachable through ``properties`` chains only) are
   mirrored as ``Mcp-Param-{name}``: when the argument has a non-null value the header
   is required and must match it (integers and numbers compare numerically, booleans as
   ``true``/``false``, strings exactly); absent or null arguments expect no header.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from mcpkit.core.jsonrpc import HEADER_MISMATCH, JSONRPCError
from mcpkit.core.shapes import JSON

__all__ = [
    "NAME_FIELDS",
    "RequestHeaders",
    "check_param_headers",
    "check_routing_headers",
    "decode_header_value",
    "param_annotations",
    "read_headers",
]


NAME_FIELDS: dict[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
"""Methods whose ``Mcp-Name`` header mirrors a params field (rule 2)."""

_SENTINEL_START = "=?base64?"
_SENTINEL_END = "?="


class RequestHeaders:
    """The headers the endpoint looks at, from one pass over ``scope["headers"]``."""

    __slots__ = (
        "accept",
        "content_type",
        "host",
        "last_event_id",
        "mcp_method",
        "mcp_name",
        "origin",
        "params",
        "protocol_version",
        "session_id",
    )

    def __init__(self) -> None:
        self.accept: str | None = None
        self.content_type: str | None = None
        self.host: str | None = None
        self.origin: str | None = None
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.last_event_id: str | None = None
        self.mcp_method: str | None = None
        self.mcp_name: str | None = None
        # kind-ok: unbounded-table one request's headers, bounded by the HTTP parser
        self.params: dict[str, str] = {}


_FIELDS = {
    b"accept": "accept",
    b"content-type": "content_type",
    b"host": "host",
    b"origin": "origin",
    b"mcp-session-id": "session_id",
    b"mcp-protocol-version": "protocol_version",
    b"last-event-id": "last_event_id",
    b"mcp-method": "mcp_method",
    b"mcp-name": "mcp_name",
}


def read_headers(raw: list[tuple[bytes, bytes]]) -> RequestHeaders:
    """Collect the interesting headers (rule 1). Repeated headers are joined with
    ``", "`` as RFC 9110 §5.3 allows, which makes a duplicated routing header mismatch."""
    h = RequestHeaders()
    fields = _FIELDS
    for name, value in raw:
        # ASGI servers lower-case header names; a name that is not is lowered here
        attr = fields.get(name)
        if attr is None:
            key = name.lower()
            attr = fields.get(key)
            if attr is None:
                if key.startswith(b"mcp-param-"):
                    pname = key[10:].decode("latin-1")
                    text = value.decode("latin-1")
                    old_param = h.params.get(pname)
                    h.params[pname] = text if old_param is None else f"{old_param}, {text}"
                continue
        text = value.decode("latin-1")
        old = getattr(h, attr)
        setattr(h, attr, text if old is None else f"{old}, {text}")
    return h


def _mismatch(message: str) -> JSONRPCError:
    return JSONRPCError(HEADER_MISMATCH, f"Header mismatch: {message}")


def decode_header_value(header: str, raw: str) -> str:
    """Trim and decode one ``Mcp-Name``/``Mcp-Param-*`` value (rules 1, 3); raises
    -32020 for invalid characters or a malformed base64 sentinel."""
    value = raw.strip(" \t")
    if any(not (" " <= ch <= "~" or ch == "\t") for ch in value):
        raise _mismatch(f"{header} header contains characters outside visible ASCII")
    if (
        value.startswith(_SENTINEL_START)
        and value.endswith(_SENTINEL_END)
        and len(value) >= len(_SENTINEL_START) + len(_SENTINEL_END)
    ):
        inner = value[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            data = base64.b64decode(inner, validate=True)
            if base64.b64encode(data).decode("ascii") != inner:
                raise ValueError("not canonical base64")
            return data.decode("utf-8")
        except (binascii.Error, ValueError):
            raise _mismatch(
                f"{header} header {value!r} is not valid =?base64?...?= encoding "
                "(padded base64 of UTF-8 text)"
            ) from None
    return value


def check_routing_headers(
    headers: RequestHeaders,
    method: str,
    params: JSON,
    name_fields: Mapping[str, str] = NAME_FIELDS,
) -> None:
    """Validate ``Mcp-Method`` and ``Mcp-Name`` against the body (rule 2)."""
    if headers.mcp_method is None:
        raise _mismatch(f"the Mcp-Method header is required (expected {method!r})")
    sent = headers.mcp_method.strip(" \t")
    if sent != method:
        raise _mismatch(f"Mcp-Method header value {sent!r} does not match body method {method!r}")
    field = name_fields.get(method)
    if field is None:
        return
    body_value = params.get(field)
    if headers.mcp_name is None:
        raise _mismatch(f"the Mcp-Name header is required for {method} (params.{field})")
    name = decode_header_value("Mcp-Name", headers.mcp_name)
    if not isinstance(body_value, str) or name != body_value:
        raise _mismatch(
            f"Mcp-Name header value {name!r} does not match body params.{field} {body_value!r}"
        )


def param_annotations(schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """``(header name lower-cased, property path)`` for every ``x-mcp-header`` property
    reachable from the schema root through ``properties`` only (rule 4)."""
    found: list[tuple[str, tuple[str, ...]]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        props = cast(JSON, node).get("properties")
        if not isinstance(props, dict):
            return
        for key, sub in cast(JSON, props).items():
            if not isinstance(sub, dict):
                continue
            here = (*path, key)
            name = cast(JSON, sub).get("x-mcp-header")
            if isinstance(name, str) and name:
                found.append((name.lower(), here))
            walk(sub, here)

    walk(schema, ())
    return found


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        if not isinstance(node, dict):
            return None
        node = cast(JSON, node).get(key)
    return node


def _matches(header: str, value: Any) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return Decimal(header) == Decimal(str(value))
        except InvalidOperation:
            return False
    if isinstance(value, str):
        return header == value
    return False


def check_param_headers(
    headers: RequestHeaders,
    annotations: list[tuple[str, tuple[str, ...]]],
    arguments: Any,
) -> None:
    """Validate ``Mcp-Param-*`` headers of a ``tools/call`` against its arguments (rule 4)."""
    for lname, path in annotations:
        value = _value_at(arguments, path)
        if value is None:
            continue
        raw = headers.params.get(lname)
        label = f"Mcp-Param-{lname}"
        if raw is None:
            raise _mismatch(
                f"the {label} header is required: arguments.{'.'.join(path)} is set "
                "and its schema has x-mcp-header"
            )
        decoded = decode_header_value(label, raw)
        if not _matches(decoded, value):
            raise _mismatch(
                f"{label} header value {decoded!r} does not match arguments."
                f"{'.'.join(path)} {value!r}"
            )
