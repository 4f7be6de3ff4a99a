"""mcpkit with the events extension (``mcpkit-exp-events``): one event type, ``bench``
(poll, push and webhook), and a tool ``emit(count: int) -> int`` that appends ``count``
occurrences to the in-memory store (the producer of the ``events`` suite).

Webhook delivery trusts the CA in ``--ca`` (the harness's test CA) and its SSRF guard is
configured to allow loopback, resolving ``hooks.bench`` to 127.0.0.1 (the only name it
resolves); ``--max-in-flight`` is ``WebhookLimits.max_in_flight`` (default 8, the
library's). Callers authenticate with ``Authorization: Bearer bench`` (webhook
subscriptions need a principal).
"""

from __future__ import annotations

import ssl
from typing import Any

from _serve import check_args, parser, serve_asgi


def principal(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value == b"Bearer bench":
            return "bench"
    return None


async def resolve(host: str, port: int) -> list[str]:
    if host != "hooks.bench":
        raise OSError(f"{host} does not resolve here")
    return ["127.0.0.1"]


def build(ca: str | None, max_in_flight: int = 8) -> Any:
    from mcpkit.experimental.events import EventsExtension, EventsLimits
    from mcpkit.experimental.events.store import InMemoryStore, now_ms
    from mcpkit.experimental.events.webhooks import (
        AddressPolicy,
        WebhookLimits,
        enable_webhooks,
    )
    from mcpkit.server import Server

    server = Server("bench-events")
    store = InMemoryStore(max_events=1_000_000, max_age_ms=None)
    events = EventsExtension(server, store=store, limits=EventsLimits(max_stream_pending=1024))
    events.source("bench", delivery=("poll", "push", "webhook"))
    enable_webhooks(
        events,
        policy=AddressPolicy(allow=["127.0.0.0/8"], resolver=resolve),
        verify=ssl.create_default_context(cafile=ca) if ca else True,
        limits=WebhookLimits(max_in_flight=max_in_flight),
    )

    @server.tool()
    async def emit(count: int) -> int:  # pyright: ignore[reportUnusedFunction]
        """Append ``count`` occurrences; returns the last position."""
        last = 0
        for i in range(count):
            occ = await store.append(
                "bench", event_id=f"b{i}", timestamp_ms=now_ms(), data={"i": i}
            )
            last = occ.position
        return last

    return server


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--ca", default=None)
    p.add_argument("--max-in-flight", type=int, default=8)
    args = p.parse_args()
    check_args(args)
    server = build(args.ca, args.max_in_flight)
    serve_asgi(server.http_app(principal_from_scope=principal), args.host, args.port)


if __name__ == "__main__":
    main()
