"""One hardened POST (or GET) to a callback URL (SEP-3415 §Webhook security, §Webhook
delivery status).

Rules:
1. The host name is resolved and checked by :class:`~.ssrf.AddressPolicy` for every POST,
   and the connection goes to that checked address: the request URL carries the IP, the
   ``Host`` header the original host, and httpx2's documented ``sni_hostname`` request
   extension the original host name, which httpcore2 uses as the TLS ``server_hostname``
   (SNI and certificate verification against the host name, not the IP).
2. Redirects are never followed (``follow_redirects=False``); a 3xx is a failure.
3. No proxy from the environment is used (``trust_env=False``): a proxy would connect
   on its own, past the address check.
4. Clients are pooled per host name (so a pooled TLS connection is never reused for
   another name), at most ``max_clients`` of them (least recently used closed). Each
   keeps its connections alive between POSTs (one TLS handshake per connection, not per
   event) and holds at most ``max_connections_per_host`` of them, busy or idle; a POST
   past that waits for one to free (within rule 6's bound); an idle one is closed after
   ``keepalive_expiry_s``.
5. A response body is read up to ``max_response_bytes``; its content never reaches
   ``lastError``, which is one of the SEP's categories (:data:`OUTCOMES`). A URL the
   HTTP client refuses (``httpx2.InvalidURL``) is ``connection_refused``, never an
   exception.
6. Every POST is bounded by ``request_timeout_s`` as a whole (connect, write, every
   read and pool together; ``lastError`` ``timeout`` past it): an endpoint trickling
   its answer a byte at a time, each read within a per-read timeout, cannot hold a
   delivery slot or a subscribe call longer.
7. :meth:`Sender.get` (the receiver document, :mod:`.wellknown`) takes the same path
   (rules 1-4), reads at most the caller's ``max_bytes`` and is bounded as a whole by
   the caller's ``timeout_s`` (``lastError``-style category ``timeout`` past it); it
   asks ``Connection: close``, so a connection the endpoint drops after answering is
   never reused for the challenge POST that may follow.
"""

from __future__ import annotations

import ssl
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import httpx2

from mcpkit.experimental.events.webhooks.ssrf import AddressPolicy, AddressRefused

__all__ = ["OUTCOMES", "GetResult", "PostResult", "Sender"]

OUTCOMES = ("connection_refused", "timeout", "tls_error", "http_4xx", "http_5xx")
"""The ``lastError`` categories a POST can end in (plus ``challenge_failed``, decided by
the verifier)."""


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
    """Hardened POSTs and GETs (rules 1-7). ``verify`` is an ``ssl.SSLContext`` (tests: one that
    trusts a test CA) or True (the system's trust store)."""

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
        self.verify = verify
        self.request_timeout_s = request_timeout_s
        self.max_response_bytes = max_response_bytes
        self.max_clients = max_clients
        self._pool = httpx2.Limits(  # rule 4: a bounded keep-alive pool per host
            max_connections=max_connections_per_host,
            max_keepalive_connections=max_connections_per_host,
            keepalive_expiry=keepalive_expiry_s,
        )
        # kind-ok: unbounded-table max_clients hosts of validated callback URLs
        self._clients: OrderedDict[str, httpx2.AsyncClient] = OrderedDict()
        self._retired: list[httpx2.AsyncClient] = []

    def _client(self, host: str) -> httpx2.AsyncClient:
        client = self._clients.get(host)
        if client is not None:
            self._clients.move_to_end(host)
            return client
        client = httpx2.AsyncClient(
            verify=self.verify,
            follow_redirects=False,
            trust_env=False,
            timeout=httpx2.Timeout(self.request_timeout_s),
            limits=self._pool,
        )
        self._clients[host] = client
        while len(self._clients) > self.max_clients:
            _, old = self._clients.popitem(last=False)
            self._retire(old)
        return client

    def _retire(self, client: httpx2.AsyncClient) -> None:
        # Closing is async: the next POST closes evicted clients (at most max_clients).
        self._retired.append(client)

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
        while self._retired:
            await self._retired.pop().aclose()
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or 443
        address = await self.policy.resolve(host, port)
        literal = f"[{address}]" if ":" in address else address
        target = f"https://{literal}:{port}{parts.path or '/'}"
        if parts.query:
            target += "?" + parts.query
        named = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
        host_header = named if parts.port in (None, 443) else f"{named}:{port}"
        client = self._client(host)
        oversize = False
        try:
            async with client.stream(
                method,
                target,
                content=body,
                headers={**headers, "host": host_header},
                extensions={"sni_hostname": host},
            ) as response:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > max_bytes:
                        oversize = True
                        break
                status = response.status_code
                got_headers = {k.lower(): v for k, v in response.headers.items()}
        except httpx2.TimeoutException:
            return GetResult(None, "timeout")
        except httpx2.InvalidURL:  # not an HTTPError; the URL never reached the wire
            return GetResult(None, "connection_refused")
        except httpx2.HTTPError as exc:
            return GetResult(None, "tls_error" if _is_tls(exc) else "connection_refused")
        except (ssl.SSLError, ssl.CertificateError):
            return GetResult(None, "tls_error")
        except OSError:
            return GetResult(None, "connection_refused")
        payload = bytes(data[:max_bytes])
        error = None if 200 <= status < 300 else "http_5xx" if status >= 500 else "http_4xx"
        return GetResult(status, error, payload, got_headers, oversize)

    async def aclose(self) -> None:
        """Close every pooled client."""
        clients = [*self._clients.values(), *self._retired]
        self._clients.clear()
        self._retired.clear()
        for client in clients:
            await client.aclose()


__all__ += ["AddressRefused"]
