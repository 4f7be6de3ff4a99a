"""One server process of the soak and multi-replica tests: the events extension with
poll, push and webhook delivery of ``soak`` events, on a Redis store (``--redis``) or an
in-memory store persisted to a file (``--store-file``, so cursors survive a restart),
served by uvicorn on 127.0.0.1:``--port``. The tool ``emit(start, count)`` appends
``count`` occurrences with event ids ``soak-<start + i>``.

    python replica.py --port 8001 --ca ca.pem [--redis URL | --store-file PATH]
"""

from __future__ import annotations

import argparse
import ssl
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from hookkit import api_key_principal, loopback_resolver

from mcpkit.experimental.events import EventsExtension, EventsLimits, InMemoryStore
from mcpkit.experimental.events.store import OccurrenceStore, now_ms
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookLimits,
    enable_webhooks,
)
from mcpkit.server import Server


def build(args: argparse.Namespace) -> Server:
    server = Server("events-replica")
    store: OccurrenceStore
    options: dict[str, Any] = {}
    if args.redis:
        from mcpkit.experimental.events.redis_store import RedisOccurrenceStore, RedisSubscriptions
        from mcpkit.server.redis import RedisSettings

        settings = RedisSettings(args.redis)
        redis_store = RedisOccurrenceStore(settings, max_events=args.retain, max_age_ms=None)
        store = redis_store
        server.add_lifespan(lambda _s: redis_store.running())
        options["subscriptions"] = RedisSubscriptions(settings)
    else:
        store = InMemoryStore(max_events=args.retain, max_age_ms=None, path=args.store_file)
    limits = EventsLimits(heartbeat_s=1.0, next_poll_ms=100, max_poll_events=100)
    events = EventsExtension(server, store=store, limits=limits)
    events.source("soak", delivery=("poll", "push", "webhook"))
    ctx = ssl.create_default_context(cafile=args.ca)
    enable_webhooks(
        events,
        policy=AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver),
        verify=ctx,
        limits=WebhookLimits(backoff_initial_s=0.1, backoff_max_s=1.0, max_in_flight=16),
        rescan_s=0.2,
        lease_s=args.lease_s,
        replica_id=args.replica_id or None,
        **options,
    )

    @server.tool
    async def emit(start: int, count: int) -> int:
        """Append ``count`` soak occurrences; returns the last position."""
        last = 0
        for i in range(start, start + count):
            occ = await store.append(
                "soak", event_id=f"soak-{i}", timestamp_ms=now_ms(), data={"i": i}
            )
            last = occ.position
        return last

    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--redis", default="")
    ap.add_argument("--store-file", default=None)
    ap.add_argument("--retain", type=int, default=200_000)
    ap.add_argument("--lease-s", type=float, default=2.0)
    ap.add_argument("--replica-id", default="")
    args = ap.parse_args()
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    server = build(args)
    import uvicorn

    app = server.http_app(principal_from_scope=api_key_principal)
    uvicorn.run(
        app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=1
    )


if __name__ == "__main__":
    main()
