"""The events extension on Redis: the occurrence log and webhook subscriptions shared by
several server processes (SEP-3415 §Subscription TTL, Appendix B "Redis lane").

Install ``pip install "mcpkit-exp-events[redis]"``; connections come from
:class:`mcpkit.server.redis.RedisSettings` / :func:`mcpkit.server.redis.connect` (bounded
connect and command timeouts, key prefix). Layout, with ``ns`` = ``<prefix>:events``:

- ``{ns}:epoch``: the log generation (set once, ``SET NX``);
- ``{ns}:head:{name}``: the last position of event type ``name``;
- ``{ns}:log:{name}``: sorted set, score = position, member = the occurrence as JSON;
- channel ``{ns}:appended``: every appended occurrence (for ``watch`` listeners);
- ``{ns}:sub:{id}``: hash of a webhook subscription: ``config`` (JSON), ``state`` (JSON),
  ``position`` (``epoch|position``); Redis drops it ``LAPSE_GRACE_S`` after the grant
  ends (``PEXPIREAT``; never for a no-expiry grant), a backstop: the lapse sweep
  removes it first;
- ``{ns}:subs``: set of subscription ids (swept of expired ones);
- ``{ns}:expiries``: sorted set, score = the grant's end (epoch ms), member = the id of a
  subscription that has one (each also in ``{ns}:subs`` until the sweep takes it);
- ``{ns}:owned:{sha1(principal key)}``: set of the ids of one principal's subscriptions
  (the per-principal quota; at most ``max_subscriptions_per_principal`` live ones, plus
  lapsed ones until swept);
- ``{ns}:pollleases``: sorted set, score = the lease's end (epoch ms), member = a poll
  lease id; ``{ns}:polllease``: hash, lease id -> the lease as JSON (principal key,
  name, arguments); ``{ns}:pollowners``: hash, principal key (``""`` anonymous) -> how
  many leases it holds (fields of principals with none are deleted);
- ``{ns}:verified:{sha256(principal, url)}``: a cached verification (``PX``);
- ``{ns}:lease:{id}``: the replica delivering subscription ``id`` (``PX lease``).

Rules:
1. ``append`` is one Lua script: the next position, the log entry, retention (at most
   ``max_events`` per type, none older than ``max_age_ms``) and the ``PUBLISH`` happen
   atomically, so positions are dense and ordered across every process. The script
   splices the position into the occurrence's JSON text and never re-encodes it (Lua
   cjson would turn ``[]`` into ``{}`` and round numbers to 14 digits): the payload
   stored is the producer's, exactly.
2. Reads follow :mod:`.store` rules 1-3 (``truncated`` past retention, the ``maxAgeMs``
   floor, or a position beyond the head).
3. ``watch`` listeners get every occurrence appended by any process while
   :meth:`RedisOccurrenceStore.running` runs (one pub/sub connection per process; it
   reconnects with backoff; listeners miss nothing for delivery because readers re-read
   the log by position on every wake-up and at least every second).
4. Webhook subscriptions, their verification flag and the no-expiry ones persist as long
   as Redis does (configure Redis persistence for no-expiry grants): ``durable`` is true.
5. A delivery lease is taken with ``SET NX PX`` and renewed only by its holder (Lua
   compare-and-renew): one replica delivers a subscription at a time; a lapsed lease is
   taken over by another replica, which resumes from the persisted watermark.
6. Redis failures surface as :class:`mcpkit.server.redis.RedisUnavailable`.
7. Whoever removes it fires the hook: deleting a subscription (``events/unsubscribe``, a
   termination) is one script that removes it only while live and answers whether this
   call did; the lapse sweep is one script that takes expired members of
   ``{ns}:expiries`` with their records, so each lapsed subscription is returned to
   exactly one replica (:mod:`.webhooks.records` rule 2).
8. Poll leases (:class:`RedisPollLeases`, :mod:`.lifecycle` rule 4): a poll's renewal is
   one script (``ZADD`` of a new member only below ``max_poll_leases`` and below
   ``max_poll_leases_per_principal`` of its principal, answering whether it was new),
   the sweep one script taking members whose score passed (and counting them off their
   principal), so ``on_subscribe`` and ``on_unsubscribe`` each run on one replica. Times are the
   replicas' wall clocks (keep them in sync: a skew shifts a lapse by as much).
9. Creating a webhook subscription is one script (:mod:`.webhooks.records` rule 7): it
   answers ``exists`` for a live record, takes an unswept lapsed one as the sweep would
   (returning it), counts live subscriptions (``{ns}:subs`` minus lapsed members of
   ``{ns}:expiries``) and the principal's (``{ns}:owned:...``, pruned of vanished ids)
   against both quotas, and writes only below them; a refresh is one script that
   writes only while the record is live. ``all()`` drops from ``{ns}:subs`` only ids
   whose record is gone, leaving lapsed ones to the sweep, so the live count stays exact.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.lifecycle import PollLease, Renewal
from mcpkit.experimental.events.store import ReadResult, StoredOccurrence, WatchListener, now_ms
from mcpkit.experimental.events.webhooks.records import (
    Created,
    CreateOutcome,
    DeliveryState,
    WebhookSubscription,
)
from mcpkit.server.redis import RedisSettings, connect
from mcpkit.server.redis.settings import unavailable

__all__ = ["LAPSE_GRACE_S", "RedisOccurrenceStore", "RedisPollLeases", "RedisSubscriptions"]

logger = logging.getLogger("mcpkit.experimental.events")

_APPEND = """
local pos = redis.call('INCR', KEYS[1])
local member = '{"position":' .. pos .. ',' .. ARGV[1]
redis.call('ZADD', KEYS[2], pos, member)
local max_events = tonumber(ARGV[2])
if max_events > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(max_events + 1))
end
local floor = tonumber(ARGV[3])
if floor > 0 then
  for i = 1, 100 do
    local first = redis.call('ZRANGE', KEYS[2], 0, 0)
    if #first == 0 then break end
    if cjson.decode(first[1])['timestampMs'] >= floor then break end
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, 0)
  end
end
redis.call('PUBLISH', KEYS[3], member)
return member
"""

_HSET_IF_EXISTS = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
"""

_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


_DELETE_LIVE = """
local expiry = redis.call('ZSCORE', KEYS[4], ARGV[1])
if expiry and tonumber(expiry) <= tonumber(ARGV[2]) then
  return 0
end
local raw = redis.call('HGET', KEYS[1], 'config')
local removed = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
if raw then
  redis.call('SREM', ARGV[3] .. redis.sha1hex(cjson.decode(raw)['principal']), ARGV[1])
end
return removed
"""

_SWEEP_EXPIRED = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('SREM', KEYS[2], id)
  local key = ARGV[3] .. id
  local raw = redis.call('HGET', key, 'config')
  redis.call('DEL', key)
  redis.call('DEL', ARGV[4] .. id)
  if raw then
    redis.call('SREM', ARGV[5] .. redis.sha1hex(cjson.decode(raw)['principal']), id)
    table.insert(out, raw)
  end
end
return out
"""

# KEYS: sub record, subs set, expiries; ARGV: id, config, expiry ms ('' for none),
# record lifetime after the expiry ms. Shared tail of _CREATE and _UPDATE.
_WRITE = """
redis.call('HSET', KEYS[1], 'config', ARGV[2])
if ARGV[3] == '' then
  redis.call('PERSIST', KEYS[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]))
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[1])
"""

# ARGV[5]: now (epoch ms). Rule 7: only while the record is live.
_UPDATE = (
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local expiry = redis.call('ZSCORE', KEYS[3], ARGV[1])
if expiry and tonumber(expiry) <= tonumber(ARGV[5]) then return 0 end
"""
    + _WRITE
    + "return 1\n"
)

# KEYS[4]: the principal's owned set, KEYS[5]: the delivery lease; ARGV[5]: now (epoch
# ms), ARGV[6]: max_total, ARGV[7]: max_per_principal, ARGV[8]: record key prefix.
# Returns {outcome, lapsed config or false}. Rule 9.
_CREATE = (
    """
local now = tonumber(ARGV[5])
local lapsed = false
if redis.call('EXISTS', KEYS[1]) == 1 then
  local expiry = redis.call('ZSCORE', KEYS[3], ARGV[1])
  if not expiry or tonumber(expiry) > now then return {'exists', false} end
  lapsed = redis.call('HGET', KEYS[1], 'config')
  redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[5])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('SREM', KEYS[2], ARGV[1])
  redis.call('SREM', KEYS[4], ARGV[1])
end
local live = redis.call('SCARD', KEYS[2]) - redis.call('ZCOUNT', KEYS[3], '-inf', now)
if live >= tonumber(ARGV[6]) then return {'full', lapsed} end
local mine = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if redis.call('EXISTS', ARGV[8] .. id) == 0 then
    redis.call('SREM', KEYS[4], id)
  else
    local expiry = redis.call('ZSCORE', KEYS[3], id)
    if not expiry or tonumber(expiry) > now then mine = mine + 1 end
  end
end
if mine >= tonumber(ARGV[7]) then return {'full_principal', lapsed} end
"""
    + _WRITE
    + """
redis.call('SADD', KEYS[4], ARGV[1])
return {'new', lapsed}
"""
)

# ARGV[5]: max per principal ('' for none), ARGV[6]: the principal's field in KEYS[3].
_LEASE_RENEW = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  return 0
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return -1
end
if ARGV[5] ~= '' and tonumber(redis.call('HGET', KEYS[3], ARGV[6]) or '0') >= tonumber(ARGV[5]) then
  return -2
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('HINCRBY', KEYS[3], ARGV[6], 1)
return 1
"""

_LEASE_SWEEP = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local raw = redis.call('HGET', KEYS[2], id)
  redis.call('HDEL', KEYS[2], id)
  if raw then
    local principal = cjson.decode(raw)['principal']
    if type(principal) ~= 'string' then principal = '' end
    if redis.call('HINCRBY', KEYS[3], principal, -1) <= 0 then
      redis.call('HDEL', KEYS[3], principal)
    end
    table.insert(out, raw)
  end
end
return out
"""

LAPSE_GRACE_S = 3600.0
"""How long Redis keeps a lapsed subscription's record for the lapse sweep to find (and
run its ``on_unsubscribe``) when no replica swept it earlier."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class RedisOccurrenceStore:
    """:class:`~mcpkit.experimental.events.store.OccurrenceStore` on Redis (rules 1-3, 6).
    ``max_events`` per event type (10 000) and ``max_age_ms`` (10 minutes; None:
    unbounded) bound retention, as :class:`~.store.InMemoryStore` does."""

    def __init__(
        self,
        settings: RedisSettings,
        *,
        max_events: int | None = 10_000,
        max_age_ms: int | None = 600_000,
        reconnect_max_s: float = 5.0,
    ) -> None:
        self.settings = settings
        self.max_events = max_events
        self.max_age_ms = max_age_ms
        self.reconnect_max_s = reconnect_max_s
        self.redis: Any = connect(settings)
        self.ns = settings.key("events")
        self._listeners: list[WatchListener] = []
        self._epoch: str | None = None
        self._append = self.redis.register_script(_APPEND)

    def _k(self, *parts: str) -> str:
        return ":".join((self.ns, *parts))

    async def epoch(self) -> str:
        if self._epoch is None:
            with unavailable("reading the events epoch"):
                await self.redis.set(self._k("epoch"), uuid.uuid4().hex, nx=True)
                value = await self.redis.get(self._k("epoch"))
            self._epoch = value.decode() if isinstance(value, bytes) else str(value)
        return self._epoch

    async def append(
        self,
        name: str,
        *,
        event_id: str,
        timestamp_ms: int,
        data: JSON,
        meta: JSON | None = None,
    ) -> StoredOccurrence:
        entry: JSON = {"name": name, "eventId": event_id, "timestampMs": timestamp_ms}
        entry["data"] = data
        if meta is not None:
            entry["meta"] = meta
        floor = now_ms() - self.max_age_ms if self.max_age_ms is not None else 0
        keys = [self._k("head", name), self._k("log", name), self._k("appended")]
        # rule 1: the script prefixes the position; it never re-encodes the JSON
        body = json.dumps(entry, separators=(",", ":"))
        args = [body[1:], self.max_events or 0, floor]
        with unavailable("appending an occurrence"):
            member = await self._append(keys=keys, args=args)
        return StoredOccurrence.from_json(json.loads(member))

    async def head(self, name: str) -> int:
        with unavailable("reading a log head"):
            value = await self.redis.get(self._k("head", name))
        return int(value) if value is not None else 0

    async def read(
        self, name: str, after: int, *, limit: int, min_timestamp_ms: int | None = None
    ) -> ReadResult:
        log = self._k("log", name)
        with unavailable("reading a log"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.get(self._k("head", name))
                pipe.zrange(log, 0, 0, withscores=True)
                pipe.zrangebyscore(log, f"({after}", "+inf", start=0, num=limit + 1)
                replies: list[Any] = await pipe.execute()
        head_raw: Any = replies[0]
        first: list[Any] = replies[1]
        items: list[Any] = replies[2]
        head = int(head_raw) if head_raw is not None else 0
        truncated = after > head
        if truncated:
            after = head
            items = []
        first_pos = int(first[0][1]) if first else head + 1
        if after < first_pos - 1:
            truncated = True
        out: list[StoredOccurrence] = []
        position = after
        has_more = False
        for raw in items:
            occ = StoredOccurrence.from_json(json.loads(raw))
            if min_timestamp_ms is not None and occ.timestamp_ms < min_timestamp_ms:
                truncated = True
                position = occ.position
                continue
            if len(out) >= limit:
                has_more = True
                break
            out.append(occ)
            position = occ.position
        if not out and not has_more and len(items) <= limit:
            position = head  # everything up to the head was examined
        return ReadResult(out, position, truncated, has_more)

    async def drop(self, name: str) -> None:
        with unavailable("dropping a log"):
            await self.redis.delete(self._k("log", name))

    def watch(self, listener: WatchListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unwatch() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unwatch

    def _dispatch(self, raw: bytes | str) -> None:
        try:
            occ = StoredOccurrence.from_json(json.loads(raw))
        except (ValueError, KeyError, TypeError):
            logger.warning("ignoring a malformed message on %s", self._k("appended"))
            return
        for listener in tuple(self._listeners):
            try:
                listener(occ)
            except Exception:
                logger.exception("an occurrence-store watch listener failed")

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Rule 3: relay appends of every process to ``watch`` listeners while open."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._subscriber)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _subscriber(self) -> None:
        delay = 0.1
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self._k("appended"))
                delay = 0.1
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._dispatch(message["data"])
            except Exception as exc:  # rule 3: reconnect with backoff
                logger.warning("events pub/sub lost (%s); reconnecting", type(exc).__name__)
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    await pubsub.aclose()
            await anyio.sleep(delay)
            delay = min(self.reconnect_max_s, delay * 2)

    def poll_leases(self) -> RedisPollLeases:
        """Rule 8: poll leases shared by every replica on this Redis (picked up by
        :class:`~mcpkit.experimental.events.lifecycle.Lifecycle`)."""
        return RedisPollLeases(self.redis, self.ns)

    async def aclose(self) -> None:
        await self.redis.aclose()


class RedisPollLeases:
    """:class:`~mcpkit.experimental.events.lifecycle.PollLeases` on Redis (rule 8):
    ``redis`` a redis-py asyncio client, ``ns`` the key namespace."""

    def __init__(self, redis: Any, ns: str) -> None:
        self.redis = redis
        self.keys = [f"{ns}:pollleases", f"{ns}:polllease", f"{ns}:pollowners"]
        self._renew = redis.register_script(_LEASE_RENEW)
        self._sweep = redis.register_script(_LEASE_SWEEP)

    def __len__(self) -> int:
        return 0  # the table is shared: nothing is held in this process

    async def renew(
        self,
        lease: PollLease,
        ttl_s: float,
        max_leases: int,
        max_per_principal: int | None = None,
    ) -> Renewal:
        expiry = _now_ms() + int(ttl_s * 1000)
        per = "" if max_per_principal is None else max_per_principal
        args = [lease.id, expiry, max_leases, lease.to_json(), per, lease.principal or ""]
        with unavailable("renewing a poll lease"):
            got = await self._renew(keys=self.keys, args=args)
        outcomes: dict[int, Renewal] = {1: "new", 0: "renewed", -1: "full"}
        return outcomes.get(int(got), "full_principal")

    async def expired(self, limit: int) -> list[PollLease]:
        with unavailable("sweeping poll leases"):
            raws = await self._sweep(keys=self.keys, args=[_now_ms(), limit])
        return [PollLease.from_json(raw) for raw in raws]


class RedisSubscriptions:
    """:class:`~mcpkit.experimental.events.webhooks.SubscriptionStore` on Redis (rules
    4-6): shared by replicas, durable as Redis is."""

    durable = True

    def __init__(self, settings: RedisSettings) -> None:
        self.settings = settings
        self.redis: Any = connect(settings)
        self.ns = settings.key("events")
        self._renew = self.redis.register_script(_RENEW)
        self._hset = self.redis.register_script(_HSET_IF_EXISTS)
        self._delete = self.redis.register_script(_DELETE_LIVE)
        self._sweep = self.redis.register_script(_SWEEP_EXPIRED)
        self._create = self.redis.register_script(_CREATE)
        self._update = self.redis.register_script(_UPDATE)

    def _k(self, *parts: str) -> str:
        return ":".join((self.ns, *parts))

    def _vkey(self, principal: str, url: str) -> str:
        digest = hashlib.sha256(json.dumps([principal, url]).encode()).hexdigest()
        return self._k("verified", digest)

    async def get(self, sub_id: str) -> WebhookSubscription | None:
        with unavailable("reading a webhook subscription"):
            raw = await self.redis.hget(self._k("sub", sub_id), "config")
        if raw is None:
            return None
        sub = WebhookSubscription.from_json(json.loads(raw))
        return None if sub.expired() else sub

    def _owned(self, principal: str) -> str:
        """The set of ``principal``'s subscription ids (the Lua scripts derive the same
        name with ``redis.sha1hex``; a key name, not a secret)."""
        digest = hashlib.sha1(principal.encode(), usedforsecurity=False).hexdigest()
        return self._k("owned", digest)

    def _write_args(self, sub: WebhookSubscription) -> list[Any]:
        expiry = "" if sub.expires_at_s is None else int(sub.expires_at_s * 1000)
        return [sub.id, json.dumps(sub.to_json()), expiry, int(LAPSE_GRACE_S * 1000), _now_ms()]

    async def create(
        self, sub: WebhookSubscription, *, max_total: int, max_per_principal: int
    ) -> Created:
        """Rule 9: one script (live check, lapsed take-over, both quotas, the write)."""
        keys = [
            self._k("sub", sub.id),
            self._k("subs"),
            self._k("expiries"),
            self._owned(sub.principal),
            self._k("lease", sub.id),
        ]
        args = [*self._write_args(sub), max_total, max_per_principal, self._k("sub", "")]
        with unavailable("creating a webhook subscription"):
            outcome, raw = await self._create(keys=keys, args=args)
        text = outcome.decode() if isinstance(outcome, bytes) else str(outcome)
        lapsed = WebhookSubscription.from_json(json.loads(raw)) if raw else None
        return Created(cast(CreateOutcome, text), lapsed)  # the script returns one of them

    async def update(self, sub: WebhookSubscription) -> bool:
        """Rule 9: rewrite the configuration only while the record is live."""
        keys = [self._k("sub", sub.id), self._k("subs"), self._k("expiries")]
        with unavailable("refreshing a webhook subscription"):
            return bool(await self._update(keys=keys, args=self._write_args(sub)))

    async def put(self, sub: WebhookSubscription) -> None:
        key = self._k("sub", sub.id)
        with unavailable("writing a webhook subscription"):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, "config", json.dumps(sub.to_json()))
                if sub.expires_at_s is None:
                    pipe.persist(key)
                    pipe.zrem(self._k("expiries"), sub.id)
                else:
                    expiry_ms = int(sub.expires_at_s * 1000)
                    pipe.pexpireat(key, expiry_ms + int(LAPSE_GRACE_S * 1000))
                    pipe.zadd(self._k("expiries"), {sub.id: expiry_ms})
                pipe.sadd(self._k("subs"), sub.id)
                pipe.sadd(self._owned(sub.principal), sub.id)
                await pipe.execute()

    async def delete(self, sub_id: str) -> bool:
        keys = [
            self._k("sub", sub_id),
            self._k("subs"),
            self._k("lease", sub_id),
            self._k("expiries"),
        ]
        args = [sub_id, _now_ms(), self._k("owned", "")]
        with unavailable("deleting a webhook subscription"):
            removed = await self._delete(keys=keys, args=args)
        return bool(removed)

    async def sweep_expired(self, limit: int) -> list[WebhookSubscription]:
        """Rule 7: the lapsed subscriptions this call removed."""
        keys = [self._k("expiries"), self._k("subs")]
        args = [_now_ms(), limit, self._k("sub", ""), self._k("lease", ""), self._k("owned", "")]
        with unavailable("sweeping lapsed webhook subscriptions"):
            raws = await self._sweep(keys=keys, args=args)
        return [WebhookSubscription.from_json(json.loads(raw)) for raw in raws]

    async def all(self) -> list[WebhookSubscription]:
        with unavailable("listing webhook subscriptions"):
            ids = [
                i.decode() if isinstance(i, bytes) else str(i)
                for i in await self.redis.smembers(self._k("subs"))
            ]
            async with self.redis.pipeline(transaction=False) as pipe:
                for sub_id in ids:
                    pipe.hget(self._k("sub", sub_id), "config")
                raws = await pipe.execute()
        out: list[WebhookSubscription] = []
        gone: list[str] = []
        for sub_id, raw in zip(ids, raws, strict=True):
            sub = None if raw is None else WebhookSubscription.from_json(json.loads(raw))
            if sub is None:
                gone.append(sub_id)
            elif not sub.expired():  # a lapsed one stays listed for the sweep (rule 9)
                out.append(sub)
        if gone:
            with unavailable("sweeping webhook subscriptions"):
                await self.redis.srem(self._k("subs"), *gone)
        return out

    async def count(self, principal: str) -> tuple[int, int]:
        subs = await self.all()
        return len(subs), sum(1 for s in subs if s.principal == principal)

    async def state(self, sub_id: str) -> DeliveryState:
        with unavailable("reading a delivery state"):
            raw = await self.redis.hget(self._k("sub", sub_id), "state")
        return DeliveryState(**json.loads(raw)) if raw is not None else DeliveryState()

    async def set_state(self, sub_id: str, state: DeliveryState) -> None:
        key = self._k("sub", sub_id)
        value = json.dumps(
            {
                "active": state.active,
                "last_delivery_at_s": state.last_delivery_at_s,
                "last_error": state.last_error,
                "failed_since_s": state.failed_since_s,
                "throttled_until_s": state.throttled_until_s,
            }
        )
        with unavailable("writing a delivery state"):
            await self._hset(keys=[key], args=["state", value])

    async def position(self, sub_id: str) -> tuple[str, int] | None:
        with unavailable("reading a delivery position"):
            raw = await self.redis.hget(self._k("sub", sub_id), "position")
        if raw is None:
            return None
        epoch, _, pos = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition("|")
        return epoch, int(pos)

    async def set_position(self, sub_id: str, epoch: str, position: int) -> None:
        key = self._k("sub", sub_id)
        with unavailable("writing a delivery position"):
            await self._hset(keys=[key], args=["position", f"{epoch}|{position}"])

    async def verified(self, principal: str, url: str) -> bool:
        with unavailable("reading a verification"):
            return bool(await self.redis.exists(self._vkey(principal, url)))

    async def mark_verified(self, principal: str, url: str, ttl_s: float) -> None:
        with unavailable("writing a verification"):
            await self.redis.set(self._vkey(principal, url), "1", px=max(1, int(ttl_s * 1000)))

    async def claim(self, sub_id: str, owner: str, lease_s: float) -> bool:
        with unavailable("taking a delivery lease"):
            got = await self._renew(
                keys=[self._k("lease", sub_id)], args=[owner, max(1, int(lease_s * 1000))]
            )
        return bool(got)

    async def aclose(self) -> None:
        await self.redis.aclose()
