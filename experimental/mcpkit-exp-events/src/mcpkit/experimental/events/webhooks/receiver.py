"""The client side of webhook delivery: a receiver endpoint for Starlette (SEP-3415
§Webhook event delivery, §Non-event webhook bodies, §Endpoint verification).

Rules:
1. Only ``POST`` is served (405 otherwise); the body is read up to ``max_body_bytes``
   (413 above: final for the sender); ``webhook-id``, ``webhook-timestamp``,
   ``webhook-signature`` and ``X-MCP-Subscription-Id`` are required (400).
2. ``webhook-timestamp`` more than ``tolerance_s`` (at most 300, the Standard Webhooks
   window) from now is refused (400) before any HMAC is computed.
3. The signature is verified over the raw body with the ``standardwebhooks`` package,
   trying only the secrets bound to the subscription id (two during a rotation); none
   verifying is 401. A subscription id is bound to a secret only by :meth:`bind`, which
   the client calls with the id of its own subscribe response: a delivery is never
   verified with another subscription's secret, nor with a registered secret not yet
   bound, so one server cannot inject into (or poison the cursor of) another server's
   subscription. A delivery for an id with no bound secret is 425 (retryable: the
   subscribe response may not have arrived yet). At most ``max_subscriptions`` ids are
   bound (the least recently bound is forgotten, with its cursor).
4. A ``verification`` envelope whose signature verifies with a secret bound to the
   header's id or a registered (pending) secret is answered
   ``200 {"challenge": <nonce>}``; it binds nothing and is not forwarded.
5. Duplicates, per subscription: a ``(subscription id, webhook-id)`` accepted within the
   last ``dedupe_window_s`` (at most ``max_seen`` remembered) is answered 200 and not
   forwarded again; one being handled right now is answered 409 (the sender retries).
   The same ``webhook-id`` for two subscriptions is two deliveries.
6. Events, ``gap`` and ``terminated`` envelopes go to the async ``on_message`` callback;
   only when it returns is the delivery answered 2xx (the SEP's acknowledgement
   contract); if it raises, 500 (the sender retries) and the id is not remembered.
7. The latest cursor per subscription (from events and ``gap``) is kept for refreshes
   (:meth:`WebhookReceiver.cursor`). Secrets never reach logs.
8. With ``server_keys`` (:class:`~.identity.ServerKeys`, optional) every POST, the
   verification challenge included, must also carry a ``v1a,`` signature by a trusted
   server key, checked after the HMAC (401 otherwise); without it ``v1a,`` signatures
   are ignored (SEP-3415 "Server identity (optional)").
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

if TYPE_CHECKING:
    from mcpkit.experimental.events.webhooks.identity import ServerKeys

__all__ = ["WebhookMessage", "WebhookReceiver"]

logger = logging.getLogger("mcpkit.experimental.events.webhooks")
JSON = dict[str, Any]
_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature", "x-mcp-subscription-id")


@dataclass(frozen=True, slots=True)
class WebhookMessage:
    """One accepted delivery: ``kind`` ``event`` (``body`` is the EventOccurrence),
    ``gap`` or ``terminated`` (the control envelope), with its subscription id and
    ``webhook-id``."""

    subscription_id: str
    webhook_id: str
    kind: Literal["event", "gap", "terminated"]
    body: JSON


class WebhookReceiver:
    """An ASGI app that receives MCP webhook deliveries (rules 1-7); mount it at the
    callback URL's path. ``on_message``: ``async (WebhookMessage) -> None``.
    ``server_keys``: require server identity (rule 8)."""

    def __init__(
        self,
        on_message: Callable[[WebhookMessage], Awaitable[None]],
        *,
        tolerance_s: float = 300.0,
        dedupe_window_s: float = 3600.0,
        max_seen: int = 100_000,
        max_body_bytes: int = 256 * 1024,
        max_pending_secrets: int = 1000,
        max_subscriptions: int = 10_000,
        server_keys: ServerKeys | None = None,
    ) -> None:
        if not 0 < tolerance_s <= 300:
            raise ValueError("tolerance_s must be in (0, 300] (the Standard Webhooks window)")
        self.on_message = on_message
        self.tolerance_s = tolerance_s
        self.dedupe_window_s = dedupe_window_s
        self.max_seen = max_seen
        self.max_body_bytes = max_body_bytes
        self.max_pending_secrets = max_pending_secrets
        self.max_subscriptions = max_subscriptions
        self.server_keys = server_keys
        self._bound: OrderedDict[str, list[str]] = OrderedDict()
        self._pending: OrderedDict[str, None] = OrderedDict()
        self._seen: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._busy: set[tuple[str, str]] = set()
        self._cursors: dict[str, str | None] = {}

    # -- secrets --------------------------------------------------------------------
    def register(self, secret: str) -> None:
        """Accept ``secret`` for a subscription whose id is not known yet (rule 3)."""
        self._pending[secret] = None
        while len(self._pending) > self.max_pending_secrets:
            self._pending.popitem(last=False)

    def bind(self, subscription_id: str, secret: str) -> None:
        """Route ``subscription_id`` to ``secret`` (after the subscribe response, rule 3);
        a different secret for a bound id is a rotation: both verify until the next one.
        Beyond ``max_subscriptions`` bound ids the least recently bound is forgotten."""
        self._pending.pop(secret, None)
        secrets_ = self._bound.setdefault(subscription_id, [])
        self._bound.move_to_end(subscription_id)
        while len(self._bound) > self.max_subscriptions:
            self.forget(next(iter(self._bound)))
        if secret in secrets_:
            return
        secrets_.insert(0, secret)
        del secrets_[2:]

    def forget(self, subscription_id: str) -> None:
        """Stop accepting deliveries for ``subscription_id``."""
        self._bound.pop(subscription_id, None)
        self._cursors.pop(subscription_id, None)

    def cursor(self, subscription_id: str) -> str | None:
        """The latest cursor received for ``subscription_id`` (rule 7)."""
        return self._cursors.get(subscription_id)

    # -- ASGI -----------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._handle(Request(scope, receive))
        await response(scope, receive, send)

    async def _body(self, request: Request) -> bytes | None:
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > self.max_body_bytes:
                return None
        return bytes(data)

    def _verify(self, body: bytes, headers: dict[str, str], candidates: list[str]) -> str | None:
        for secret in candidates:
            try:
                Webhook(secret).verify(body, headers, json_parse=False)
            except (WebhookVerificationError, ValueError, TypeError):
                continue
            return secret
        return None

    def _remember(self, key: tuple[str, str]) -> None:
        now = time.monotonic()
        self._seen[key] = now
        self._seen.move_to_end(key)
        floor = now - self.dedupe_window_s
        while self._seen and (
            len(self._seen) > self.max_seen or next(iter(self._seen.values())) < floor
        ):
            self._seen.popitem(last=False)

    def _seen_recently(self, key: tuple[str, str]) -> bool:
        at = self._seen.get(key)
        return at is not None and at >= time.monotonic() - self.dedupe_window_s

    async def _handle(self, request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST"})
        body = await self._body(request)
        if body is None:
            return Response(status_code=413)
        headers = {k: request.headers.get(k, "") for k in _HEADERS}
        if not all(headers.values()):
            return Response("missing Standard Webhooks or X-MCP-Subscription-Id header", 400)
        try:
            stamp = float(headers["webhook-timestamp"])
        except ValueError:
            return Response("bad webhook-timestamp", 400)
        if abs(time.time() - stamp) > self.tolerance_s:
            return Response("webhook-timestamp outside the tolerance", 400)
        sub_id = headers["x-mcp-subscription-id"]
        bound = self._bound.get(sub_id, [])
        if self._verify(body, headers, bound) is not None:
            trusted = True  # signed with a secret bound to this id
        elif self._verify(body, headers, list(reversed(self._pending))) is not None:
            trusted = False  # a registered secret: good for a verification only (rule 4)
        elif not bound:
            return Response("unknown subscription", 425)
        else:
            return Response("signature does not verify", 401)
        if self.server_keys is not None and not await self.server_keys.verify(body, headers):
            return Response("server identity signature does not verify", 401)  # rule 8
        try:
            message = json.loads(body)
        except ValueError:
            return Response("body is not JSON", 400)
        if not isinstance(message, dict):
            return Response("body is not a JSON object", 400)
        message = dict[str, Any](message)  # pyright: ignore[reportUnknownArgumentType]
        kind = message.get("type")
        if kind == "verification":
            return JSONResponse({"challenge": message.get("challenge")})
        if not trusted:  # rule 3: a pending secret never verifies a delivery
            if bound:
                return Response("signature does not verify", 401)
            return Response("unknown subscription", 425)
        webhook_id = headers["webhook-id"]
        key = (sub_id, webhook_id)
        if self._seen_recently(key):
            return Response(status_code=200)
        if key in self._busy:
            return Response("being handled", 409)
        if kind is None:
            typed: Literal["event", "gap", "terminated"] = "event"
        elif kind in ("gap", "terminated"):
            typed = "gap" if kind == "gap" else "terminated"
        else:
            return Response(status_code=200)  # an envelope type this receiver ignores
        self._busy.add(key)
        try:
            await self.on_message(WebhookMessage(sub_id, webhook_id, typed, message))
        except Exception:
            logger.exception("the webhook on_message callback failed; answering 500")
            return Response(status_code=500)
        finally:
            self._busy.discard(key)
        self._remember(key)
        if typed != "terminated" and "cursor" in message and sub_id in self._bound:
            cursor = message["cursor"]
            self._cursors[sub_id] = cursor if isinstance(cursor, str) else None
        elif typed == "terminated":
            self.forget(sub_id)
        return Response(status_code=204)
