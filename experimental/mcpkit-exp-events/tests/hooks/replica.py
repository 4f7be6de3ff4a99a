"""One server process of the soak and multi-replica tests: the events extension with
poll, push and webhook delivery of ``soak`` events, on a Redis store (``--redis``) or an
in-memory store persisted to a file (``--store-file``, so cursors survive a restart),
served by uvicorn on 127.0.0.1:``--port``. The tool ``emit(start, count)`` appends
``count`` occurrences with event ids ``soak-<start + i>``; ``remove(name)`` stops
offering an event type (terminating its subscriptions). With ``--hooks-file`` the
``soak`` lifecycle hooks append one JSON line per call (kind, mode of the context,
subscription id, principal, this replica's id) to that file.

    python replica.py --port PORT --ca ca.pem [--redis URL | --store-file PATH]
        [--hooks-file PATH --poll-lease-s S --min-ttl-ms MS]

PORT 0: any free port; the port bound is printed (``replica: serving at URL``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
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
    limits = EventsLimits(
        heartbeat_s=1.0, next_poll_ms=100, max_poll_events=100, poll_lease_s=args.poll_lease_s
    )
    events = EventsExtension(server, store=store, limits=limits)
    events.source("soak", delivery=("poll", "push", "webhook"))
    if args.hooks_file:
        hooks_file: str = args.hooks_file

        def record(kind: str, ctx: Any, sub_id: Any) -> None:
            line = {
                "kind": kind,
                "context": type(ctx).__name__,
                "id": sub_id,
                "principal": ctx.principal,
                "reason": getattr(ctx, "reason", None),
                "replica": args.replica_id,
            }
            fd = os.open(hooks_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (json.dumps(line) + "\n").encode())
            finally:
                os.close(fd)

        @events.on_subscribe("soak")
        async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
            record("subscribe", ctx, sub_id)

        @events.on_unsubscribe("soak")
        async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
            record("unsubscribe", ctx, sub_id)

    ctx = ssl.create_default_context(cafile=args.ca)
    enable_webhooks(
        events,
        policy=AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver),
        verify=ctx,
        limits=WebhookLimits(
            backoff_initial_s=0.1,
            backoff_max_s=1.0,
            max_in_flight=16,
            min_ttl_ms=args.min_ttl_ms,
        ),
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

    @server.tool
    async def remove(name: str) -> bool:
        """Stop offering event type ``name`` (its subscriptions are terminated)."""
        known = name in events.sources
        await events.remove(name)
        return known

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
    ap.add_argument("--hooks-file", default="")
    ap.add_argument("--poll-lease-s", type=float, default=300.0)
    ap.add_argument("--min-ttl-ms", type=int, default=60_000)
    args = ap.parse_args()
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    server = build(args)
    import uvicorn

    app = server.http_app(principal_from_scope=api_key_principal)
    # Bound here so that --port 0 works: the real port is printed once bound (procs.py
    # reads it); a restart passes that port again (EADDRINUSE while it is taken).
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    print(f"replica: serving at http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
