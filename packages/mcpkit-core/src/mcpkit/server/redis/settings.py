"""Where a multi-replica deployment's Redis is and how long its calls may take.

Install with ``pip install "mcpkit-core[redis]"`` (``redis>=5.2``, the asyncio client).
This module itself imports no ``redis``: :func:`connect` loads it on first use, so core
without the extra still imports everything.

Rules:
1. Every Redis call of the stores and the relay is bounded: ``connect_timeout_s`` to open
   a connection, ``op_timeout_s`` for one command (socket timeout); past either the call
   fails with :class:`RedisUnavailable` (never Redis's own exception types), which the
   caller turns into a retryable error.
2. Every key and channel starts with ``prefix`` (``"mcpkit"`` by default) followed by ``:``,
   so several deployments can share one Redis; :meth:`RedisSettings.key` builds them.
3. The URL is never logged whole: :meth:`RedisSettings.redacted_url` (also the
   settings' ``repr``) hides a userinfo password and the value of every
   credential-looking query parameter (any name containing ``pass``, ``pwd``,
   ``secret``, ``token``, ``key``, ``auth`` or ``cred``, e.g. ``?password=``).
4. ``RedisSettings.from_env()`` reads ``MCPKIT_REDIS_URL`` (and ``MCPKIT_REDIS_PREFIX``).
5. Its numbers are checked when made (:func:`mcpkit.core.limits.check_limits`): timeouts
   positive and finite, ``max_connections`` a positive integer.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcpkit.core.limits import check_limits

__all__ = ["REDIS_URL_ENV", "RedisSettings", "RedisUnavailable", "connect", "unavailable"]

REDIS_URL_ENV = "MCPKIT_REDIS_URL"
"""The environment variable naming the Redis of a multi-replica deployment."""


class RedisUnavailable(ConnectionError):
    """Redis could not be reached or did not answer within its bound (rule 1); the
    operation may be retried. HTTP callers answer it with 503 / -32603."""


@dataclass(frozen=True, slots=True, repr=False)
class RedisSettings:
    """One Redis for every replica.

    - ``url``: ``redis://[:password@]host:port/db`` (or ``rediss://``, ``unix://``).
    - ``prefix``: the namespace of every key and channel (rule 2).
    - ``connect_timeout_s`` (2.0): seconds to open a connection (rule 1).
    - ``op_timeout_s`` (2.0): seconds one command may take (rule 1).
    - ``max_connections`` (64): the pool size of one client (per process).
    - ``health_check_interval_s`` (10.0): an idle pooled connection is PINGed before
      reuse after this many seconds, so a restarted Redis is noticed (0: never).
    """

    url: str
    prefix: str = "mcpkit"
    connect_timeout_s: float = 2.0
    op_timeout_s: float = 2.0
    max_connections: int = 64
    health_check_interval_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.url:
            raise ValueError("RedisSettings needs a url (redis://host:port/db)")
        check_limits(self, zero=("health_check_interval_s",))
        if not self.prefix or any(c.isspace() for c in self.prefix):
            raise ValueError("the Redis key prefix must be non-empty and without spaces")

    @classmethod
    def from_env(cls, **overrides: Any) -> RedisSettings | None:
        """Settings from ``MCPKIT_REDIS_URL`` / ``MCPKIT_REDIS_PREFIX``; ``None`` when the
        URL is unset or empty (rule 4)."""
        url = os.environ.get(REDIS_URL_ENV, "").strip()
        if not url:
            return None
        prefix = os.environ.get("MCPKIT_REDIS_PREFIX", "").strip()
        if prefix:
            overrides.setdefault("prefix", prefix)
        return cls(url, **overrides)

    def key(self, *parts: str) -> str:
        """``prefix:part1:part2...`` (rule 2)."""
        return ":".join((self.prefix, *parts))

    def __repr__(self) -> str:
        """Rule 3: the repr shows :meth:`redacted_url`, never the URL itself."""
        return (
            f"RedisSettings(url={self.redacted_url()!r}, prefix={self.prefix!r}, "
            f"connect_timeout_s={self.connect_timeout_s}, op_timeout_s={self.op_timeout_s}, "
            f"max_connections={self.max_connections}, "
            f"health_check_interval_s={self.health_check_interval_s})"
        )

    def redacted_url(self) -> str:
        """The URL with any password, in the userinfo or as a credential-looking query
        parameter (``?password=...``), replaced by ``***`` (rule 3)."""
        url, split = self.url, urlsplit(self.url)
        if split.password is not None:
            netloc = split.netloc.rsplit("@", 1)[1]
            url = urlunsplit(split._replace(netloc=f"{split.username or ''}:***@{netloc}"))
        if split.query:  # by hand: urlunsplit drops the empty netloc of unix:///path
            head, _, rest = url.partition("?")
            query, hash_mark, fragment = rest.partition("#")
            pairs = parse_qsl(query, keep_blank_values=True)
            shown = urlencode([(k, "***" if _credential(k) else v) for k, v in pairs], safe="*")
            url = f"{head}?{shown}{hash_mark}{fragment}"
        return url


_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")


def _credential(name: str) -> bool:
    """Rule 3: a query parameter whose value is (or may be) a credential."""
    lowered = name.lower()
    return any(word in lowered for word in _CREDENTIAL_WORDS)


def connect(settings: RedisSettings, **options: Any) -> Any:
    """A ``redis.asyncio.Redis`` client for ``settings`` (rule 1), returned as ``Any``
    (redis-py's annotations are partial). Connecting is lazy: nothing is sent until the
    first command. ``options`` override ``Redis.from_url`` keyword arguments. Raises
    :class:`ImportError` naming the extra when ``redis`` is not installed."""
    try:
        from redis.asyncio import Redis
    except ImportError as exc:  # pragma: no cover - depends on the environment
        hint = 'Redis support needs the extra: pip install "mcpkit-core[redis]"'
        raise ImportError(hint) from exc
    kwargs: dict[str, Any] = {
        "socket_timeout": settings.op_timeout_s,
        "socket_connect_timeout": settings.connect_timeout_s,
        "max_connections": settings.max_connections,
        "health_check_interval": settings.health_check_interval_s,
        "retry_on_timeout": False,
    }
    kwargs.update(options)
    return cast(Any, Redis).from_url(settings.url, **kwargs)


@contextmanager
def unavailable(what: str) -> Generator[None]:
    """Rule 1: Redis's connection and timeout failures (and the OS's) become
    :class:`RedisUnavailable` naming ``what`` was being done."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    try:
        yield
    except RedisUnavailable:
        raise
    except (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError) as exc:
        raise RedisUnavailable(f"Redis unavailable ({what}): {type(exc).__name__}: {exc}") from exc
