"""The OAuth proxy's sealed store: keys are HMACs, values AES-GCM bound to their key,
a record under another secret or moved to another key reads as absent, bounds hold."""

from __future__ import annotations

import pytest

from mcpkit.ext.auth.oauthproxy.store import MemoryProxyStore, Vault

pytestmark = pytest.mark.anyio


async def test_records_are_sealed_and_bound_to_their_key() -> None:
    store = MemoryProxyStore()
    vault = Vault(store, b"a" * 32)
    await vault.put("refresh", "rt-secret-value", {"subject": "alice"}, 60)
    name = vault.name("refresh", "rt-secret-value")
    assert "rt-secret-value" not in name
    sealed = await store.get(name)
    assert sealed is not None
    assert b"alice" not in sealed
    assert await vault.get("refresh", "rt-secret-value") == {"subject": "alice"}
    other = Vault(store, b"b" * 32)
    await store.put(other.name("refresh", "rt-secret-value"), sealed, 60)
    assert await other.get("refresh", "rt-secret-value") is None  # another secret
    moved = vault.name("refresh", "another")
    await store.put(moved, sealed, 60)
    assert await vault.get("refresh", "another") is None  # moved to another key
    await store.put(name, sealed[:-1] + bytes([sealed[-1] ^ 1]), 60)
    assert await vault.get("refresh", "rt-secret-value") is None  # tampered
    assert await vault.pop("refresh", "rt-secret-value") is None


async def test_memory_store_is_bounded_in_count_and_size() -> None:
    store = MemoryProxyStore(max_entries=3, max_value_bytes=10)
    for i in range(5):
        await store.put(f"k{i}", b"v", 60)
    assert len(store) == 3
    assert await store.get("k0") is None
    with pytest.raises(ValueError, match="exceeds 10"):
        await store.put("big", b"x" * 11, 60)
    assert await store.pop("k4") == b"v"
    assert await store.pop("k4") is None  # single use


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Vault(MemoryProxyStore(), b"x" * 31)
