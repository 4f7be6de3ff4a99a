"""The client side of webhook delivery: a receiver endpoint for Starlette (SEP-3415
§Webhook event delivery, §Non-event webhook bodies, §Endpoint verification).

Rules:
1. Only ``POST`` is served (405 otherwise); the body is read up to ``max_body_bytes``
   (413 above: final for the sender); ``webhook-id``, ``webhook-timestamp``,
   ``webhook-signature`` and ``X-MCP-Subscription-Id`` are required (400); a signed
   body that is not a JSON object (nested too deeply to parse included) is 400.
2. ``webhook-timestamp`` more than ``tolerance_s`` (at most 300, the Standard Webhooks
   window) from now is refused (400) before any HMAC is computed.
3. Routes scope everything a server can name. The receiver is mounted once; each server
   the client talks to gets its own route, one path segment under the mount
   (:meth:`WebhookReceiver.route_for`, appended to the callback URL by
   :func:`~.client.subscribe_webhook`), and a POST is handled within the route of its
   path only (a path that is not one segment of ``[A-Za-z0-9_-]{1,64}`` is 404).
   Secrets are registered, ids bound, cursors kept and duplicates remembered per
   ``(route, subscription id)``: a subscription id is a routing hint chosen by a
   server, so one server can never reach, rebind or pre-claim another server's
   subscriptions, whatever ids it returns or sends.
4. The signature is verified over the raw body with the ``standardwebhooks`` package,
   trying only the secrets bound to ``(route, id)`` (two during a rotation); none
   verifying is 401. An id is bound only by :meth:`~WebhookReceiver.bind`, which the
   client calls with the id of its own subscribe response; a bind of an id already
   bound in the route to other secrets is refused with :class:`SubscriptionIdConflict`
   unless it names one of them as the secret it ``replaces`` (a rotation). A delivery
   is never verified with another subscription's secret nor with a registered secret
   not yet bound. A delivery for an id with no bound secret is 425 (retryable: the
   subscribe response may not have arrived yet). At most ``max_subscriptions`` ids are
   bound over all routes (the least recently bound is forgotten, with its cursor),
   each of at most :data:`MAX_SUBSCRIPTION_ID_BYTES` (a longer one is refused).
5. A ``verification`` envelope whose signature verifies with a secret bound to
   ``(route, id)`` or a secret registered (pending) in the route is answered
   ``200 {"challenge": <nonce>}``; it binds nothing and is not forwarded.
6. Duplicates, per subscription: a ``(route, subscription id, webhook-id)`` accepted
   within the last ``dedupe_window_s`` is answered 200 and not forwarded again; one
   being handled right now is answered 409 (the sender retries). The same
   ``webhook-id`` for two subscriptions is two deliveries. An entry is the SHA-256 of
   the subscription id and ``webhook-id`` (32 bytes whatever their length: both are the
   server's choice, so a server sending long ids cannot grow the table beyond
   ``max_seen`` small entries). At most ``max_seen`` are
   remembered over all routes; above it the oldest of the route remembering the most
   gives way, so a server flooding its own route cannot evict another route's entries
   while it holds more than they do.
7. Events, ``gap`` and ``terminated`` envelopes go to the async ``on_message`` callback
   with their route; only when it returns is the delivery answered 2xx (the SEP's
   acknowledgement contract); if it raises, 500 (the sender retries) and the id is not
   remembered.
8. The latest cursor per ``(route, id)`` (from events and ``gap``) is kept for refreshes
   (:meth:`WebhookReceiver.cursor`), when it is at most :data:`MAX_CURSOR_BYTES` (the
   server's choice: a longer one is kept as None, so ``max_subscriptions`` cursors
   hold at most that many KiB; issue 25 §3). Secrets never reach logs.
9. :meth:`WebhookReceiver.routes` mounts the receiver and serves the receiver document
   ``/.well-known/mcp-webhook-receiver.json`` for the mount (SEP option 4,
   :mod:`.wellknown`), so servers verify the callback URLs below it without a challenge.
   Mounted at the origin's root, the document would be ``"/"``: it would vouch for every
   path of the application the routes join (its own endpoints included), so a root
   mount publishes it only when asked (``well_known=True``).
10. With ``server_keys`` (:class:`~.identity.ServerKeys`, optional) every POST on every
    route, the verification challenge included, must also carry a ``v1a,`` signature by
    a trusted server key, checked after the HMAC (401 otherwise); without it ``v1a,``
    signatures are ignored (SEP-3415 "Server identity (optional)"). Such a receiver's
    :meth:`~WebhookReceiver.routes` leaves out the receiver document unless asked
    (``well_known=True``): the document verifies a callback URL with no challenge POST,
    so a server without a trusted key would subscribe successfully and then have every
    delivery refused; with the challenge its ``events/subscribe`` fails (-32027).
11. A route pinned to its MCP server (:meth:`WebhookReceiver.pin`) accepts, under rule
    10, only that server's ``v1a`` keys when ``server_keys`` fetches them (identity
    rule 10): a trusted server holding another subscription's leaked secret cannot sign
    on a route that is not its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.types import Receive, Scope, Send

from mcpkit.core.shapes import JSON, as_object
from mcpkit.experimental.events.webhooks.wellknown import well_known_route

if TYPE_CHECKING:
    from mcpkit.experimental.events.webhooks.identity import ServerKeys

__all__ = ["SubscriptionIdConflict", "WebhookMessage", "WebhookReceiver"]

MAX_SUBSCRIPTION_ID_BYTES = 1024
"""Rule 4: the longest subscription id bound (UTF-8 bytes): ``max_subscriptions`` ids
hold at most that many KiB whatever a server returns."""
MAX_CURSOR_BYTES = 1024
"""Rule 8: the longest cursor kept (UTF-8 bytes; ``EventsLimits.max_cursor_bytes``'
default, the longest an mcpkit server accepts back)."""

logger = logging.getLogger("mcpkit.experimental.events.webhooks")
_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature", "x-mcp-subscription-id")
_ROUTE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SubscriptionIdConflict(ValueError):
    """A server returned a subscription id already bound in the route to another
    subscription's secrets (rule 4). ``route`` and ``subscription_id`` name it."""

    def __init__(self, route: str, subscription_id: str) -> None:
        super().__init__(
            f"subscription id {subscription_id!r} is already bound on receiver route"
            f" {route!r} to another subscription's secret; refusing to rebind it (ids are"
            " routing hints chosen by the server, SEP-3415 §Subscription identity). The"
            " same name and arguments subscribed twice? Refresh the existing subscription."
        )
        self.route = route
        self.subscription_id = subscription_id


@dataclass(frozen=True, slots=True)
class WebhookMessage:
    """One accepted delivery: ``kind`` ``event`` (``body`` is the EventOccurrence),
    ``gap`` or ``terminated`` (the control envelope), with its subscription id,
    ``webhook-id`` and the receiver ``route`` it arrived on (rule 3: the pair
    ``(route, subscription_id)`` names a subscription;
    :meth:`~.client.WebhookSubscription.owns` tests it)."""

    subscription_id: str
    webhook_id: str
    kind: Literal["event", "gap", "terminated"]
    body: JSON
    route: str


def check_route(route: str) -> str:
    """``route`` when it is one path segment of ``[A-Za-z0-9_-]{1,64}``, else ValueError."""
    if not _ROUTE.fullmatch(route):
        raise ValueError(f"a receiver route is 1 to 64 of [A-Za-z0-9_-], got {route!r}")
    return route


def _route_path(scope: Scope) -> str:
    """The request path below the mount (the ASGI ``root_path`` removed)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class WebhookReceiver:
    """An ASGI app that receives MCP webhook deliveries (rules 1-11); mount it once (e.g.
    ``Starlette(routes=receiver.routes("/hooks"))``) and give
    :func:`~.client.subscribe_webhook` the mount's URL. ``on_message``:
    ``async (WebhookMessage) -> None``.
    ``server_keys``: require server identity (rule 10)."""

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
        # kind-ok: unbounded-table max_subscriptions routes, 32 hex digits each
        self._servers: dict[str, str] = {}
        """Rule 11: route -> the MCP server URL its deliveries come from."""
        # kind-ok: unbounded-table max_subscriptions, ids MAX_SUBSCRIPTION_ID_BYTES
        self._bound: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
        # kind-ok: unbounded-table max_pending_secrets secrets this client generated
        self._pending: OrderedDict[tuple[str, str], None] = OrderedDict()
        # kind-ok: unbounded-table max_seen 32-byte digests over all routes
        self._seen: dict[str, OrderedDict[bytes, float]] = {}
        self._seen_total = 0
        # kind-ok: unbounded-table deliveries being handled now, 32-byte digests
        self._busy: set[tuple[str, bytes]] = set()
        # kind-ok: unbounded-table keys are bound ids (max_subscriptions), cursors MAX_CURSOR_BYTES
        self._cursors: dict[tuple[str, str], str | None] = {}

    # -- routes ---------------------------------------------------------------------
    @staticmethod
    def route_for(label: str) -> str:
        """The route of the server ``label`` names (rule 3): 32 hex digits of SHA-256 over
        it, stable across restarts (so a resubscribe reaches the same callback URL)."""
        return hashlib.sha256(label.encode()).hexdigest()[:32]

    @staticmethod
    def callback_url(base_url: str, route: str) -> str:
        """``base_url`` (where the receiver is mounted) with ``route`` appended."""
        return f"{base_url.rstrip('/')}/{check_route(route)}"

    def routes(self, mount_path: str, *, well_known: bool | None = None) -> list[BaseRoute]:
        """Starlette routes: this receiver mounted at ``mount_path`` and (``well_known``)
        the receiver document covering it (rule 9), served at the origin's root.
        ``well_known`` defaults to True without ``server_keys`` and False with them
        (rule 10: the document would spare an untrusted server the challenge) or for a
        root mount (rule 9: it would cover the whole origin)."""
        mount = Mount(mount_path.rstrip("/"), app=self)
        if well_known is None:
            well_known = self.server_keys is None and mount_path.strip("/") != ""
        if not well_known:
            return [mount]
        return [well_known_route(mount_path.rstrip("/") + "/"), mount]

    # -- secrets --------------------------------------------------------------------
    def register(self, secret: str, *, route: str) -> None:
        """Accept ``secret`` in ``route`` for a subscription whose id is not known yet
        (verification envelopes only, rule 5)."""
        self._pending[(check_route(route), secret)] = None
        self._pending.move_to_end((route, secret))
        while len(self._pending) > self.max_pending_secrets:
            self._pending.popitem(last=False)

    def pin(self, route: str, server_url: str) -> None:
        """Rule 11: deliveries on ``route`` come from the MCP server at ``server_url``
        (:func:`~.client.subscribe_webhook` pins every route it subscribes on). With
        ``server_keys`` whose origins include that server's, a ``v1a`` signature on the
        route verifies only under that server's keys. At most ``max_subscriptions``
        routes are pinned (``ValueError`` beyond: a pin is never forgotten, which would
        widen the keys its route accepts)."""
        route = check_route(route)
        if route not in self._servers and len(self._servers) >= self.max_subscriptions:
            raise ValueError(f"more than {self.max_subscriptions} pinned routes")
        self._servers[route] = server_url

    def unregister(self, secret: str, *, route: str) -> None:
        """Drop a registered secret that will not be bound."""
        self._pending.pop((route, secret), None)

    def bind(
        self, subscription_id: str, secret: str, *, route: str, replaces: str | None = None
    ) -> None:
        """Route ``(route, subscription_id)`` to ``secret`` (after the subscribe response,
        rule 4). An id bound to other secrets is rebound only when ``replaces`` is one of
        them (a rotation: both verify until the next one); otherwise
        :class:`SubscriptionIdConflict`. Beyond ``max_subscriptions`` bound ids the least
        recently bound is forgotten. ``ValueError`` for an id over
        :data:`MAX_SUBSCRIPTION_ID_BYTES` (the server's choice: rule 4)."""
        if len(subscription_id.encode()) > MAX_SUBSCRIPTION_ID_BYTES:
            raise ValueError(
                f"a subscription id over {MAX_SUBSCRIPTION_ID_BYTES} bytes is not bound"
            )
        key = (check_route(route), subscription_id)
        current = self._bound.get(key)
        if current and secret not in current and replaces not in current:
            raise SubscriptionIdConflict(route, subscription_id)
        self._pending.pop((route, secret), None)
        secrets_ = self._bound.setdefault(key, [])
        self._bound.move_to_end(key)
        while len(self._bound) > self.max_subscriptions:
            self._drop(next(iter(self._bound)))
        if secret in secrets_:
            return
        secrets_.insert(0, secret)
        del secrets_[2:]

    def forget(self, subscription_id: str, *, route: str) -> None:
        """Stop accepting deliveries for ``(route, subscription_id)``."""
        self._drop((route, subscription_id))

    def _drop(self, key: tuple[str, str]) -> None:
        self._bound.pop(key, None)
        self._cursors.pop(key, None)

    def cursor(self, subscription_id: str, *, route: str) -> str | None:
        """The latest cursor received for ``(route, subscription_id)`` (rule 8)."""
        return self._cursors.get((route, subscription_id))

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

    def _hmac(self, body: bytes, headers: dict[str, str], candidates: list[str]) -> str | None:
        """The first of ``candidates`` whose ``v1,`` HMAC verifies (rule 4)."""
        for secret in candidates:
            try:
                Webhook(secret).verify(body, headers, json_parse=False)
            except (WebhookVerificationError, ValueError, TypeError):
                continue
            return secret
        return None

    def _authenticate(
        self, route: str, sub_id: str, body: bytes, headers: dict[str, str]
    ) -> Literal["bound", "pending"] | None:
        """Who signed: a secret bound to ``(route, id)``, a secret pending in the route
        (good for a verification only), or nobody. Further checks of a delivery (such as
        a server-identity signature) belong here, beside the HMAC."""
        if self._hmac(body, headers, self._bound.get((route, sub_id), [])) is not None:
            return "bound"
        pending = [s for (r, s) in reversed(self._pending) if r == route]
        if self._hmac(body, headers, pending) is not None:
            return "pending"
        return None

    @staticmethod
    def _seen_key(route: str, sub_id: str, webhook_id: str) -> tuple[str, bytes]:
        """Rule 6: ``(route, SHA-256 of the id and webhook-id)``, a fixed-size entry."""
        digest = hashlib.sha256(f"{len(sub_id)}:{sub_id}:{webhook_id}".encode()).digest()
        return route, digest

    def _remember(self, key: tuple[str, bytes]) -> None:
        now = time.monotonic()
        route, entry = key
        seen = self._seen.setdefault(route, OrderedDict())
        if entry not in seen:
            self._seen_total += 1
        seen[entry] = now
        seen.move_to_end(entry)
        floor = now - self.dedupe_window_s
        while seen and next(iter(seen.values())) < floor:
            seen.popitem(last=False)
            self._seen_total -= 1
        while self._seen_total > self.max_seen:  # rule 6: the fullest route gives way
            fullest = max(self._seen, key=lambda r: len(self._seen[r]))
            table = self._seen[fullest]
            table.popitem(last=False)
            self._seen_total -= 1
            if not table:
                del self._seen[fullest]
        if not seen:
            self._seen.pop(route, None)

    def _seen_recently(self, key: tuple[str, bytes]) -> bool:
        table = self._seen.get(key[0])
        at = table.get(key[1]) if table is not None else None
        return at is not None and at >= time.monotonic() - self.dedupe_window_s

    async def _handle(self, request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST"})
        route = _route_path(request.scope).strip("/")
        if not _ROUTE.fullmatch(route):
            return Response("not a receiver route", 404)
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
        bound = (route, sub_id) in self._bound
        signer = self._authenticate(route, sub_id, body, headers)
        if signer is None:
            if not bound:
                return Response("unknown subscription", 425)
            return Response("signature does not verify", 401)
        keys = self.server_keys
        if keys is not None and not await keys.verify(
            body, headers, server=self._servers.get(route)
        ):
            return Response("server identity signature does not verify", 401)  # rule 10
        try:
            parsed = as_object(json.loads(body))
        except (ValueError, RecursionError):  # nested too deeply is not JSON we take
            return Response("body is not JSON", 400)
        if parsed is None:
            return Response("body is not a JSON object", 400)
        message = dict(parsed)
        kind = message.get("type")
        if kind == "verification":
            return JSONResponse({"challenge": message.get("challenge")})
        if signer == "pending":  # rule 4: a pending secret never verifies a delivery
            if bound:
                return Response("signature does not verify", 401)
            return Response("unknown subscription", 425)
        webhook_id = headers["webhook-id"]
        key = self._seen_key(route, sub_id, webhook_id)
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
            await self.on_message(WebhookMessage(sub_id, webhook_id, typed, message, route))
        except Exception:
            logger.exception("the webhook on_message callback failed; answering 500")
            return Response(status_code=500)
        finally:
            self._busy.discard(key)
        self._remember(key)
        if typed != "terminated" and "cursor" in message and (route, sub_id) in self._bound:
            cursor = message["cursor"]
            kept = isinstance(cursor, str) and len(cursor.encode()) <= MAX_CURSOR_BYTES
            self._cursors[(route, sub_id)] = cursor if kept else None
        elif typed == "terminated":
            self.forget(sub_id, route=route)
        return Response(status_code=204)
