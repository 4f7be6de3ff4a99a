"""The 2026-07-28 per-request envelope: is a request modern, and what it declares.

Transports read it first (to route the request and to order their own header
checks), and the era front end (:mod:`mcpkit.server.frontend`) takes what they read,
so a request enters this module once and the front end once.

Rules (2026-07-28 ``basic/index``, ``basic/versioning``; the front end's rules 1-2):
1. A request is modern when its ``_meta`` carries
   ``io.modelcontextprotocol/protocolVersion`` or ``.../clientCapabilities``.
2. A missing or malformed required ``_meta`` key is -32602; a version this server
   does not serve is -32022 with ``data.supported``/``data.requested``; a log level
   that is not one of the spec's eight is -32602. Capabilities come from this request
   alone.
"""

from __future__ import annotations

from typing import Any

from mcpkit.core import meta as M
from mcpkit.core.jsonrpc import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, JSONRPCError
from mcpkit.core.shapes import JSON, as_object, as_str
from mcpkit.core.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS
from mcpkit.server.context import LOG_LEVELS

__all__ = ["Envelope", "looks_modern", "read_envelope"]

Envelope = tuple[str, JSON, "JSON | None", "str | None"]
"""``(protocol version, client capabilities, client info, log level)`` of a request."""


def looks_modern(params: JSON | None) -> bool:
    """Rule 1: does this request carry the 2026-07-28 per-request envelope?"""
    if not params:
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and (M.PROTOCOL_VERSION in meta or M.CLIENT_CAPABILITIES in meta)


def read_envelope(params: JSON | None) -> Envelope:
    """Rule 2: the request's ``_meta`` envelope; raises -32602 or -32022. Transports
    may call it first (to order their own header checks) and pass the result on."""
    # Annotations, not typing.cast (a call each): this runs on every modern request.
    found: Any = params.get("_meta") if params else None
    meta: JSON = found  # None or any value: checked next
    if type(meta) is dict:  # the common, well-formed envelope without a log level
        version: Any = meta.get(M.PROTOCOL_VERSION)
        caps: Any = meta.get(M.CLIENT_CAPABILITIES)
        if (
            type(version) is str
            and version in MODERN_VERSIONS
            and caps.__class__ is dict  # not type(): that would narrow caps to an unknown dict
            and M.LOG_LEVEL not in meta
        ):
            info: Any = meta.get(M.CLIENT_INFO)
            return version, caps, info if info.__class__ is dict else None, None
    return _checked_envelope(params)


def _checked_envelope(params: JSON | None) -> Envelope:
    """:func:`read_envelope` for every other envelope: each field checked in turn."""
    meta = as_object((params or {}).get("_meta"))
    if meta is None:
        raise JSONRPCError(
            INVALID_PARAMS,
            "Invalid params: missing _meta with "
            f"{M.PROTOCOL_VERSION!r} and {M.CLIENT_CAPABILITIES!r} (2026-07-28)",
        )
    version = as_str(meta.get(M.PROTOCOL_VERSION))
    if version is None:
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: _meta[{M.PROTOCOL_VERSION!r}] must be a string"
        )
    if version not in MODERN_VERSIONS:
        raise JSONRPCError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {version!r} "
            f"(supported: {', '.join(SUPPORTED_VERSIONS)})",
            {"supported": list(SUPPORTED_VERSIONS), "requested": version},
        )
    caps = as_object(meta.get(M.CLIENT_CAPABILITIES))
    if caps is None:
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: _meta[{M.CLIENT_CAPABILITIES!r}] must be an object"
        )
    raw_level = meta.get(M.LOG_LEVEL)
    level = as_str(raw_level)
    if raw_level is not None and (level is None or level not in LOG_LEVELS):
        raise JSONRPCError(
            INVALID_PARAMS,
            f"Invalid params: _meta[{M.LOG_LEVEL!r}] {raw_level!r} is not a log level",
        )
    return version, caps, as_object(meta.get(M.CLIENT_INFO)), level
