"""Where the OAuth proxy keeps its state: :class:`ProxyStore` (memory or Redis) and the
:class:`Vault` that seals every record before it reaches the store.

Rules:
1. A store maps string keys to bytes, each with a time to live in seconds; ``pop``
   removes and returns atomically (Redis ``GETDEL``), so a single-use value (a code, a
   refresh token, a pending ``state``) is taken by one replica only.
2. :class:`MemoryProxyStore` is bounded in count (the oldest entry goes first) and in
   value size; :class:`RedisProxyStore` (``mcpkit-core[redis]``) bounds value size and
   count (``max_entries``: an index sorted set scored by expiry, kept by Lua scripts in
   one step with each write; past the bound, the entries closest to expiry go first,
   never the one being written) and gives every key, the index too, a TTL, so Redis
   holds nothing that does not expire; every key starts with the settings' prefix.
3. The :class:`Vault` never stores a raw key or a clear value: the key is
   ``<kind>:<HMAC-SHA256(key)>`` and the value is AES-256-GCM (``cryptography``'s AEAD,
   a fresh 96-bit nonce each time, the stored key as associated data, so a value moved
   to another key does not open). Both keys are derived (HKDF-SHA256) from the one
   ``secret_key`` the operator configures (at least 32 bytes); replicas that share a
   store share that secret.
4. A record that does not open (another secret, tampering) reads as absent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any, Protocol

from mcpkit.ext.auth.devserver.store import ExpiringStore

__all__ = ["MemoryProxyStore", "ProxyStore", "RedisProxyStore", "Vault", "derive_key"]

MIN_SECRET_BYTES = 32


class ProxyStore(Protocol):
    """Rule 1: the async key-value store behind the proxy."""

    async def put(self, key: str, value: bytes, ttl_s: float) -> None: ...
    async def get(self, key: str) -> bytes | None: ...
    async def pop(self, key: str) -> bytes | None: ...
    async def delete(self, key: str) -> None: ...


class MemoryProxyStore:
    """Rule 2: one process's store (``max_entries`` keys, ``max_value_bytes`` each)."""

    def __init__(self, *, max_entries: int = 20_000, max_value_bytes: int = 65_536) -> None:
        self.max_value_bytes = max_value_bytes
        self._entries: ExpiringStore[bytes] = ExpiringStore(max_entries=max_entries, ttl_s=60)

    def __len__(self) -> int:
        return len(self._entries)

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        _check_size(value, self.max_value_bytes)
        self._entries.put(key, value, ttl_s=ttl_s)

    async def get(self, key: str) -> bytes | None:
        return self._entries.get(key)

    async def pop(self, key: str) -> bytes | None:
        return self._entries.pop(key)

    async def delete(self, key: str) -> None:
        self._entries.pop(key)


_PUT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREM', KEYS[1], KEYS[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[1], over)
  for i = 1, #gone, 2 do redis.call('DEL', gone[i]) end
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[1], now + ttl, KEYS[2])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return over
"""

_POP = """
local v = redis.call('GET', KEYS[2])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], KEYS[2])
return v
"""


class RedisProxyStore:
    """Rule 2: the store on Redis (``settings``: core's
    :class:`~mcpkit.server.redis.RedisSettings`); several replicas share it, at most
    ``max_entries`` keys of at most ``max_value_bytes`` each. Redis errors and timeouts
    raise :class:`~mcpkit.server.redis.RedisUnavailable`."""

    def __init__(
        self, settings: Any, *, max_entries: int = 50_000, max_value_bytes: int = 65_536
    ) -> None:
        from mcpkit.server.redis.settings import connect

        if max_entries < 1:
            raise ValueError("RedisProxyStore: max_entries must be at least 1")
        self.settings = settings
        self.max_entries = max_entries
        self.max_value_bytes = max_value_bytes
        self._redis: Any = connect(settings)
        self._index = str(settings.key("oauthproxy", "#index"))
        self._put = self._redis.register_script(_PUT)
        self._pop = self._redis.register_script(_POP)

    def _key(self, key: str) -> str:
        return str(self.settings.key("oauthproxy", key))

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        from mcpkit.server.redis.settings import unavailable

        _check_size(value, self.max_value_bytes)
        ttl_ms = max(1, int(ttl_s * 1000))
        with unavailable("storing OAuth proxy state"):
            await self._put(
                keys=[self._index, self._key(key)], args=[value, ttl_ms, self.max_entries]
            )

    async def get(self, key: str) -> bytes | None:
        from mcpkit.server.redis.settings import unavailable

        with unavailable("reading OAuth proxy state"):
            value = await self._redis.get(self._key(key))
        return bytes(value) if value is not None else None

    async def pop(self, key: str) -> bytes | None:
        from mcpkit.server.redis.settings import unavailable

        with unavailable("taking OAuth proxy state"):
            value = await self._pop(keys=[self._index, self._key(key)])
        return bytes(value) if value is not None else None

    async def delete(self, key: str) -> None:
        await self.pop(key)

    async def aclose(self) -> None:
        await self._redis.aclose()


def _check_size(value: bytes, max_bytes: int) -> None:
    if len(value) > max_bytes:
        raise ValueError(f"an OAuth proxy record of {len(value)} bytes exceeds {max_bytes}")


def derive_key(secret_key: bytes, purpose: str) -> bytes:
    """Rule 3: a 32-byte key for ``purpose`` from the configured secret (HKDF-SHA256)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode())
    return hkdf.derive(secret_key)


class Vault:
    """Rules 3-4: JSON records sealed into a :class:`ProxyStore`."""

    def __init__(self, store: ProxyStore, secret_key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if len(secret_key) < MIN_SECRET_BYTES:
            raise ValueError(f"secret_key must be at least {MIN_SECRET_BYTES} bytes")
        self.store = store
        self._names = derive_key(secret_key, "mcpkit oauthproxy store names")
        self._aead = AESGCM(derive_key(secret_key, "mcpkit oauthproxy store values"))

    def name(self, kind: str, key: str) -> str:
        digest = hmac.new(self._names, key.encode(), hashlib.sha256).hexdigest()
        return f"{kind}:{digest}"

    def _seal(self, name: str, record: Any) -> bytes:
        nonce = secrets.token_bytes(12)
        plain = json.dumps(record, separators=(",", ":")).encode()
        return nonce + self._aead.encrypt(nonce, plain, name.encode())

    def _open(self, name: str, sealed: bytes | None) -> Any:
        from cryptography.exceptions import InvalidTag

        if sealed is None or len(sealed) < 13:
            return None
        try:
            return json.loads(self._aead.decrypt(sealed[:12], sealed[12:], name.encode()))
        except (InvalidTag, ValueError):
            return None

    async def put(self, kind: str, key: str, record: Any, ttl_s: float) -> None:
        name = self.name(kind, key)
        await self.store.put(name, self._seal(name, record), ttl_s)

    async def get(self, kind: str, key: str) -> Any:
        name = self.name(kind, key)
        return self._open(name, await self.store.get(name))

    async def pop(self, kind: str, key: str) -> Any:
        name = self.name(kind, key)
        return self._open(name, await self.store.pop(name))

    async def delete(self, kind: str, key: str) -> None:
        await self.store.delete(self.name(kind, key))
