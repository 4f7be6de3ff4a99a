"""mcpkit on Redis: several replicas (or workers) sharing the event store, the
notification hub and the handshake-era sessions. Needs ``pip install
"mcpkit-core[redis]"``; importing this package does not import ``redis`` (everything that
talks to Redis loads it on first use).

One call wires a server for multi-replica mode::

    from mcpkit.server.redis import RedisSettings, replicate

    options = replicate(server, RedisSettings("redis://127.0.0.1:6379/0"))
    app = http_app(server, **options)  # or run_http(server, redis=...) which does this

Rules:
1. :func:`replicate` checks the shared secret first (:mod:`mcpkit.server.replication`
   rule 2) and raises :class:`~mcpkit.server.replication.SecretError` before touching
   anything else.
2. It sets ``server.hub`` to a :class:`~mcpkit.server.redis.relay.RedisHub` and registers
   a server lifespan running the hub's relay and closing the Redis pools on shutdown.
3. It returns the endpoint options to pass to ``http_app`` / ``StreamableHTTP`` /
   ``run_http``: ``event_store`` (a :class:`~mcpkit.server.redis.events.RedisEventStore`
   whose event ids are keyed by ``server.sealer.derive("event-ids")``, the same on every
   replica) and ``session_store`` (a
   :class:`~mcpkit.server.redis.sessions.RedisSessionStore`: any replica serves any
   handshake-era session, :mod:`mcpkit.server.http.shared`).
4. Nothing connects until serving starts: Redis may be down at startup; the hub
   reconnects on its own and the store answers retryable errors until it is back.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcpkit.server.redis.sessions import RedisSessionStore
from mcpkit.server.redis.settings import REDIS_URL_ENV, RedisSettings, RedisUnavailable, connect

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = [
    "REDIS_URL_ENV",
    "RedisSessionStore",
    "RedisSettings",
    "RedisUnavailable",
    "connect",
    "replicate",
]


def replicate(
    server: Server,
    settings: RedisSettings,
    *,
    secret: bytes | None = None,
    replica_id: str | None = None,
    event_store_options: dict[str, Any] | None = None,
    session_store_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Wire ``server`` to run as one replica of many on ``settings``' Redis (rules 1-4).

    ``secret``: the shared secret (else the server's configured ``state_secret`` or
    ``MCPKIT_SECRET``..., :func:`~mcpkit.server.replication.load_secret`);
    ``replica_id``: this process's id on the relay (default random);
    ``event_store_options``: bounds of the :class:`RedisEventStore` (``max_bytes`` ...);
    ``session_store_options``: those of the :class:`RedisSessionStore` (``ttl_s`` ...).
    Returns ``{"event_store": ..., "session_store": ...}``. Raises ``SecretError``
    (rule 1)."""
    from mcpkit.server.redis.events import RedisEventStore
    from mcpkit.server.redis.relay import RedisHub
    from mcpkit.server.replicas import apply_shared_secret
    from mcpkit.server.replication import load_secret

    apply_shared_secret(server, load_secret(secret), why=f"Redis at {settings.redacted_url()}")
    hub = RedisHub(settings, replica_id=replica_id)
    store = RedisEventStore(
        settings, secret=server.sealer.derive("event-ids"), **(event_store_options or {})
    )
    sessions = RedisSessionStore.from_settings(
        settings, replica_id=replica_id, **(session_store_options or {})
    )
    server.hub = hub

    @asynccontextmanager
    async def relay(_: Server) -> AsyncGenerator[None]:
        try:
            async with hub.running():
                yield None  # never the server's lifespan state
        finally:
            await hub.aclose()
            await store.aclose()
            await sessions.aclose()

    server.add_lifespan(relay)
    return {"event_store": store, "session_store": sessions}
