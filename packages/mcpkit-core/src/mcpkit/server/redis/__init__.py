"""mcpkit on Redis: several replicas (or workers) sharing event store, notifications and
sessions. Needs ``pip install "mcpkit-core[redis]"``; importing this package does not
import ``redis`` (everything that talks to Redis loads it on first use).
"""

from __future__ import annotations

from mcpkit.server.redis.settings import REDIS_URL_ENV, RedisSettings, RedisUnavailable, connect

__all__ = ["REDIS_URL_ENV", "RedisSettings", "RedisUnavailable", "connect"]
