"""One hardened POST (or GET) to a callback URL (SEP-3415 §Webhook security, §Webhook
delivery status).

Rules:
1. The host name is resolved and checked by :class:`~.ssrf.AddressPolicy` for every POST,
   and the connection goes to that checked address: the request URL carries the IP, the
   ``Host`` header the original host, and aiohttp's documented ``server_hostname``
   request argument the original host name, used as the TLS ``server_hostname`` (SNI
   and certificate verification against the host name, not the IP). An internationalized
   host name is used as its A-label (``xn--``, IDNA 2008 with UTS 46, as the resolver
   encodes it) for all three, never as UTF-8 bytes in the ``Host`` header.
2. Redirects are never followed (``allow_redirects=False``); a 3xx is a failure.
3. No proxy from the environment is used (``trust_env=False``): a proxy would connect
   on its own, past the address check. No cookie a peer sets is kept or sent back
   (``DummyCookieJar``), and no compression is asked for or decoded
   (``Accept-Encoding`` not sent, ``auto_decompress=False``).
4. Sessions are pooled per host name (so a pooled TLS connection is never reused for
   another name), at most ``max_clients`` of them (least recently used closed, once no
   POST still uses it: an evicted session is closed by the next POST after its last). Each
   keeps its connections alive between POSTs (one TLS handshake per connection, not per
   event) and holds at most ``max_connections_per_host`` of them, busy or idle; a POST
   past that waits for one to free (within rule 6's bound); an idle one is closed after
   ``keepalive_expiry_s``.
5. A response body is read up to ``max_response_bytes``; its content never reaches
   ``lastError``, which is one of the SEP's categories (:data:`OUTCOMES`). Response
   headers are bounded by the parser (:data:`MAX_HEADER_LINE_BYTES` a line or field,
   :data:`MAX_RESPONSE_HEADERS` of them; more is ``connection_refused``). A URL or a
   header the HTTP client refuses (``aiohttp.InvalidURL``, a line break in a value), and a
   URL :func:`~.ssrf.check_callback_url` refuses (a control character, which aiohttp
   would percent-encode and send), is ``connection_refused``, never an exception.
6. Every POST is bounded by ``request_timeout_s`` as a whole (connect, write, every
   read and pool together; ``lastError`` ``timeout`` past it): an endpoint trickling
   its answer a byte at a time, each read within a per-read timeout, cannot hold a
   delivery slot or a subscribe call longer.
7. :meth:`Sender.get` (the receiver document, :mod:`.wellknown`) takes the same path
   (rules 1-4), reads at most the caller's ``max_bytes`` and is bounded as a whole by
   the caller's ``timeout_s`` (``lastError``-style category ``timeout`` past it); it
   asks ``Connection: close``, so a connection the endpoint drops after answering is
   never reused for the challenge POST that may follow.
8. The HTTP client is aiohttp (C-accelerated HTTP/1.1 parser, one write per request):
   about a quarter of httpx2's CPU per POST (docs/performance.md, "Webhooks"). It runs
   on asyncio only: :meth:`Sender.check_event_loop` (called when delivery starts)
   raises ``RuntimeError`` on another event loop, so the misconfiguration shows when
   the server starts, not at the first event. Sessions belong to the event loop that
   made them; a Sender used from a new loop starts new ones.
9. TLS verification cannot be turned off: ``verify`` is ``True`` or an ``ssl.SSLContext``
   requiring a certificate and checking the host name; ``False``, a path or a context
   that skips either raises ``ValueError`` when set (at construction: the server's
   start-up), never silently delivering signed events to whoever answers.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp
import anyio
import yarl

from mcpkit.experimental.events.webhooks.ssrf import (
    AddressPolicy,
    AddressRefused,
    check_callback_url,
)

__all__ = ["OUTCOMES", "GetResult", "PostResult", "Sender"]

OUTCOMES = ("connection_refused", "timeout", "tls_error", "http_4xx", "http_5xx")
"""The ``lastError`` categories a POST can end in (plus ``challenge_failed``, decided by
the verifier)."""
MAX_HEADER_LINE_BYTES = 8190
"""Rule 5: the longest response status line or header field read."""
MAX_RESPONSE_HEADERS = 128
"""Rule 5: the most response header fields read."""


@dataclass(frozen=True, slots=True)
class GetResult:
    """How one exchange ended: ``status`` (None when no response), ``error`` (a category
    of :data:`OUTCOMES`, None on 2xx), up to ``max_bytes`` of the body, the response
    headers (lower-case names) and whether the body was longer than ``max_bytes``."""

    status: int | None
    error: str | None
    body: bytes = b""
    # kind-ok: unbounded-table one delivery's headers, built here
    headers: dict[str, str] = field(default_factory=dict[str, str])
    oversize: bool = False


@dataclass(frozen=True, slots=True)
class PostResult:
    """How one POST ended: ``status`` (None when no response), ``error`` (a category of
    :data:`OUTCOMES`, None on 2xx) and up to ``max_response_bytes`` of the body."""

    status: int | None
    error: str | None
    body: bytes = b""

    @property
    def ok(self) -> bool:
        return self.error is None


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError | ssl.CertificateError):
            return True
        text = str(seen)
        if "CERTIFICATE_VERIFY_FAILED" in text or "SSL" in text or "TLS" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Sender:
    """Hardened POSTs and GETs (rules 1-9). ``verify`` is an ``ssl.SSLContext`` (tests: one that
    trusts a test CA) or True (the system's trust store), checked by rule 9 (``ValueError``);
    it is read when a host's session is made, so it may be replaced before the first POST."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        verify: ssl.SSLContext | bool = True,
        request_timeout_s: float = 5.0,
        max_response_bytes: int = 4096,
        max_clients: int = 64,
        max_connections_per_host: int = 16,
        keepalive_expiry_s: float = 30.0,
    ) -> None:
        self.policy = policy
        self._verify: ssl.SSLContext | bool = True
        self.verify = verify
        self.request_timeout_s = request_timeout_s
        self.max_response_bytes = max_response_bytes
        self.max_clients = max_clients
        self.max_connections_per_host = max_connections_per_host
        self.keepalive_expiry_s = keepalive_expiry_s
        # kind-ok: unbounded-table max_clients hosts of validated callback URLs
        self._clients: OrderedDict[str, aiohttp.ClientSession] = OrderedDict()
        self._retired: list[aiohttp.ClientSession] = []
        # kind-ok: unbounded-table the sessions of POSTs in flight (max_clients + evicted busy)
        self._busy: dict[aiohttp.ClientSession, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def verify(self) -> ssl.SSLContext | bool:
        """``True`` (the system's trust store) or an ``ssl.SSLContext`` that checks the
        certificate and the host name (rule 9); anything else raises ``ValueError``."""
        return self._verify

    @verify.setter
    def verify(self, value: ssl.SSLContext | bool) -> None:
        checked = isinstance(value, ssl.SSLContext) and (
            value.verify_mode == ssl.CERT_REQUIRED and value.check_hostname
        )
        if value is not True and not checked:
            raise ValueError(
                "webhook verify must be True or an ssl.SSLContext with verify_mode"
                f" CERT_REQUIRED and check_hostname (got {value!r}): SEP-3415 delivers over"
                " verified TLS only; trust a private CA with ctx.load_verify_locations()"
            )
        self._verify = value

    @staticmethod
    def check_event_loop() -> None:
        """Raise ``RuntimeError`` unless running on asyncio (rule 8)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "webhook delivery needs the asyncio event loop (aiohttp): anyio.run(...,"
                " backend='asyncio')"
            ) from None

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # rule 8: another loop's sessions cannot serve this one
            self._clients.clear()
            self._retired.clear()
            self._busy.clear()
            self._loop = loop

    def _client(self, host: str) -> aiohttp.ClientSession:
        client = self._clients.get(host)
        if client is not None:
            self._clients.move_to_end(host)
            return client
        connector = aiohttp.TCPConnector(  # rule 4: a bounded keep-alive pool per host
            limit=self.max_connections_per_host,
            limit_per_host=self.max_connections_per_host,
            keepalive_timeout=self.keepalive_expiry_s,
            ssl=self.verify,
            use_dns_cache=False,  # the URL carries the checked address (rule 1)
        )
        client = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.request_timeout_s),
            trust_env=False,  # rule 3
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,
            skip_auto_headers=("Accept-Encoding",),
            max_line_size=MAX_HEADER_LINE_BYTES,  # rule 5
            max_field_size=MAX_HEADER_LINE_BYTES,
            max_headers=MAX_RESPONSE_HEADERS,
        )
        self._clients[host] = client
        while len(self._clients) > self.max_clients:
            _, old = self._clients.popitem(last=False)
            self._retire(old)
        return client

    def _retire(self, client: aiohttp.ClientSession) -> None:
        # Closing is async: the next POST closes evicted sessions no POST still uses.
        self._retired.append(client)

    async def _close_retired(self) -> None:
        idle = [c for c in self._retired if c not in self._busy]
        self._retired = [c for c in self._retired if c in self._busy]
        with anyio.CancelScope(shield=True):  # a cancelled POST leaves none half-closed
            for client in idle:
                await client.close()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
        """POST ``body`` to ``url`` (rules 1-6); never raises for endpoint failures.
        Raises :class:`~.ssrf.AddressRefused` when the address check refuses."""
        with anyio.move_on_after(self.request_timeout_s):  # rule 6: the whole exchange
            got = await self._exchange("POST", url, body, headers, self.max_response_bytes)
            return PostResult(got.status, got.error, got.body)
        return PostResult(None, "timeout")

    async def get(self, url: str, *, max_bytes: int, timeout_s: float) -> GetResult:
        """GET ``url`` over the same pinned path as :meth:`post` (rules 1-4, 6), reading at
        most ``max_bytes`` of the body (``oversize`` when there was more), the whole
        exchange bounded by ``timeout_s`` (rule 7). Never raises for endpoint failures;
        :class:`~.ssrf.AddressRefused` when the address check refuses."""
        with anyio.move_on_after(timeout_s):  # not pooled: the POST after it starts afresh
            return await self._exchange("GET", url, None, {"connection": "close"}, max_bytes)
        return GetResult(None, "timeout")

    async def _exchange(
        self, method: str, url: str, body: bytes | None, headers: dict[str, str], max_bytes: int
    ) -> GetResult:
        self._bind_loop()
        await self._close_retired()
        try:  # rule 5: aiohttp would percent-encode a control character and send it
            check_callback_url(url, max_url_bytes=len(url.encode()))
        except ValueError:
            return GetResult(None, "connection_refused")
        parts = urlsplit(url)
        try:  # rule 1: the A-label (IDNA 2008, UTS 46) for the resolver, SNI and Host
            host = yarl.URL(url).raw_host or ""
        except ValueError:
            raise AddressRefused("callback host is not a valid host name") from None
        port = parts.port or 443
        address = await self.policy.resolve(host, port)
        literal = f"[{address}]" if ":" in address else address
        target = f"https://{literal}:{port}{parts.path or '/'}"
        if parts.query:
            target += "?" + parts.query
        named = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
        host_header = named if parts.port in (None, 443) else f"{named}:{port}"
        client = self._client(host)
        self._busy[client] = self._busy.get(client, 0) + 1  # rule 4: eviction never closes it
        oversize = False
        try:
            async with client.request(
                method,
                target,
                data=body,
                headers={**headers, "host": host_header},
                server_hostname=host,
                allow_redirects=False,
            ) as response:
                data = bytearray()
                while chunk := await response.content.read(max_bytes + 1 - len(data)):
                    data += chunk
                    if len(data) > max_bytes:
                        oversize = True
                        break
                status = response.status
                got_headers = {k.lower(): v for k, v in response.headers.items()}
        except TimeoutError:  # aiohttp's timeouts are TimeoutError subclasses
            return GetResult(None, "timeout")
        except aiohttp.ClientSSLError:
            return GetResult(None, "tls_error")
        except aiohttp.ClientError as exc:  # InvalidURL too: the URL never reached the wire
            return GetResult(None, "tls_error" if _is_tls(exc) else "connection_refused")
        except (ssl.SSLError, ssl.CertificateError):
            return GetResult(None, "tls_error")
        except OSError:
            return GetResult(None, "connection_refused")
        except ValueError:  # a header value aiohttp refuses to write (a line break)
            return GetResult(None, "connection_refused")
        finally:
            if (users := self._busy.pop(client, 1) - 1) > 0:
                self._busy[client] = users
        payload = bytes(data[:max_bytes])
        error = None if 200 <= status < 300 else "http_5xx" if status >= 500 else "http_4xx"
        return GetResult(status, error, payload, got_headers, oversize)

    async def aclose(self) -> None:
        """Close every pooled session."""
        clients = [*self._clients.values(), *self._retired]
        self._clients.clear()
        self._retired.clear()
        self._busy.clear()
        for client in clients:
            await client.close()


__all__ += ["AddressRefused"]
