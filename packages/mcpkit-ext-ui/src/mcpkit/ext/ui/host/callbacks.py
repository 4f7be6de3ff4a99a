"""The host application's answers to a view's ``ui/*`` requests, with the spec's
defaults when the host gives none.

Spec: ``apps-2026-01-26.mdx`` §MCP Apps Specific Messages; SDK 2.0.4 ``ui/download-file``
and ``sampling/createMessage`` (``app.js``).

Rules:
1. Each callback is ``async``; it returns the result (or None for ``{}``) or raises
   :class:`~mcpkit.core.jsonrpc.JSONRPCError` to answer with that error. Any other
   exception is answered -32603 with no detail (the text stays in the host's log).
2. With no callback, requests that act on the user's behalf are denied with -32000 and
   the spec's message: ``ui/message`` ("Message sending denied"), ``ui/open-link``
   ("Link opening denied by user"), ``ui/download-file`` ("Download denied"),
   ``sampling/createMessage`` ("Sampling denied"). ``ui/request-display-mode`` keeps the
   current mode; ``ui/update-model-context`` is stored on the host (each update replaces
   the last, spec) and otherwise ignored; ``size-changed`` and ``request-teardown`` are
   recorded on the host and otherwise ignored.
3. Params are checked before a callback runs; a malformed request is -32602 naming the
   field: ``ui/open-link`` needs an absolute ``http``/``https`` URL ("Invalid URL"),
   ``ui/message`` a ``role`` of ``"user"`` and ``content`` (a list or one block),
   ``ui/download-file`` a ``contents`` list, ``ui/request-display-mode`` a ``mode`` in
   ``inline``/``fullscreen``/``pip``, ``ui/update-model-context`` a ``content`` list
   and a ``structuredContent`` object (each optional; "Invalid content format").
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_list, as_object
from mcpkit.ext.ui.host.wire import (
    DENIED,
    DOWNLOAD_FILE,
    MESSAGE,
    OPEN_LINK,
    SAMPLING_CREATE_MESSAGE,
    UPDATE_MODEL_CONTEXT,
)

__all__ = [
    "DISPLAY_MODES",
    "Callbacks",
    "OnDownloadFile",
    "OnMessage",
    "OnOpenLink",
    "OnRequestDisplayMode",
    "OnSampling",
    "OnSizeChanged",
    "OnTeardownRequested",
    "OnUpdateModelContext",
    "check_display_mode",
    "check_download",
    "check_message",
    "check_model_context",
    "check_size",
    "check_url",
    "denied",
]

OnMessage = Callable[[JSON], Awaitable[JSON | None]]
"""``async def on_message(params) -> result | None``: add ``params["content"]`` (role
``"user"``) to the conversation."""
OnOpenLink = Callable[[str], Awaitable[None]]
"""``async def on_open_link(url)``: open an ``http(s)`` URL for the user."""
OnRequestDisplayMode = Callable[[str], Awaitable[str | None]]
"""``async def on_request_display_mode(mode) -> mode actually set`` (None: unchanged)."""
OnUpdateModelContext = Callable[[JSON], Awaitable[None]]
"""``async def on_update_model_context(params)``: ``content`` and/or ``structuredContent``
for the model's next turns (replaces the previous update)."""
OnDownloadFile = Callable[[JSON], Awaitable[JSON | None]]
"""``async def on_download_file(params) -> result | None``: save ``params["contents"]``."""
OnSizeChanged = Callable[[float | None, float | None], Awaitable[None]]
"""``async def on_size_changed(width, height)`` in CSS pixels (either may be None)."""
OnTeardownRequested = Callable[[], Awaitable[None]]
"""``async def on_teardown_requested()``: the view asks to be closed."""
OnSampling = Callable[[JSON], Awaitable[JSON]]
"""``async def on_sampling(params) -> CreateMessageResult``."""

DISPLAY_MODES = ("inline", "fullscreen", "pip")
_DENIALS = {
    MESSAGE: "Message sending denied",
    OPEN_LINK: "Link opening denied by user",
    DOWNLOAD_FILE: "Download denied",
    SAMPLING_CREATE_MESSAGE: "Sampling denied",
}


@dataclass(frozen=True)
class Callbacks:
    """The host application's callbacks (all optional; rule 2 for the defaults)."""

    on_message: OnMessage | None = None
    on_open_link: OnOpenLink | None = None
    on_request_display_mode: OnRequestDisplayMode | None = None
    on_update_model_context: OnUpdateModelContext | None = None
    on_download_file: OnDownloadFile | None = None
    on_size_changed: OnSizeChanged | None = None
    on_teardown_requested: OnTeardownRequested | None = None
    on_sampling: OnSampling | None = None


def denied(method: str) -> JSONRPCError:
    """The -32000 denial for ``method`` when the host has no callback (rule 2)."""
    return JSONRPCError(DENIED, f"{method}: {_DENIALS.get(method, 'Request denied')}")


def _bad(method: str, why: str) -> JSONRPCError:
    return JSONRPCError(INVALID_PARAMS, f"{method}: {why}")


def check_url(params: Mapping[str, Any]) -> str:
    """The ``url`` of ``ui/open-link`` params (rule 3)."""
    url: Any = params.get("url")
    if not isinstance(url, str) or len(url) > 8192:
        raise _bad(OPEN_LINK, "Invalid URL: params.url must be a string of at most 8192 characters")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise _bad(OPEN_LINK, f"Invalid URL: {url[:200]!r}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
        raise _bad(OPEN_LINK, f"Invalid URL: {url[:200]!r} (an absolute http or https URL)")
    return url


def check_message(params: Mapping[str, Any]) -> None:
    """``ui/message`` params (rule 3)."""
    if params.get("role") != "user":
        raise _bad(MESSAGE, "Invalid message format: params.role must be 'user'")
    content: Any = params.get("content")
    if not isinstance(content, (list, dict)) or not content:
        raise _bad(MESSAGE, "Invalid message format: params.content must be content blocks")


def check_model_context(params: Mapping[str, Any]) -> None:
    """``ui/update-model-context`` params (rule 3): ``content`` a list of content blocks
    and ``structuredContent`` an object, each optional."""
    content = as_list(params.get("content"))
    if "content" in params and (content is None or not all(as_object(c) for c in content)):
        raise _bad(UPDATE_MODEL_CONTEXT, "Invalid content format: params.content must be blocks")
    if "structuredContent" in params and as_object(params["structuredContent"]) is None:
        raise _bad(UPDATE_MODEL_CONTEXT, "Invalid content format: structuredContent not an object")


def check_download(params: Mapping[str, Any]) -> None:
    """``ui/download-file`` params (rule 3)."""
    contents: Any = params.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _bad(DOWNLOAD_FILE, "params.contents must be a non-empty list")


def check_display_mode(method: str, params: Mapping[str, Any]) -> str:
    """The ``mode`` of ``ui/request-display-mode`` params (rule 3)."""
    mode: Any = params.get("mode")
    if mode not in DISPLAY_MODES:
        raise _bad(method, f"params.mode must be one of {', '.join(DISPLAY_MODES)}")
    return mode


def check_size(params: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """``(width, height)`` of ``size-changed``: each a finite number >= 0, else None."""

    def one(value: Any) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value) if math.isfinite(value) and value >= 0 else None

    return one(params.get("width")), one(params.get("height"))
