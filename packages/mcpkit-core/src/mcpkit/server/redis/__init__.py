"""mcpkit on Redis: several replicas (or workers) sharing sessions, events and
notifications. Needs ``pip install "mcpkit-core[redis]"``; importing this package does not
import ``redis``.
"""

from __future__ import annotations

from mcpkit.server.redis.sessions import RedisSessionStore

__all__ = ["RedisSessionStore"]
