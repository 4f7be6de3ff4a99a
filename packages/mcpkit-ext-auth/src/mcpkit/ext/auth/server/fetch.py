"""Bounded JSON fetches for validators (JWKS documents, introspection answers).

Rules:
1. One ``httpx2.AsyncClient`` per validator, created on first use and closed by
   ``aclose`` (the protected server's lifespan closes it); redirects are not followed.
2. A body larger than ``max_bytes`` is abandoned while streaming, never buffered whole;
   a non-2xx status, a non-JSON body or a body that is not a JSON object is an error.
3. Errors are :class:`FetchError` with text naming the URL and what went wrong, never a
   request body (an introspection request carries the token).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from mcpkit.core.shapes import as_object

__all__ = ["FetchError", "JSONFetcher"]


class FetchError(Exception):
    """Rule 3."""


class JSONFetcher:
    """Rules 1-3."""

    __slots__ = ("_client", "max_bytes", "timeout_s")

    def __init__(self, *, max_bytes: int, timeout_s: float) -> None:
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self._client: httpx2.AsyncClient | None = None

    def client(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=self.timeout_s, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def fetch(self, method: str, url: str, **options: Any) -> dict[str, Any]:
        """Rule 2: the JSON object answered by ``method url`` (``options``: httpx2's)."""
        try:
            async with self.client().stream(method, url, **options) as response:
                if not 200 <= response.status_code < 300:
                    raise FetchError(f"{url} answered HTTP {response.status_code}")
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise FetchError(f"{url} answered more than {self.max_bytes} bytes")
                    chunks.append(chunk)
        except httpx2.HTTPError as exc:
            raise FetchError(f"{url} could not be reached ({type(exc).__name__})") from None
        try:
            value = as_object(json.loads(b"".join(chunks)))
        except (ValueError, RecursionError):  # nested past the parser's depth
            raise FetchError(f"{url} did not answer JSON") from None
        if value is None:
            raise FetchError(f"{url} did not answer a JSON object")
        return value
