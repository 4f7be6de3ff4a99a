"""``RedisEventStore``: the :class:`~mcpkit.server.http.events.EventStore` of resumable
SSE streams on Redis, shared by every replica (MCP 2025-11-25 ``basic/transports``
§Resumability and Redelivery).

Layout (``p`` is ``RedisSettings.prefix``): ``p:ev:m:{stream}`` a hash (``gen``,
``first``, ``next`` seq, ``size`` bytes, ``at`` last append ms, ``fin`` finish ms),
``p:ev:l:{stream}`` the list of kept payloads (``first`` is the seq of its head),
``p:ev:act`` a sorted set of streams by last activity, ``p:ev:fin`` finished streams by
finish time, ``p:ev:lex`` the stream ids for prefix lookups, ``p:ev:tot`` the totals
(``bytes``, ``events``). Each operation is one
Lua script (atomic), timed by Redis's own clock (``TIME``), so every replica agrees.

Rules:
1. Event ids are ``{stream}/{gen}.{seq}.{mac}``: ``gen`` (48 random bits drawn when the
   stream is created) names this incarnation of the stream, so a stream dropped or lost
   in a Redis restart and created again never reissues an id; ``seq`` counts up
   from 0, ``mac`` is HMAC-SHA256 (first 12 bytes, base64url) of ``{stream}/{gen}.{seq}``
   under a key derived from the deployment's shared secret. Any replica verifies any id;
   a forged or altered id replays nothing (``None``), it reaches Redis not at all.
2. Replay returns the events of the id's stream strictly after it, in order, priming
   (empty) events left out; ``None`` for an unknown, forged, expired or never issued id,
   and when an event after it was dropped by a bound (no gaps, ever).
3. Bounds (defaults in parentheses, each configurable): per stream
   ``max_events_per_stream`` (1000) and ``max_stream_bytes`` (8 MiB); in all
   ``max_streams`` (10 000), ``max_events`` (1 000 000) and ``max_bytes`` (64 MiB). An event
   is charged its payload plus :data:`REDIS_EVENT_OVERHEAD_BYTES`. Past a per-stream bound
   the stream's oldest events go; past ``max_streams`` the oldest finished, then the
   least recently active stream goes; past a total the finished streams go (oldest
   first), then the oldest events of the least recently active streams. An event larger
   than ``max_stream_bytes`` is not kept (its id is still issued).
4. Retention by time: a finished stream is kept ``retention_s`` (300 s) after
   :meth:`finish`; any stream with no append for ``idle_s`` (3600 s) is gone (its
   replica died without finishing it). Past either, replay answers ``None`` at once;
   the keys are deleted by the next append, finish or forget (at most
   :data:`PRUNE_BATCH` streams per call, so no call is unbounded).
5. Every call is bounded by the settings' ``connect_timeout_s`` / ``op_timeout_s`` and
   fails with :class:`~mcpkit.server.redis.settings.RedisUnavailable` (a retryable
   error: the endpoint answers it 503 / -32603); the store keeps no connection state of
   its own, so it recovers as soon as Redis answers again (a restarted Redis has lost
   the events unless it persists; resumption from before then answers ``None``).
6. One Redis (or a Redis primary): the scripts touch keys they compute, so a Redis
   Cluster is not supported.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any

from mcpkit.server.redis.settings import RedisSettings, connect, unavailable

__all__ = ["PRUNE_BATCH", "REDIS_EVENT_OVERHEAD_BYTES", "RedisEventStore"]

REDIS_EVENT_OVERHEAD_BYTES = 32
"""Bytes charged per kept event beyond its payload (rule 3). ``MEMORY USAGE`` of a stream's
list on Redis 7.0 measured 3 to 30 bytes per entry beyond the payload (40- to 1000-byte
payloads); each stream's own keys (a small hash and three sorted-set entries, a few
hundred bytes) are bounded by ``max_streams`` instead."""

PRUNE_BATCH = 32
"""Expired or idle streams deleted at most per call (rule 4)."""

_MAC_BYTES = 12

# Shared Lua: ARGV[1] is the key prefix ("p:ev:"), time and pruning helpers.
_PRELUDE = """
local P = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function drop_stream(sid)
  local m = P .. 'm:' .. sid
  local f = redis.call('HMGET', m, 'size', 'first', 'next')
  if f[1] then
    redis.call('HINCRBY', P .. 'tot', 'bytes', -tonumber(f[1]))
    redis.call('HINCRBY', P .. 'tot', 'events', -(tonumber(f[3]) - tonumber(f[2])))
  end
  redis.call('DEL', m, P .. 'l:' .. sid)
  redis.call('ZREM', P .. 'act', sid)
  redis.call('ZREM', P .. 'fin', sid)
  redis.call('ZREM', P .. 'lex', sid)
end
local function drop_oldest(sid)
  local m = P .. 'm:' .. sid
  local p = redis.call('LPOP', P .. 'l:' .. sid)
  if not p then return false end
  local n = #p + tonumber(ARGV[2])
  redis.call('HINCRBY', m, 'size', -n)
  redis.call('HINCRBY', m, 'first', 1)
  redis.call('HINCRBY', P .. 'tot', 'bytes', -n)
  redis.call('HINCRBY', P .. 'tot', 'events', -1)
  return true
end
local function prune(retention_ms, idle_ms, batch)
  local old = redis.call('ZRANGEBYSCORE', P .. 'fin', '-inf', now - retention_ms, 'LIMIT', 0, batch)
  for _, sid in ipairs(old) do drop_stream(sid) end
  old = redis.call('ZRANGEBYSCORE', P .. 'act', '-inf', now - idle_ms, 'LIMIT', 0, batch)
  for _, sid in ipairs(old) do drop_stream(sid) end
end
"""

# KEYS: none (computed; rule 6). ARGV: prefix, overhead, stream, payload, max_events_per_stream,
# max_stream_bytes, max_streams, max_events, max_bytes, retention_ms, idle_ms, batch, gen.
# Returns {gen, seq}.
_APPEND = (
    _PRELUDE
    + """
local sid, payload = ARGV[3], ARGV[4]
local per_events, per_bytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local max_streams, max_events, max_bytes = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
prune(tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]))
local m, l = P .. 'm:' .. sid, P .. 'l:' .. sid
local meta = redis.call('HMGET', m, 'gen', 'next', 'fin')
local gen, seq = meta[1], meta[2]
if not gen then
  while redis.call('ZCARD', P .. 'lex') >= max_streams do
    local victim = redis.call('ZRANGE', P .. 'fin', 0, 0)[1]
      or redis.call('ZRANGE', P .. 'act', 0, 0)[1]
    drop_stream(victim)
  end
  gen = ARGV[13]
  seq = 0
  redis.call('HSET', m, 'gen', gen, 'first', 0, 'next', 0, 'size', 0)
  redis.call('ZADD', P .. 'lex', 0, sid)
else
  seq = tonumber(seq)
end
local n = #payload + tonumber(ARGV[2])
redis.call('RPUSH', l, payload)
redis.call('HSET', m, 'next', seq + 1, 'at', now)
redis.call('HINCRBY', m, 'size', n)
redis.call('HINCRBY', P .. 'tot', 'bytes', n)
redis.call('HINCRBY', P .. 'tot', 'events', 1)
if not meta[3] then redis.call('ZADD', P .. 'act', now, sid) end
local count = redis.call('LLEN', l)
local size = tonumber(redis.call('HGET', m, 'size'))
while count > 0 and (count > per_events or size > per_bytes) do
  drop_oldest(sid)
  count = count - 1
  size = tonumber(redis.call('HGET', m, 'size'))
end
local tot = redis.call('HMGET', P .. 'tot', 'bytes', 'events')
if tonumber(tot[1]) > max_bytes or tonumber(tot[2]) > max_events then
  local fin = redis.call('ZRANGE', P .. 'fin', 0, -1)
  for _, victim in ipairs(fin) do
    if victim ~= sid then drop_stream(victim) end
    tot = redis.call('HMGET', P .. 'tot', 'bytes', 'events')
    if tonumber(tot[1]) <= max_bytes and tonumber(tot[2]) <= max_events then break end
  end
  local act = redis.call('ZRANGE', P .. 'act', 0, -1)
  for _, victim in ipairs(act) do
    while (tonumber(tot[1]) > max_bytes or tonumber(tot[2]) > max_events) and drop_oldest(victim) do
      tot = redis.call('HMGET', P .. 'tot', 'bytes', 'events')
    end
    if tonumber(tot[1]) <= max_bytes and tonumber(tot[2]) <= max_events then break end
  end
end
return {gen, seq}
"""
)

# ARGV: prefix, overhead, stream, gen, seq, retention_ms, idle_ms.
# Returns false (nothing to replay) or {first_seq_returned, payload...}.
_REPLAY = (
    _PRELUDE
    + """
local sid, gen, seq = ARGV[3], ARGV[4], tonumber(ARGV[5])
local m = P .. 'm:' .. sid
local meta = redis.call('HMGET', m, 'gen', 'first', 'next', 'at', 'fin')
if meta[1] ~= gen then return false end
if meta[5] and tonumber(meta[5]) <= now - tonumber(ARGV[6]) then return false end
if tonumber(meta[4] or now) <= now - tonumber(ARGV[7]) then return false end
local first, nxt = tonumber(meta[2]), tonumber(meta[3])
if seq >= nxt or seq < first - 1 then return false end
local out = redis.call('LRANGE', P .. 'l:' .. sid, seq + 1 - first, -1)
table.insert(out, 1, seq + 1)
return out
"""
)

# ARGV: prefix, overhead, stream, retention_ms, idle_ms, batch.
_FINISH = (
    _PRELUDE
    + """
local sid = ARGV[3]
if redis.call('EXISTS', P .. 'm:' .. sid) == 1 then
  redis.call('HSET', P .. 'm:' .. sid, 'fin', now)
  redis.call('ZADD', P .. 'fin', now, sid)
  redis.call('ZREM', P .. 'act', sid)
end
prune(tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
return 1
"""
)

# ARGV: prefix, overhead, stream-id prefix, retention_ms, idle_ms, batch.
_FORGET = (
    _PRELUDE
    + """
local lo = '[' .. ARGV[3]
local hi = '[' .. ARGV[3] .. '\\255'
local sids = redis.call('ZRANGEBYLEX', P .. 'lex', lo, hi)
for _, sid in ipairs(sids) do drop_stream(sid) end
prune(tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
return #sids
"""
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class RedisEventStore:
    """The Redis-backed, shared :class:`~mcpkit.server.http.events.EventStore` (rules 1-6).

    - ``settings``: where Redis is (:class:`~mcpkit.server.redis.settings.RedisSettings`);
      or pass ``client`` (a ``redis.asyncio.Redis``) and ``prefix``.
    - ``secret``: the deployment's shared secret (>= 32 bytes; every replica the same),
      keying the event-id MAC (rule 1).
    - bounds and times as in rules 3 and 4 (counts, bytes, seconds).

    Raises ``ValueError`` for a short secret or inconsistent bounds.
    """

    def __init__(
        self,
        settings: RedisSettings | None = None,
        *,
        secret: bytes,
        client: Any = None,
        max_events_per_stream: int = 1000,
        max_stream_bytes: int = 8 * 1024 * 1024,
        max_streams: int = 10_000,
        max_events: int = 1_000_000,
        max_bytes: int = 64 * 1024 * 1024,
        retention_s: float = 300.0,
        idle_s: float = 3600.0,
    ) -> None:
        if len(secret) < 32:
            raise ValueError("the event-id secret must be at least 32 bytes")
        if max_stream_bytes > max_bytes:
            raise ValueError("max_stream_bytes must not exceed max_bytes")
        if min(max_events_per_stream, max_streams, max_events) < 1:
            raise ValueError("event store counts must be at least 1")
        if retention_s <= 0 or idle_s <= 0:
            raise ValueError("retention_s and idle_s must be positive (seconds)")
        if client is None:
            if settings is None:
                raise ValueError("RedisEventStore needs settings= or client=")
            client = connect(settings)
        self.redis: Any = client
        self.prefix = (settings.prefix if settings is not None else "mcpkit") + ":ev:"
        self._key = hmac.new(secret, b"mcpkit/event-ids", hashlib.sha256).digest()
        self.max_events_per_stream = max_events_per_stream
        self.max_stream_bytes = max_stream_bytes
        self.max_streams = max_streams
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.retention_s = retention_s
        self.idle_s = idle_s
        self._append = client.register_script(_APPEND)
        self._replay = client.register_script(_REPLAY)
        self._finish = client.register_script(_FINISH)
        self._forget = client.register_script(_FORGET)

    @property
    def _times(self) -> list[int]:
        return [int(self.retention_s * 1000), int(self.idle_s * 1000)]

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest()[:_MAC_BYTES])

    def _event_id(self, stream_id: str, gen: str, seq: int) -> str:
        body = f"{stream_id}/{gen}.{seq}"
        return f"{body}.{self._mac(body)}"

    def _parse(self, event_id: str) -> tuple[str, str, int] | None:
        """``(stream, gen, seq)`` of a genuine id of this deployment, else None (rule 1)."""
        body, dot, mac = event_id.rpartition(".")
        if not dot or not hmac.compare_digest(mac.encode(), self._mac(body).encode()):
            return None
        stream_id, _, position = body.rpartition("/")
        gen, _, seq = position.partition(".")
        return stream_id, gen, int(seq)  # the MAC vouches for the shape

    async def append(self, stream_id: str, payload: bytes) -> str:
        """Store one event; return its id (rules 1, 3). Raises ``RedisUnavailable``."""
        args = [self.prefix, REDIS_EVENT_OVERHEAD_BYTES, stream_id, payload]
        args += [self.max_events_per_stream, self.max_stream_bytes, self.max_streams]
        args += [self.max_events, self.max_bytes, *self._times, PRUNE_BATCH, os.urandom(6).hex()]
        with unavailable("event store append"):
            gen, seq = await self._append(keys=[], args=args)
        return self._event_id(stream_id, gen.decode() if isinstance(gen, bytes) else gen, seq)

    async def replay_after(self, event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """``(stream_id, [(event_id, payload), ...])`` after ``event_id`` (rule 2).
        Raises ``RedisUnavailable``."""
        parsed = self._parse(event_id)
        if parsed is None:
            return None
        stream_id, gen, seq = parsed
        args = [self.prefix, REDIS_EVENT_OVERHEAD_BYTES, stream_id, gen, seq, *self._times]
        with unavailable("event store replay"):
            found = await self._replay(keys=[], args=args)
        if not found:
            return None
        first = int(found[0])
        return stream_id, [
            (self._event_id(stream_id, gen, first + i), bytes(p))
            for i, p in enumerate(found[1:])
            if p
        ]

    async def finish(self, stream_id: str) -> None:
        """Start the stream's retention period (rule 4). Raises ``RedisUnavailable``."""
        args = [self.prefix, REDIS_EVENT_OVERHEAD_BYTES, stream_id, *self._times, PRUNE_BATCH]
        with unavailable("event store finish"):
            await self._finish(keys=[], args=args)

    async def forget(self, prefix: str) -> None:
        """Drop every stream whose id starts with ``prefix``. Raises ``RedisUnavailable``."""
        args = [self.prefix, REDIS_EVENT_OVERHEAD_BYTES, prefix, *self._times, PRUNE_BATCH]
        with unavailable("event store forget"):
            await self._forget(keys=[], args=args)

    async def totals(self) -> tuple[int, int, int]:
        """``(streams, events, bytes)`` kept now, over all replicas (rule 3)."""
        with unavailable("event store totals"):
            streams = int(await self.redis.zcard(self.prefix + "lex"))
            events, size = await self.redis.hmget(self.prefix + "tot", "events", "bytes")
        return streams, int(events or 0), int(size or 0)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.redis.aclose()
