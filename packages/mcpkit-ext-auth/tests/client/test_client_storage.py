"""Token storage: the memory default and the file store for CLIs (0600, atomic)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpkit.ext.auth.client import (
    ClientRegistration,
    FileTokenStorage,
    MemoryTokenStorage,
    TokenSet,
)

pytestmark = pytest.mark.anyio
RESOURCE = "https://mcp.example.com/mcp"


def tokens(n: int) -> TokenSet:
    return TokenSet(f"at-{n}", "Bearer", 2_000_000_000.0, f"rt-{n}", "a b", "https://as")


async def test_file_store_is_created_0600_in_a_0700_directory(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "tokens.json"
    store = FileTokenStorage(path)
    await store.set_tokens(RESOURCE, tokens(1))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == ["tokens.json"]  # no temporary file left behind


async def test_file_store_round_trips_and_replaces_rotated_tokens_whole(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    await FileTokenStorage(path).set_tokens(RESOURCE, tokens(1))
    await FileTokenStorage(path).set_tokens(RESOURCE, tokens(2))
    reg = ClientRegistration("c-1", "s", "client_secret_basic", issuer="https://as")
    await FileTokenStorage(path).set_registration(RESOURCE, reg)
    fresh = FileTokenStorage(path)  # a new process reading the file
    got = await fresh.get_tokens(RESOURCE)
    assert got is not None
    assert (got.access_token, got.refresh_token, got.expires_at) == ("at-2", "rt-2", 2e9)
    assert "rt-1" not in path.read_text()
    stored = await fresh.get_registration(RESOURCE, "https://as")
    assert stored is not None
    assert (stored.client_id, stored.token_endpoint_auth_method) == ("c-1", "client_secret_basic")
    assert await fresh.get_registration(RESOURCE, "https://other") is None
    await fresh.set_tokens(RESOURCE, None)
    assert await FileTokenStorage(path).get_tokens(RESOURCE) is None


async def test_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    await FileTokenStorage(path).set_tokens(RESOURCE, tokens(1))
    path.chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        await FileTokenStorage(path).get_tokens(RESOURCE)


async def test_memory_store_keys_registrations_by_issuer() -> None:
    store = MemoryTokenStorage()
    await store.set_registration(RESOURCE, ClientRegistration("c-1", issuer="https://as1"))
    assert await store.get_registration(RESOURCE, "https://as2") is None
    got = await store.get_registration(RESOURCE, "https://as1")
    assert got is not None
    assert got.client_id == "c-1"


def test_token_values_never_appear_in_reprs() -> None:
    text = repr(tokens(7)) + repr(ClientRegistration("c", "secret-value"))
    assert "at-7" not in text
    assert "rt-7" not in text
    assert "secret-value" not in text
