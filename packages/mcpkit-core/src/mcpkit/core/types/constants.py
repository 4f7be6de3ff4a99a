"""Protocol constants of the wire model: versions, reserved ``_meta`` keys, result types.

Sources: spec 2026-07-28 ``basic/versioning`` (eras), ``basic/index`` (reserved ``_meta``
keys, ``resultType``), ``server/utilities/caching`` (``cacheScope``).

Rules:
1. This module imports nothing but the standard library and the constant modules
   ``mcpkit.core.versions`` and ``mcpkit.core.meta``; hot-path code may import it without
   paying for pydantic.
2. Values are never restated here: the version strings and ``_meta`` keys come from
   ``mcpkit.core.versions`` / ``mcpkit.core.meta`` and are re-exported under the names
   the wire model uses, so there is exactly one definition of each string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from mcpkit.core import meta as _meta
from mcpkit.core import versions as _versions

__all__ = [
    "CACHE_SCOPE_PRIVATE",
    "CACHE_SCOPE_PUBLIC",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROGRESS_TOKEN",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "META_TRACE_KEYS",
    "MODERN",
    "RESULT_TYPE_COMPLETE",
    "RESULT_TYPE_INPUT_REQUIRED",
    "CacheScope",
    "result_type_of",
]

LATEST_LEGACY: Final = _versions.LATEST_LEGACY_VERSION
"""Newest handshake-era version (``initialize``): ``"2025-11-25"``."""
MODERN: Final = _versions.MODERN_VERSION
"""The stateless revision (per-request ``_meta``): ``"2026-07-28"``."""
LEGACY_VERSIONS: Final = _versions.LEGACY_VERSIONS
"""Handshake-era versions, newest first."""

META_PROGRESS_TOKEN: Final = _meta.PROGRESS_TOKEN
"""Request ``_meta`` key opting the request into ``notifications/progress`` (both eras)."""
META_PROTOCOL_VERSION: Final = _meta.PROTOCOL_VERSION
"""Request ``_meta`` key, required from 2026-07-28: the request's protocol version."""
META_CLIENT_INFO: Final = _meta.CLIENT_INFO
"""Request ``_meta`` key, 2026-07-28, optional: the client's ``Implementation``."""
META_CLIENT_CAPABILITIES: Final = _meta.CLIENT_CAPABILITIES
"""Request ``_meta`` key, required from 2026-07-28: the client's ``ClientCapabilities``."""
META_LOG_LEVEL: Final = _meta.LOG_LEVEL
"""Request ``_meta`` key, 2026-07-28: minimum ``LoggingLevel`` to emit for this request."""
META_SUBSCRIPTION_ID: Final = _meta.SUBSCRIPTION_ID
"""Notification/result ``_meta`` key, 2026-07-28: id of the ``subscriptions/listen`` request."""
META_SERVER_INFO: Final = _meta.SERVER_INFO
"""Result ``_meta`` key, 2026-07-28, optional: the server's ``Implementation``."""
META_TRACE_KEYS: Final = _meta.TRACE_KEYS
"""Unprefixed OpenTelemetry ``_meta`` keys (SEP-414): traceparent, tracestate, baggage."""

RESULT_TYPE_COMPLETE: Final = "complete"
"""``resultType`` of an ordinary (final) result."""
RESULT_TYPE_INPUT_REQUIRED: Final = "input_required"
"""``resultType`` of an MRTR interim result (``InputRequiredResult``, SEP-2322)."""

CacheScope = Literal["public", "private"]
"""Who may cache a cacheable result (SEP-2549): anyone, or one authorization context."""
CACHE_SCOPE_PUBLIC: Final = "public"
CACHE_SCOPE_PRIVATE: Final = "private"


def result_type_of(result: Mapping[str, Any]) -> str:
    """The ``resultType`` of a raw result object, ``"complete"`` when the key is absent.

    Spec 2026-07-28 ``basic/index``: results from earlier-protocol servers omit the field
    and clients MUST treat them as ``"complete"``. A non-string value is returned as its
    ``repr`` so that the caller's "unrecognized resultType is invalid" check rejects it.
    """
    value = result.get("resultType", RESULT_TYPE_COMPLETE)
    return value if isinstance(value, str) else repr(value)
