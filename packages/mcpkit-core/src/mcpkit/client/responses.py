"""Reading HTTP responses for the Streamable HTTP client (:mod:`mcpkit.client.http`):
content type, body text, JSON-RPC error bodies, auth failures, redirects.

Rules (the numbers are :mod:`mcpkit.client.http`'s):
6. An error body is a JSON-RPC error response when ``error`` is an object with an
   integer ``code``.
12. A 401, or a 403 with a ``WWW-Authenticate`` challenge or without a JSON-RPC error
    body, is :class:`~mcpkit.client.errors.HTTPAuthError` (status and challenge).
13. A 307/308 is followed only to the same origin: scheme, host and port (the default
    port of the scheme when none is written); otherwise
    :class:`~mcpkit.client.errors.RedirectError`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mcpkit.client.errors import HTTPAuthError, RedirectError
from mcpkit.core.jsonrpc import loads
from mcpkit.core.shapes import JSON, as_object

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "auth_error",
    "content_type",
    "describe",
    "is_jsonrpc_error",
    "port",
    "raise_auth",
    "redirect_target",
    "text",
]

logger = logging.getLogger("mcpkit.client")


def redirect_target(method: str, response: httpx2.Response) -> str:
    """Rule 13: the URL a 307/308 points to, when it is the same origin."""
    location = response.headers.get("location", "")
    if not location:
        raise RedirectError(method, response.status_code, "", "no Location header")
    target = response.request.url.join(location)
    here = response.request.url
    if (target.scheme, target.host, port(target)) != (here.scheme, here.host, port(here)):
        raise RedirectError(method, response.status_code, str(target), "it leads to another origin")
    logger.info("following HTTP %s from %s to %s", response.status_code, here, target)
    return str(target)


def is_jsonrpc_error(item: JSON) -> bool:
    """Rule 6: an error response object (``error`` an object with an integer ``code``)."""
    error = as_object(item.get("error"))
    return error is not None and isinstance(error.get("code"), int)


def auth_error(response: httpx2.Response, method: str, body: str) -> HTTPAuthError:
    challenge = response.headers.get("www-authenticate", "")
    return HTTPAuthError(method, response.status_code, challenge, body)


def raise_auth(
    response: httpx2.Response, method: str, body: bytes, *, always: bool = False
) -> None:
    """Rule 12: raise :class:`HTTPAuthError` for a 401, or for a 403 with a challenge or
    without a JSON-RPC error body (a plain 403 JSON-RPC error is that request's answer)."""
    body_text = body.decode("utf-8", errors="replace")
    if always or response.status_code == 401 or "www-authenticate" in response.headers:
        raise auth_error(response, method, body_text)
    try:
        parsed = loads(body) if body else None
    except ValueError:
        parsed = None
    found = as_object(parsed)
    if not (found is not None and is_jsonrpc_error(found)):
        raise auth_error(response, method, body_text)


def describe(exc: BaseException) -> str:
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def port(url: httpx2.URL) -> int | None:
    return url.port if url.port is not None else {"http": 80, "https": 443}.get(url.scheme)


def content_type(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


async def text(response: httpx2.Response) -> str:
    try:
        return (await response.aread()).decode("utf-8", errors="replace")
    except Exception:
        return ""
