"""Handshake-era sessions in Redis: any replica serves any session (issue 17).

:class:`RedisSessionStore` is the :class:`~mcpkit.server.http.shared.SessionStore` of a
multi-replica deployment; pass it as ``session_store=`` to the endpoint
(``http_app(server, session_store=store)``) or let ``mcpkit.server.redis.replicate``
wire it. Source: MCP 2025-11-25 ``basic/transports`` §Session Management.

Layout (``<p>`` = ``prefix``, default ``mcpkit``):

- ``<p>:session:<id>``, a hash with an idle expiry of ``ttl_s``: ``v`` (version of the
  mutable part), ``gen`` (GET-stream generation), ``fixed`` (JSON: stream key,
  principal key, protocol version, client capabilities and info), ``init``, ``level``,
  ``state`` (JSON), one ``sub:<uri>`` field per resource subscription.
- ``<p>:session-gone:<id>``: a tombstone kept ``ttl_s`` after DELETE, so that no replica
  writes a deleted session back (rule 5).
- ``<p>:sessions``: the pub/sub channel of the replicas' signals (JSON:
  ``{"k": kind, "s": session id, "o": replica id, "v": version, "m": message}``).

Redis operations per request (round trips; a pipeline or a script is one):

====================================================  =============================
request                                               round trips
====================================================  =============================
``initialize``                                        1 (MULTI HSET PEXPIRE EXEC)
any request, session held here, checked less than     0
``refresh_interval_s`` (1 s) ago
any request, session held here, otherwise             1 (PEXPIRE + HGET v); +1
                                                      (HGETALL) when it changed
any request, session not held here                    1 (HGETALL + PEXPIRE)
request that changes session state (setLevel,         +1 (EVALSHA: HSET/HDEL,
subscribe, unsubscribe, ``notifications/initialized``,  HINCRBY, PEXPIRE, PUBLISH);
an extension's ``session.state``)                     +1 HGETALL on each other
                                                      replica holding the session
GET (standalone stream)                               +1 (EVALSHA: HINCRBY PUBLISH)
client response / cancel / progress for a request     +1 (PUBLISH)
running on another replica
DELETE                                                +1 (MULTI DEL SET PUBLISH EXEC)
====================================================  =============================

In the background, each replica spends one round trip every ``keep_interval_s`` (5 s)
renewing the sessions whose connections it holds open (one PEXPIRE + HGET each, one
pipeline), and one long-lived pub/sub connection. The event store and the hub (other
modules) add their own operations.

Rules:
1. Every call is bounded by the client's socket timeouts (``RedisSettings``); a failure
   raises and the endpoint answers 503 / -32603 "retry" (:mod:`.shared` rule 7).
2. A session id is looked up only when it has the shape this SDK issues (43 URL-safe
   characters): no Redis key is built from any other client-chosen text, and a record
   is served only to the principal that created it.
3. The mutable state is written as field deltas by one script, so two replicas
   changing one session at once (a subscribe here, a setLevel there) lose neither.
4. Bounds: a record's fixed part and its ``state`` are at most ``max_record_bytes``
   (default 256 KiB) each (-32603 above, nothing written); subscriptions are bounded by
   ``Limits.max_subscriptions``; every record expires ``ttl_s`` (default 1800 s) after
   its last use, renewed while a replica holds a connection of the session open.
5. After Redis comes back (the signal connection reconnects), every replica writes
   back the sessions it holds that Redis lost (a Redis restart without persistence),
   unless a tombstone says they were deleted: a Redis restart loses no session a
   replica still holds. Signals sent while a replica was disconnected are lost; what
   they carried is caught up by rule 2 of :mod:`.shared` and the keep-alive pass.
6. Signals from this replica are ignored on receipt; a malformed signal is logged and
   dropped. The signal loop reconnects with a backoff of 0.1 s doubling to 2 s.
7. A signal bigger than ``max_signal_bytes`` (default 1 MiB + 64 KiB: a forwarded
   message of ``Limits.max_forwarded_message_bytes`` and the envelope) is not parsed:
   it is logged and dropped (the sender's bound is :mod:`.shared` rule 10).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.server.http.shared import SessionRecord, SessionSignal

__all__ = ["RedisSessionStore"]

logger = logging.getLogger("mcpkit.server.redis")

_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")

_SAVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local ops = cjson.decode(ARGV[5])
for f, v in pairs(ops['set']) do redis.call('HSET', KEYS[1], f, v) end
for _, f in ipairs(ops['del']) do redis.call('HDEL', KEYS[1], f) end
local v = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], cjson.encode({k='changed', s=ARGV[3], o=ARGV[4], v=v}))
return v
"""

_TAKE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local g = redis.call('HINCRBY', KEYS[1], 'gen', 1)
redis.call('PUBLISH', ARGV[1], cjson.encode({k='taken', s=ARGV[2], o=ARGV[3], v=g}))
return g
"""

_RESTORE = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local fields = cjson.decode(ARGV[2])
for f, v in pairs(fields) do redis.call('HSET', KEYS[1], f, v) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisSessionStore:
    """Handshake-era session records in Redis, and the replicas' signals (rules 1-6).

    ``redis``: a ``redis.asyncio.Redis`` client (``mcpkit.server.redis.connect``), whose
    socket timeouts bound every call. ``prefix``: the key namespace. ``ttl_s``:
    seconds a record lives after its last use. ``refresh_interval_s``: seconds a replica
    serves a held session before checking it again. ``keep_interval_s``: seconds
    between renewals of the sessions with open connections here. ``max_record_bytes``:
    rule 4. ``replica_id``: this replica's name in signals (random by default).
    ``max_signal_bytes``: rule 7.
    """

    def __init__(
        self,
        redis: Any,
        *,
        prefix: str = "mcpkit",
        ttl_s: float = 1800.0,
        refresh_interval_s: float = 1.0,
        keep_interval_s: float = 5.0,
        max_record_bytes: int = 256 * 1024,
        replica_id: str | None = None,
        max_signal_bytes: int = 1024 * 1024 + 64 * 1024,
    ) -> None:
        if ttl_s <= 0 or refresh_interval_s < 0 or keep_interval_s <= 0:
            raise ValueError("ttl_s and keep_interval_s must be positive (seconds)")
        if keep_interval_s >= ttl_s:
            raise ValueError("keep_interval_s must be shorter than ttl_s")
        self.redis = redis
        self.prefix = prefix
        self.ttl_ms = int(ttl_s * 1000)
        self.refresh_interval_s = refresh_interval_s
        self.keep_interval_s = keep_interval_s
        self.max_record_bytes = max_record_bytes
        self.max_signal_bytes = max_signal_bytes
        self.replica_id = replica_id or secrets.token_hex(8)
        self.channel = f"{prefix}:sessions"
        self._save = redis.register_script(_SAVE)
        self._take = redis.register_script(_TAKE)
        self._restore = redis.register_script(_RESTORE)
        self.connected = False
        """Whether the signal connection is subscribed now."""

    @classmethod
    def from_settings(cls, settings: Any, **options: Any) -> RedisSessionStore:
        """A store on a new client for ``settings`` (a ``RedisSettings``)."""
        from mcpkit.server.redis.settings import connect

        return cls(connect(settings), prefix=settings.prefix, **options)

    async def aclose(self) -> None:
        """Close the Redis client's connections."""
        await self.redis.aclose()

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}:session:{session_id}"

    def _gone(self, session_id: str) -> str:
        return f"{self.prefix}:session-gone:{session_id}"

    # -- records ---------------------------------------------------------------------
    def _fields(self, record: SessionRecord) -> dict[str, str]:
        fixed = json.dumps(
            {
                "key": record.key,
                "principal": record.principal_key,
                "version": record.protocol_version,
                "caps": record.client_capabilities,
                "info": record.client_info,
            },
            separators=(",", ":"),
        )
        self._check_size("the session's capabilities and client info", fixed)
        fields = {
            "v": str(record.version),
            "fixed": fixed,
            "init": "1" if record.client_initialized else "0",
        }
        if record.log_level is not None:
            fields["level"] = record.log_level
        if record.state:
            fields["state"] = self._state(record.state)
        for uri in record.subscriptions:
            fields["sub:" + uri] = "1"
        return fields

    def _state(self, state: JSON) -> str:
        text = json.dumps(state, separators=(",", ":"))
        self._check_size("the session's state", text)
        return text

    def _check_size(self, what: str, text: str) -> None:
        if len(text) > self.max_record_bytes:
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"Internal error: {what} ({len(text)} bytes) exceeds the session store's "
                f"max_record_bytes ({self.max_record_bytes})",
            )

    @staticmethod
    def _record(session_id: str, raw: dict[Any, Any]) -> SessionRecord | None:
        if not raw:
            return None
        fields = {_text(k): _text(v) for k, v in raw.items()}
        if "fixed" not in fields:
            return None
        fixed = json.loads(fields["fixed"])
        return SessionRecord(
            session_id=session_id,
            key=fixed["key"],
            principal_key=fixed["principal"],
            protocol_version=fixed["version"],
            client_capabilities=fixed["caps"] or {},
            client_info=fixed["info"],
            client_initialized=fields.get("init") == "1",
            log_level=fields.get("level"),
            subscriptions={k[4:] for k in fields if k.startswith("sub:")},
            state=json.loads(fields["state"]) if "state" in fields else {},
            version=int(fields.get("v", "0")),
        )

    async def create(self, record: SessionRecord) -> None:
        key = self._key(record.session_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=self._fields(record))
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    async def load(self, session_id: str) -> SessionRecord | None:
        if not _SESSION_ID.fullmatch(session_id):  # rule 2
            return None
        key = self._key(session_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(key)
            pipe.pexpire(key, self.ttl_ms)
            raw, _ = await pipe.execute()
        return self._record(session_id, raw)

    async def check(self, record: SessionRecord) -> int | None:
        key = self._key(record.session_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.pexpire(key, self.ttl_ms)
            pipe.hget(key, "v")
            pipe.exists(self._gone(record.session_id))
            renewed, version, gone = await pipe.execute()
        if renewed and version is not None:
            return int(_text(version))
        if gone:
            return None
        await self._write_back([record])  # rule 5: Redis lost it, this replica has it
        return record.version

    async def save(self, record: SessionRecord, changes: JSON) -> int | None:
        put: dict[str, str] = {}
        drop: list[str] = []
        if "client_initialized" in changes:
            put["init"] = "1" if changes["client_initialized"] else "0"
        if "log_level" in changes:
            if changes["log_level"] is None:
                drop.append("level")
            else:
                put["level"] = str(changes["log_level"])
        if "state" in changes:
            if changes["state"]:
                put["state"] = self._state(changes["state"])
            else:
                drop.append("state")
        for uri in changes.get("subscribe", ()):
            put["sub:" + uri] = "1"
        drop.extend("sub:" + uri for uri in changes.get("unsubscribe", ()))
        ops = json.dumps({"set": put, "del": drop})
        args = [self.ttl_ms, self.channel, record.session_id, self.replica_id, ops]
        version = int(await self._save(keys=[self._key(record.session_id)], args=args))
        return None if version < 0 else version

    async def delete(self, session_id: str) -> None:
        signal = self._signal("deleted", session_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(session_id))
            pipe.set(self._gone(session_id), "1", px=self.ttl_ms)
            pipe.publish(self.channel, signal)
            await pipe.execute()

    async def take_stream(self, session_id: str) -> int:
        args = [self.channel, session_id, self.replica_id]
        return int(await self._take(keys=[self._key(session_id)], args=args))

    async def forward(self, session_id: str, message: JSON) -> None:
        await self.redis.publish(self.channel, self._signal("message", session_id, message=message))

    def _signal(self, kind: str, session_id: str, *, message: JSON | None = None) -> str:
        body: JSON = {"k": kind, "s": session_id, "o": self.replica_id, "v": 0}
        if message is not None:
            body["m"] = message
        return json.dumps(body, separators=(",", ":"))

    # -- signals and keep-alive ---------------------------------------------------------
    @contextlib.asynccontextmanager
    async def listen(
        self,
        on_signal: Callable[[SessionSignal], Awaitable[None]],
        held: Callable[[bool], list[SessionRecord]],
    ) -> AsyncGenerator[None]:
        """Run the signal loop and the keep-alive pass while open (rules 5, 6).
        ``held(attached_only)``: the records of the sessions this replica holds (with a
        connection open, when ``attached_only``)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._receive, on_signal, held)
            tg.start_soon(self._keep, on_signal, held)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _receive(
        self,
        on_signal: Callable[[SessionSignal], Awaitable[None]],
        held: Callable[[bool], list[SessionRecord]],
    ) -> None:
        delay = 0.1
        failed = False
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                self.connected = True
                if failed:
                    await self._write_back(held(False))  # rule 5
                    logger.warning("session store: Redis reachable again; signals resumed")
                failed, delay = False, 0.1
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    signal = self._parse(message.get("data"), self.max_signal_bytes)
                    if signal is not None and signal.origin != self.replica_id:
                        try:
                            await on_signal(signal)
                        except Exception:
                            logger.exception(
                                "session store: handling a %s signal failed", signal.kind
                            )
            except Exception as exc:  # rule 6: reconnect
                self.connected = False
                if not failed:
                    logger.warning(
                        "session store: signal connection lost (%s); retrying", type(exc).__name__
                    )
                failed = True
            finally:
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await pubsub.aclose()
            await anyio.sleep(delay)
            delay = min(delay * 2, 2.0)

    @staticmethod
    def _parse(data: Any, max_bytes: int) -> SessionSignal | None:
        if not isinstance(data, (bytes, str)) or len(data) > max_bytes:
            logger.warning("session store: dropped an oversized or non-text signal (rule 7)")
            return None
        try:
            body = json.loads(data)
            message: Any = body.get("m")
            return SessionSignal(
                kind=str(body["k"]),
                session_id=str(body["s"]),
                origin=str(body["o"]),
                version=int(body.get("v", 0)),
                message=cast(JSON, message) if isinstance(message, dict) else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            logger.warning("session store: dropped a malformed signal")
            return None

    async def _write_back(self, records: list[SessionRecord]) -> None:
        """Rule 5: write the held sessions Redis lost back (not the deleted ones)."""
        if not records:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for record in records:
                fields = json.dumps(self._fields(record))
                keys = [self._key(record.session_id), self._gone(record.session_id)]
                await self._restore(keys=keys, args=[self.ttl_ms, fields], client=pipe)
            restored = await pipe.execute()
        n = sum(1 for r in restored if r == 1)
        if n:
            logger.warning("session store: wrote %d held sessions back to Redis", n)

    async def _keep(
        self,
        on_signal: Callable[[SessionSignal], Awaitable[None]],
        held: Callable[[bool], list[SessionRecord]],
    ) -> None:
        """Renew the sessions with open connections here; a changed or vanished one is
        handled as the signal that would have said so (rule 5)."""
        while True:
            await anyio.sleep(self.keep_interval_s)
            records = held(True)
            if not records:
                continue
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for record in records:
                        pipe.pexpire(self._key(record.session_id), self.ttl_ms)
                        pipe.hget(self._key(record.session_id), "v")
                        pipe.exists(self._gone(record.session_id))
                    answers = await pipe.execute()
                lost: list[SessionRecord] = []
                for i, record in enumerate(records):
                    renewed, version, gone = answers[3 * i : 3 * i + 3]
                    if renewed and version is not None:
                        signal = SessionSignal(
                            "changed", record.session_id, "", int(_text(version))
                        )
                    elif gone:
                        signal = SessionSignal("deleted", record.session_id, "")
                    else:
                        lost.append(record)
                        continue
                    await on_signal(signal)
                await self._write_back(lost)
            except Exception as exc:
                logger.warning("session store: keep-alive failed (%s)", type(exc).__name__)
