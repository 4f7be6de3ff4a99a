"""Getting the user through the authorization endpoint and back: a loopback receiver
that opens the browser, and a headless handler for tests and CI.

Spec: RFC 8252 §7.3 (loopback redirect URIs), OAuth 2.1 §4.1.2 (the response's query).

Rules:
1. A handler has a ``redirect_uri`` (known before the flow starts, for registration)
   and ``authorize(url, http)``, which returns the redirect's query parameters
   (``code``, ``state``, ``iss``, or ``error``...), single values, decoded.
2. :class:`LoopbackRedirect` listens on ``127.0.0.1`` on a port the OS picks (bound when
   the handler is created, so the URI is fixed), opens ``url`` with :mod:`webbrowser`
   (or calls ``open_url``), and answers the first request to its callback path that
   carries ``code`` or ``error`` and the ``state`` of ``url``; other requests get 404
   and the wait goes on (a stray or forged request, which any web page can make the
   browser send to a loopback port, neither ends the flow nor delivers a code). The
   wait is bounded by ``timeout_s`` (:class:`~.grant.OAuthError` ``access_denied``
   when it runs out); a request head over 8 KiB is refused.
3. :class:`HeadlessRedirect` GETs ``url`` with the connection's HTTP client, follows
   redirects that stay off the redirect URI (at most ``max_redirects``), and reads the
   parameters from the ``Location`` that points at the redirect URI, without requesting
   it. An answer that is not such a redirect is :class:`~.grant.OAuthError`.
"""

from __future__ import annotations

import logging
import socket
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

import anyio
import anyio.abc

from mcpkit.ext.auth.client.grant import OAuthError

if TYPE_CHECKING:
    import httpx2

__all__ = ["HeadlessRedirect", "LoopbackRedirect", "RedirectHandler"]

logger = logging.getLogger("mcpkit.ext.auth")
_MAX_HEAD_BYTES = 8192
_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>mcpkit</title>"
    b"<p>Authorization complete. You can close this window.</p>"
)


class RedirectHandler(Protocol):
    """Rule 1."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> dict[str, str]: ...


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _same_endpoint(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    key_a = (pa.scheme, pa.netloc.lower(), pa.path or "/")
    return key_a == (pb.scheme, pb.netloc.lower(), pb.path or "/")


class HeadlessRedirect:
    """Rule 3: follow the authorization endpoint's redirects without a browser (for an
    authorization server that consents on its own: the development server's test user,
    the conformance mocks)."""

    def __init__(
        self, redirect_uri: str = "http://127.0.0.1/callback", *, max_redirects: int = 5
    ) -> None:
        self._redirect_uri = redirect_uri
        self.max_redirects = max_redirects

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> dict[str, str]:
        current = url
        for _ in range(self.max_redirects + 1):
            response = await http.get(current, follow_redirects=False)
            location = response.headers.get("location")
            if not response.is_redirect or not location:
                raise OAuthError(
                    "access_denied",
                    f"the authorization endpoint answered HTTP {response.status_code} "
                    "without redirecting back (a user must sign in: use LoopbackRedirect)",
                    status=response.status_code,
                )
            target = urljoin(current, location)
            if _same_endpoint(target, self._redirect_uri):
                return _query(target)
            current = target
        raise OAuthError("access_denied", f"more than {self.max_redirects} redirects")


class LoopbackRedirect:
    """Rule 2: receive the redirect on ``http://127.0.0.1:<port><path>``.

    ``open_url`` shows the URL to the user (default :func:`webbrowser.open`, falling back to
    printing it); ``timeout_s`` bounds the wait for the redirect (seconds).
    """

    def __init__(
        self,
        *,
        path: str = "/callback",
        port: int = 0,
        timeout_s: float = 300.0,
        open_url: Callable[[str], object] | None = None,
    ) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(8)
        self._sock.setblocking(False)
        self.port: int = self._sock.getsockname()[1]
        self.path = path
        self.timeout_s = timeout_s
        self.open_url = open_url or _open_browser

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def close(self) -> None:
        self._sock.close()

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> dict[str, str]:
        listener = await anyio.abc.SocketListener.from_socket(self._sock.dup())
        state = _query(url).get("state")
        result: dict[str, str] = {}
        try:
            with anyio.move_on_after(self.timeout_s) as scope:
                async with anyio.create_task_group() as tg:
                    self.open_url(url)

                    async def serve() -> None:
                        while not result:
                            stream = await listener.accept()
                            async with stream:
                                result.update(await self._answer(stream, state))
                        tg.cancel_scope.cancel()

                    tg.start_soon(serve)
        finally:
            await listener.aclose()
        if scope.cancelled_caught and not result:
            raise OAuthError(
                "access_denied", f"no authorization redirect within {self.timeout_s} s"
            )
        return result

    async def _answer(self, stream: anyio.abc.ByteStream, state: str | None) -> dict[str, str]:
        head = b""
        with anyio.move_on_after(10):
            while b"\r\n\r\n" not in head and len(head) <= _MAX_HEAD_BYTES:
                try:
                    chunk = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        params: dict[str, str] = {}
        if len(parts) == 3 and parts[0] == "GET" and len(head) <= _MAX_HEAD_BYTES:
            target = parts[1]
            if urlsplit(target).path == self.path:
                params = _query(target)
        if ("code" in params or "error" in params) and params.get("state") == state:
            status, body = b"200 OK", _PAGE
        else:
            status, body, params = b"404 Not Found", b"not found", {}
        await stream.send(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
        )
        return params


def _open_browser(url: str) -> None:
    try:
        opened = webbrowser.open(url)
    except Exception:
        opened = False
    if not opened:
        print(f"Open this URL to authorize:\n{url}", flush=True)
