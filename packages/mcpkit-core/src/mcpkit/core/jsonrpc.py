"""JSON-RPC 2.0 framing: message shapes, classification and the standard error codes.

Messages travel as plain ``dict`` objects (parsed JSON); nothing here knows an MCP
method name. Source: JSON-RPC 2.0 (jsonrpc.org/specification) and MCP
``basic/index`` (2025-11-25 and 2026-07-28).

Rules:
1. A request has ``jsonrpc == "2.0"``, a string ``method``, an ``id`` that is a string or
   an integer (never null, never a bool or float), and optional ``params`` that is an
   object (MCP never uses positional params, so an array is refused with -32602).
2. A notification is a request without ``id``. A response has ``id`` plus exactly one of
   ``result`` (an object) or ``error`` (an object with integer ``code`` and string
   ``message``).
3. Anything else is invalid: -32600, echoing the id when one could be read, otherwise
   ``id: null``. Bytes that are not JSON are -32700 with ``id: null``.
4. Error codes are integers. The codes defined here are the JSON-RPC standard ones and the
   MCP ones; features raise :class:`JSONRPCError` with them.
5. On the wire JSON is strict (RFC 8259): :func:`loads` refuses ``NaN``/``Infinity``,
   invalid UTF-8 and lone surrogates, and nesting beyond a depth limit
   (:mod:`mcpkit.core.limits`); :func:`dumps` writes non-finite floats as ``null``, and
   a response whose result is not encodable as the -32603 error response for its id,
   so a peer always gets its one answer.
6. Two codecs, one verdict. pydantic-core (jiter) is the reference parser: it keeps
   integers exact at any size and reads long texts fastest. orjson writes every
   message and reads short ones (up to :data:`ORJSON_MAX_BYTES`), and it imports in a
   third of the time, so a stdio server's cold start needs neither pydantic nor
   pydantic-core (issue 8). A short text orjson refuses, or in which a run of 19
   digits could be an integer beyond 64 bits (which orjson would read as a float), is
   read by pydantic-core instead, so every input gets exactly the value or the
   ``... at line L column C`` error pydantic-core gives (checked by a differential test).
7. What orjson does not encode natively (big integers, non-string keys, sets, bytes,
   pydantic models...) or encodes differently (datetimes, dataclasses) is encoded by
   pydantic-core exactly as before, imported on first need; for plain JSON both write
   the same bytes (compact, UTF-8 kept as is, shortest float repr).
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal

import orjson

from mcpkit.core.limits import DEFAULT_MAX_DEPTH, check_depth
from mcpkit.core.shapes import JSON, as_list, as_object

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND_LEGACY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "Classified",
    "JSONRPCError",
    "MessageKind",
    "RequestId",
    "classify",
    "dump_line",
    "dumps",
    "error_message",
    "loads",
    "notification_message",
    "request_message",
    "result_message",
]

RequestId = str | int
"""A JSON-RPC id as MCP allows it: a string or an integer."""

logger = logging.getLogger("mcpkit.jsonrpc")


PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND_LEGACY: Final = -32002
"""Resource not found in the handshake era (2025-11-25 and earlier)."""
URL_ELICITATION_REQUIRED: Final = -32042
"""2025-11-25 only: the request needs a URL-mode elicitation first."""
HEADER_MISMATCH: Final = -32020
"""2026-07-28: HTTP routing headers disagree with the body (HTTP 400)."""
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""2026-07-28: the request needs a client capability it did not declare (HTTP 400)."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""2026-07-28: the requested protocol version is not served (HTTP 400)."""


class JSONRPCError(Exception):
    """An error that becomes a JSON-RPC error response.

    ``code`` is an integer JSON-RPC code (see the module constants), ``message`` a short
    human-readable sentence naming the field, value and rule, ``data`` any JSON value.
    Raise it from a handler to answer the request with exactly this error.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> JSON:
        """The ``error`` member of a response: ``{"code", "message", "data"?}``."""
        err: JSON = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def __repr__(self) -> str:
        return f"JSONRPCError({self.code}, {self.message!r})"


ORJSON_MAX_BYTES: Final = 1024
"""Texts up to this long are read by orjson, longer ones by pydantic-core (rule 6)."""
_CLASSES: Final = bytes(48 if 48 <= b <= 57 else 91 if b in (91, 123) else 32 for b in range(256))
"""Each byte's class for the checks on a short text: a digit becomes ``0``, an opening
bracket ``[``, anything else a space; one ``translate`` serves rule 6 and the depth
pre-check (:mod:`mcpkit.core.limits` rule 2)."""
_LONG_RUN: Final = b"0" * 19
"""An integer beyond 64 bits has at least 19 digits (rule 6)."""


def loads(data: bytes | bytearray | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse strict JSON (rules 5, 6). Raises ``ValueError`` on malformed input, invalid
    UTF-8, ``NaN``/``Infinity`` and nesting deeper than ``max_depth``
    (:mod:`mcpkit.core.limits`)."""
    if len(data) > ORJSON_MAX_BYTES:
        value = _reference_loads(data)
        check_depth(value, max_depth, data)
        return value
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    classes = raw.translate(_CLASSES)
    if _LONG_RUN in classes:
        value = _reference_loads(data)
    else:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            value = _reference_loads(data)
    if len(raw) > 2 * max_depth and classes.count(b"[") > max_depth:
        check_depth(value, max_depth)
    return value


def _reference_loads(data: bytes | bytearray | str) -> Any:
    """Rule 6: pydantic-core's reading of ``data`` (its value, or its ``ValueError``)."""
    from pydantic_core import from_json

    return from_json(data, cache_strings="keys", allow_inf_nan=False)


_PASSTHROUGH: Final = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
"""Datetimes (orjson writes UTC as ``+00:00``, pydantic-core as ``Z``) and dataclasses
are left to pydantic-core, so their encoding stays what it was (rule 7)."""


def _to_json(obj: Any) -> bytes:
    """orjson, or pydantic-core for what orjson does not encode (rule 7)."""
    try:
        return orjson.dumps(obj, option=_PASSTHROUGH)
    except TypeError:
        from pydantic_core import to_json

        return to_json(obj, inf_nan_mode="null")


def dumps(obj: Any) -> bytes:
    """Serialise a JSON value to compact UTF-8 bytes (non-ASCII kept as is); a float
    ``NaN`` or infinity becomes ``null``, as JSON has neither.

    Rule 5: a response (or batch of them) whose ``result`` cannot be encoded is written
    as a -32603 error response for the same id instead; anything else that cannot be
    encoded raises ``ValueError``.
    """
    try:
        return _to_json(obj)
    except ValueError:
        fixed = _encodable_replies(obj)
        if fixed is None:
            raise
        return _to_json(fixed)


def dump_line(obj: Any) -> bytes:
    """:func:`dumps` followed by ``\n`` (one NDJSON line), without copying the text."""
    try:
        return orjson.dumps(obj, option=_PASSTHROUGH | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return dumps(obj) + b"\n"


def _encodable_replies(obj: Any) -> Any:
    """Rule 5: ``obj`` with each unencodable response replaced, or None if it is not a
    response (or batch) at all."""
    batch = as_list(obj)
    if batch is not None:
        items: list[Any] = []
        for item in batch:
            try:
                _to_json(item)
                items.append(item)
            except ValueError:
                fixed = _encodable_replies(item)
                if fixed is None:
                    return None
                items.append(fixed)
        return items
    msg = as_object(obj)
    rid: Any = msg.get("id") if msg is not None else None
    if msg is not None and "result" in msg and _valid_id(rid):
        logger.error("the result for request %r is not JSON-encodable; answered -32603", rid)
        return error_message(
            rid, INTERNAL_ERROR, "Internal error: the result could not be encoded as JSON"
        )
    return None


def request_message(request_id: RequestId, method: str, params: JSON | None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification_message(method: str, params: JSON | None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result_message(request_id: RequestId, result: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(request_id: RequestId | None, code: int, message: str, data: Any = None) -> JSON:
    err: JSON = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


MessageKind = Literal["request", "notification", "response", "invalid"]


class Classified:
    """The verdict on one inbound JSON value.

    ``kind`` is ``"invalid"`` when the value breaks rule 1-3; then ``error`` holds the
    ready-to-send error response (id echoed when readable).
    """

    __slots__ = ("error", "id", "kind", "message", "method", "params")

    def __init__(
        self,
        kind: MessageKind,
        message: JSON | None = None,
        *,
        id: RequestId | None = None,
        method: str = "",
        params: JSON | None = None,
        error: JSON | None = None,
    ) -> None:
        self.kind = kind
        self.message = message
        self.id = id
        self.method = method
        self.params = params
        self.error = error


def _valid_id(value: Any) -> bool:
    return (type(value) is int) or isinstance(value, str)


def _invalid(request_id: Any, why: str, code: int = INVALID_REQUEST) -> Classified:
    rid = request_id if _valid_id(request_id) else None
    return Classified("invalid", error=error_message(rid, code, why))


def classify(obj: Any) -> Classified:
    """Sort one parsed JSON value into request, notification, response or invalid.

    Never raises. An invalid message carries the error response to send for it
    (rule 3); a batch (a list) is reported invalid here, since whether batches are
    allowed depends on the negotiated protocol version (callers split them first).
    """
    msg: JSON = obj  # an annotation, not typing.cast (a call): this runs per message
    if type(msg) is not dict:
        if isinstance(obj, list):
            return _invalid(None, "Invalid Request: batches are not accepted here")
        return _invalid(None, "Invalid Request: a JSON-RPC message must be a JSON object")
    rid = msg.get("id")
    if msg.get("jsonrpc") != "2.0":
        return _invalid(rid, 'Invalid Request: "jsonrpc" must be exactly "2.0"')
    method = msg.get("method")
    if method is not None:
        if not isinstance(method, str):
            return _invalid(rid, 'Invalid Request: "method" must be a string')
        params: JSON | None = msg.get("params")
        if params is not None and type(params) is not dict:
            if "id" in msg and _valid_id(rid):
                return _invalid(rid, 'Invalid params: "params" must be an object', INVALID_PARAMS)
            return _invalid(rid, 'Invalid Request: "params" must be an object')
        if "id" not in msg:
            return Classified("notification", msg, method=method, params=params)
        if not _valid_id(rid):
            return _invalid(None, 'Invalid Request: "id" must be a string or an integer')
        return Classified("request", msg, id=rid, method=method, params=params)
    if "result" in msg or "error" in msg:
        if not _valid_id(rid):
            # A response to nothing we can correlate; the caller drops it.
            return Classified("invalid", msg)
        if ("result" in msg) == ("error" in msg):
            return Classified("invalid", msg)
        if "error" in msg:
            err: JSON = msg["error"]
            if type(err) is not dict or type(err.get("code")) is not int:
                return Classified("invalid", msg)
        elif type(msg["result"]) is not dict:
            return Classified("invalid", msg)
        return Classified("response", msg, id=rid)
    return _invalid(rid, 'Invalid Request: missing "method"')
