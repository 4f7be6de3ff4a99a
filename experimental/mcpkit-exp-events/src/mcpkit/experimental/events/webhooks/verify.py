"""Endpoint verification before first delivery (SEP-3415 §Webhook security, "Endpoint
verification").

Rules:
1. Delivery to a ``(principal, url)`` starts only once it is verified: by a cached
   success (per principal and URL, never shared between principals), by a configured
   prefix in ``verified_urls`` (allowlist), or by the handshake. A ``verified_urls``
   entry matches a URL with the same scheme, host and port (the scheme's default when
   absent) whose path is the entry's path or lies below it on a ``/`` boundary
   (``https://h.example/hooks`` covers ``/hooks`` and ``/hooks/a``, not ``/hooksx``,
   ``h.example.evil.net`` or port 8443), and only when the URL's path is one no server
   or client may normalise out of the entry (:func:`.wellknown.callback_path_clean`):
   ``/hooks/../admin`` (which the HTTP client itself sends as ``/admin``),
   ``/hooks/..;/admin``, ``/hooks/%252e%252e/admin`` are not covered and take the
   handshake.
2. The handshake POSTs ``{"type": "verification", "challenge": <nonce>}`` (signed, plus
   the ``v1a`` signature of a server ``identity`` when configured, with
   ``X-MCP-Subscription-Id``) over the same SSRF-hardened path as deliveries; the nonce
   is 32 random bytes, single-use, valid ``challenge_ttl_s``.
3. The endpoint must answer 2xx with a JSON body ``{"challenge": <nonce>}``; the nonce
   is compared in constant time (``hmac.compare_digest``). Anything else is
   ``CallbackEndpointError`` (-32027) with ``data.reason``: ``challenge_failed`` for a
   reachable endpoint, the connection category otherwise. No answer makes the
   handshake fail any other way (JSON nested too deeply to parse, a lone surrogate in
   the echo): an internal error would tell the caller about the body of an
   attacker-chosen URL (SEP: no response oracle).
4. Verification POSTs to one host are spaced at least ``verification_interval_s`` apart.
   Principals take turns: a principal has at most one verification of a host waiting
   for its slot (or fetching the host's receiver document) at a time, its others wait
   behind it, so one principal queueing many subscribes to a host delays another
   principal's verification there by one slot per principal, not one per request.
5. Before a handshake, the receiver document of the URL's origin is consulted
   (:mod:`.wellknown`, the SEP's option 4, unless ``WellKnownPolicy(enabled=False)``):
   a document covering the URL verifies ``(principal, url)`` with no challenge POST,
   recorded and cached like a handshake (rule 1); an absent, malformed, oversize,
   redirected or unreachable document, or one not covering the URL, falls back to the
   handshake.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import time
from collections.abc import AsyncGenerator, Sequence
from typing import Any, cast
from urllib.parse import SplitResult, urlsplit

import anyio

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks.envelopes import VERIFICATION, control_body, message_id
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.records import SubscriptionStore, WebhookSubscription
from mcpkit.experimental.events.webhooks.sender import AddressRefused, PostResult, Sender
from mcpkit.experimental.events.webhooks.signing import AsymmetricSigner, signed_headers
from mcpkit.experimental.events.webhooks.wellknown import (
    HostSpacer,
    ReceiverDocuments,
    WellKnownPolicy,
    callback_path_clean,
    path_covered,
)
from mcpkit.experimental.events.wire import CALLBACK_ENDPOINT_ERROR

__all__ = ["Verifier", "callback_error"]


def callback_error(reason: str) -> JSONRPCError:
    """``CallbackEndpointError`` (-32027) with ``data.reason`` (a ``lastError`` category)."""
    return JSONRPCError(
        CALLBACK_ENDPOINT_ERROR,
        f"CallbackEndpointError: the callback endpoint failed verification ({reason})",
        {"reason": reason},
    )


_DEFAULT_PORTS = {"https": 443, "http": 80}


def _origin(parts: SplitResult) -> tuple[str, str, int | None]:
    port = parts.port if parts.port is not None else _DEFAULT_PORTS.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def url_covered(url: str, allowed: str) -> bool:
    """Whether ``allowed`` (a ``verified_urls`` entry) covers ``url`` (rule 1)."""
    try:
        got, want = urlsplit(url), urlsplit(allowed)
        if _origin(got) != _origin(want):
            return False
    except ValueError:
        return False
    return callback_path_clean(got.path or "/") and path_covered(got.path, want.path)


class Verifier:
    """Rules 1-5 for one server. ``well_known``: how receiver documents are used
    (default :class:`~.wellknown.WellKnownPolicy`: enabled)."""

    def __init__(
        self,
        sender: Sender,
        subs: SubscriptionStore,
        limits: WebhookLimits,
        verified_urls: Sequence[str] = (),
        well_known: WellKnownPolicy | None = None,
        *,
        identity: AsymmetricSigner | None = None,
    ) -> None:
        self.identity = identity  # adds a v1a signature to the challenge (.identity)
        self.sender = sender
        self.subs = subs
        self.limits = limits
        self.verified_urls = tuple(verified_urls)
        self.spacer = HostSpacer(limits.verification_interval_s, limits.max_verifications)
        self.documents = ReceiverDocuments(sender, well_known or WellKnownPolicy())
        # kind-ok: unbounded-table verifications in progress only, max_verifications
        self._turns: dict[tuple[str, str], tuple[anyio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def _turn(self, principal: str, host: str) -> AsyncGenerator[None]:
        """Rule 4: one waiting verification per ``(principal, host)``; entries live while
        used (the table holds only requests in progress)."""
        key = (principal, host)
        lock, users = self._turns.get(key) or (anyio.Lock(), 0)
        self._turns[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._turns[key]
            if users <= 1:
                del self._turns[key]
            else:
                self._turns[key] = (lock, users - 1)

    async def is_verified(self, principal: str, url: str) -> bool:
        if any(url_covered(url, allowed) for allowed in self.verified_urls):
            return True
        return await self.subs.verified(principal, url)

    async def verify(self, sub: WebhookSubscription) -> None:
        """Verify ``sub``'s endpoint by its origin's receiver document (rule 5) or by the
        handshake (rules 2-4); on success cache it (rule 1). Raises
        ``CallbackEndpointError`` (-32027)."""
        host = urlsplit(sub.url).hostname or ""
        async with self._turn(sub.principal, host):  # rule 4: principals take turns
            covered = await self.documents.covers(sub.url)
            if not covered:
                await self.spacer.wait(host)
        if covered:
            await self.subs.mark_verified(sub.principal, sub.url, self.limits.verification_ttl_s)
            return
        nonce = secrets.token_urlsafe(32)
        issued = time.monotonic()
        body = control_body(VERIFICATION, challenge=nonce)
        msg = message_id(VERIFICATION)
        headers = signed_headers(
            msg, body, [sub.secret], subscription_id=sub.id, identity=self.identity
        )
        try:
            result: PostResult = await self.sender.post(sub.url, body, headers)
        except AddressRefused:
            raise callback_error("connection_refused") from None
        if result.error is not None and result.status is None:
            raise callback_error(result.error)
        echoed = ""
        if result.ok:
            try:
                answer: Any = json.loads(result.body)
                if isinstance(answer, dict):
                    value = cast(dict[str, Any], answer).get("challenge")
                    echoed = value if isinstance(value, str) else ""
            except (ValueError, RecursionError):  # rule 3: whatever the body, a category
                echoed = ""
        fresh = time.monotonic() - issued <= self.limits.challenge_ttl_s
        answer_bytes = echoed.encode("utf-8", "surrogatepass")  # a lone surrogate is no echo
        if not (fresh and hmac.compare_digest(answer_bytes, nonce.encode())):
            raise callback_error("challenge_failed")
        await self.subs.mark_verified(sub.principal, sub.url, self.limits.verification_ttl_s)
