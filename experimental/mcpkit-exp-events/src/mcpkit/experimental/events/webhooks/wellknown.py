"""The receiver-published well-known document (SEP-3415 §Webhook security, "Endpoint
verification" option 4): ``/.well-known/mcp-webhook-receiver.json`` on a callback URL's
``https`` origin declares the path prefixes that accept MCP webhook deliveries
(``{"receivers": ["/hooks/"]}``); a URL it covers is verified without a challenge POST.

Rules:
1. A prefix is an absolute path (``/`` first) of at most ``max_prefix_bytes`` with no
   ``.``/``..`` segment, no empty segment inside, and no ``%``, ``\\``, ``?``, ``#``
   (:func:`check_prefix`, ``ValueError``); a document with any other entry, more than
   ``max_prefixes`` entries, or not of the shape ``{"receivers": [str, ...]}`` (JSON
   nested too deeply to parse included) is malformed and covers nothing.
2. A prefix covers a path on ``/`` boundaries only (:func:`path_covered`): ``/hooks/``
   and ``/hooks`` cover ``/hooks`` and ``/hooks/a``, never ``/hooksevil``; ``/`` covers
   every path. A callback path is covered by no prefix unless, percent-decoded once, it
   is ASCII whose segments hold only RFC 3986 ``pchar`` characters other than ``;`` and
   ``%`` and are neither empty (inside), ``.`` nor ``..``: a path an origin's server or
   proxy may normalise out of the prefix (``/hooks/..;/admin`` on Tomcat/Spring,
   ``%252e%252e`` decoded twice, fullwidth dots under NFKC, ``\\``, control characters)
   falls back to the challenge.
3. The document is fetched with :meth:`.sender.Sender.get`: the address checked at fetch
   time and connected to with the host name in ``Host`` and SNI, no redirect followed
   (a 3xx is "absent"), no proxy, at most ``max_document_bytes`` read (more is
   "malformed"), the whole fetch bounded by ``timeout_s``.
4. Per origin (scheme, host, port) the outcome of a fetch that got an HTTP answer
   (a document, malformed or absent) is cached for the response's
   ``Cache-Control: max-age`` less its ``Age`` (``default_ttl_s`` without one), at most
   ``max_ttl_s``; ``no-store``/``no-cache`` is not cached; a fetch that got no answer
   is not cached. Only ASCII digits are numbers there (another ``max-age`` is absent,
   another ``Age`` ignored). At most ``max_origins`` origins are cached (oldest dropped).
   Concurrent look-ups of one origin share one fetch.
5. Fetches to one host are spaced at least ``fetch_interval_s`` apart
   (:class:`HostSpacer`, the challenge's per-host rate limit).
6. Receiver side: :func:`receiver_document` and :func:`well_known_route` publish the
   document for given mount prefixes (checked by rule 1).
7. :class:`WellKnownPolicy` checks its numbers when made
   (:func:`mcpkit.core.limits.check_limits`; ``fetch_interval_s`` may be 0: no spacing).
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import unquote_to_bytes, urlsplit

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.core.limits import check_limits
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.webhooks.sender import AddressRefused, Sender
from mcpkit.experimental.events.wire import WELL_KNOWN_RECEIVER_PATH, WELL_KNOWN_RECEIVERS_FIELD

__all__ = [
    "HostSpacer",
    "ReceiverDocuments",
    "WellKnownPolicy",
    "callback_path_clean",
    "check_prefix",
    "path_covered",
    "receiver_document",
    "well_known_route",
]

_DEFAULT_PORTS = {"https": 443, "http": 80}
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?([0-9]+)\"?\s*(?:,|$)", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class WellKnownPolicy:
    """How a server uses receiver documents (``Webhooks(well_known=...)``); times in the
    unit their names say. Enabled by default."""

    enabled: bool = True
    """Look for the document before a challenge POST (False: challenge only)."""
    max_document_bytes: int = 16 * 1024
    """A larger document is malformed (16 KiB)."""
    max_prefixes: int = 64
    """A document with more entries is malformed."""
    max_prefix_bytes: int = 1024
    """A longer entry is malformed."""
    timeout_s: float = 5.0
    """The whole fetch (connect, request, response)."""
    default_ttl_s: float = 300.0
    """Cache lifetime of an answer without ``max-age`` (5 minutes)."""
    max_ttl_s: float = 3600.0
    """Cache lifetime cap, whatever ``max-age`` says (1 hour)."""
    max_origins: int = 10_000
    """Cached origins (oldest dropped)."""
    fetch_interval_s: float = 1.0
    """Least time between two fetches to one host (0: no spacing)."""

    def __post_init__(self) -> None:
        check_limits(self, zero=("fetch_interval_s",))


class HostSpacer:
    """Spaces actions per host at least ``interval_s`` apart, remembering at most
    ``max_hosts`` hosts (rule 5; the challenge's per-host rate limit)."""

    def __init__(self, interval_s: float, max_hosts: int) -> None:
        self.interval_s = interval_s
        self.max_hosts = max_hosts
        # kind-ok: unbounded-table max_hosts hosts, rate-limit table
        self._last: OrderedDict[str, float] = OrderedDict()
        self._lock = anyio.Lock()

    async def wait(self, host: str) -> None:
        """Return when an action on ``host`` may start (and count it as started)."""
        async with self._lock:
            last = self._last.get(host)
            now = time.monotonic()
            wait = 0.0 if last is None else last + self.interval_s - now
            self._last[host] = now + max(0.0, wait)
            self._last.move_to_end(host)
            while len(self._last) > self.max_hosts:
                self._last.popitem(last=False)
        if wait > 0:
            await anyio.sleep(wait)


def check_prefix(prefix: object, *, max_prefix_bytes: int = 1024) -> str:
    """``prefix`` when it is an acceptable document entry (rule 1), else ``ValueError``."""
    if not isinstance(prefix, str) or not prefix.startswith("/"):
        raise ValueError("a receiver prefix must be an absolute path ('/...')")
    if len(prefix.encode()) > max_prefix_bytes:
        raise ValueError(f"a receiver prefix is longer than {max_prefix_bytes} bytes")
    if any(c in prefix for c in "%\\?#") or prefix.startswith("//") or not _clean_segments(prefix):
        raise ValueError(f"receiver prefix {prefix!r} has a dot, empty or encoded segment")
    return prefix


def _clean_segments(path: str) -> bool:
    inner = path[1:-1] if path.endswith("/") else path[1:]
    if not inner:
        return True
    return all(seg not in ("", ".", "..") for seg in inner.split("/"))


def path_covered(path: str, prefix: str) -> bool:
    """Whether ``prefix`` covers ``path`` on ``/`` boundaries (rule 2)."""
    base = prefix.rstrip("/")
    return not base or path == base or path.startswith(base + "/")


_PCHARS = re.compile(r"[A-Za-z0-9._~!$&'()*+,=:@/-]*")
"""RFC 3986 ``pchar`` (and ``/``) less ``;`` (path parameters) and ``%`` (a second
encoding layer)."""


def callback_path_clean(path: str) -> bool:
    """Rule 2: whether no server or proxy on the origin, nor the HTTP client's own
    dot-segment removal, may map ``path`` elsewhere (also used for ``verified_urls``)."""
    try:
        decoded = unquote_to_bytes(path).decode("ascii")
    except UnicodeDecodeError:
        return False
    return (
        path.startswith("/") and _PCHARS.fullmatch(decoded) is not None and _clean_segments(decoded)
    )


def _parse(body: bytes, policy: WellKnownPolicy) -> tuple[str, ...] | None:
    """The prefixes of a document (rule 1), None when malformed."""
    try:
        doc: Any = json.loads(body)
    except (ValueError, RecursionError):  # a deeply nested document is malformed too
        return None
    if not isinstance(doc, dict):
        return None
    entries: Any = cast(JSON, doc).get(WELL_KNOWN_RECEIVERS_FIELD)
    if not isinstance(entries, list) or len(cast(list[Any], entries)) > policy.max_prefixes:
        return None
    try:
        return tuple(
            check_prefix(e, max_prefix_bytes=policy.max_prefix_bytes)
            for e in cast(list[Any], entries)
        )
    except ValueError:
        return None


def _ttl_s(headers: dict[str, str], policy: WellKnownPolicy) -> float:
    """How long an answer may be cached (rule 4); 0 for not at all."""
    control = headers.get("cache-control", "")
    lowered = control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return 0.0
    found = _MAX_AGE.search(control)
    ttl = float(found.group(1)) if found is not None else policy.default_ttl_s
    age = headers.get("age", "")
    if found is not None and age.isascii() and age.isdigit():  # '²' is a digit, not a number
        ttl -= float(age)
    return max(0.0, min(ttl, policy.max_ttl_s))


Origin = tuple[str, str, int]


class ReceiverDocuments:
    """Fetches and caches receiver documents for a server (rules 3-5)."""

    def __init__(self, sender: Sender, policy: WellKnownPolicy) -> None:
        self.sender = sender
        self.policy = policy
        self.spacer = HostSpacer(policy.fetch_interval_s, policy.max_origins)
        # kind-ok: unbounded-table max_origins origins of validated callback URLs
        self._cache: OrderedDict[Origin, tuple[float, tuple[str, ...] | None]] = OrderedDict()
        # kind-ok: unbounded-table fetches in progress only, origins of validated URLs
        self._inflight: dict[Origin, anyio.Event] = {}

    async def covers(self, url: str) -> bool:
        """Whether the document of ``url``'s origin covers ``url`` (rules 1-4); False
        when disabled, absent, malformed, unreachable or refused by the address guard."""
        if not self.policy.enabled:
            return False
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return False
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        if scheme != "https" or not host or not callback_path_clean(parts.path or "/"):
            return False
        origin = (scheme, host, port if port is not None else _DEFAULT_PORTS[scheme])
        prefixes = await self._prefixes(origin)
        path = parts.path or "/"
        return prefixes is not None and any(path_covered(path, p) for p in prefixes)

    async def _prefixes(self, origin: Origin) -> tuple[str, ...] | None:
        while True:
            cached = self._cache.get(origin)
            if cached is not None and cached[0] > time.monotonic():
                return cached[1]
            running = self._inflight.get(origin)
            if running is None:
                break
            await running.wait()  # share the fetch in flight (rule 4)
            if origin not in self._cache:
                return None  # that fetch was not cacheable: do not fetch again at once
        done = self._inflight[origin] = anyio.Event()
        try:
            return await self._fetch(origin)
        finally:
            del self._inflight[origin]
            done.set()

    async def _fetch(self, origin: Origin) -> tuple[str, ...] | None:
        _, host, port = origin
        await self.spacer.wait(host)
        named = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
        url = f"https://{named}:{port}{WELL_KNOWN_RECEIVER_PATH}"
        try:
            got = await self.sender.get(
                url, max_bytes=self.policy.max_document_bytes, timeout_s=self.policy.timeout_s
            )
        except AddressRefused:
            return None
        if got.status is None or 300 <= got.status < 400 or got.status >= 500:
            return None  # no answer, a redirect (never followed) or a server error
        prefixes = None if got.error is not None or got.oversize else _parse(got.body, self.policy)
        ttl = _ttl_s(got.headers, self.policy)
        self._cache.pop(origin, None)
        if ttl > 0:
            self._cache[origin] = (time.monotonic() + ttl, prefixes)
            while len(self._cache) > self.policy.max_origins:
                self._cache.popitem(last=False)
        return prefixes


def receiver_document(prefixes: Sequence[str]) -> JSON:
    """The document declaring ``prefixes`` (each checked by rule 1, ``ValueError``)."""
    return {WELL_KNOWN_RECEIVERS_FIELD: [check_prefix(p) for p in prefixes]}


def well_known_route(*prefixes: str, max_age_s: int = 300) -> Route:
    """A Starlette route serving the document for ``prefixes`` at
    ``/.well-known/mcp-webhook-receiver.json`` (``Cache-Control: max-age=max_age_s``);
    add it to the application at the origin's root (rule 6)."""
    body = receiver_document(prefixes)

    async def serve(request: Request) -> Response:
        return JSONResponse(body, headers={"Cache-Control": f"max-age={max_age_s}"})

    return Route(WELL_KNOWN_RECEIVER_PATH, serve, methods=["GET"])
