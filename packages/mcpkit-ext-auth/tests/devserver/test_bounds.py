"""Bounds: every store is count-bounded with expiry, bodies are size-bounded."""

from __future__ import annotations

import httpx2
import pytest
from as_helpers import REDIRECT, code_for, exchange, pkce

from mcpkit.ext.auth.devserver import DevServerLimits, serve_dev_auth_server
from mcpkit.ext.auth.devserver.store import ExpiringStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_store_evicts_the_oldest_at_the_count_bound() -> None:
    store: ExpiringStore[int] = ExpiringStore(max_entries=3, ttl_s=60)
    for i in range(5):
        store.put(f"k{i}", i)
    assert len(store) == 3
    assert store.get("k0") is None
    assert store.get("k1") is None
    assert [store.get(f"k{i}") for i in (2, 3, 4)] == [2, 3, 4]


def test_store_entries_expire_and_pop_is_single_use() -> None:
    clock = Clock()
    store: ExpiringStore[str] = ExpiringStore(max_entries=10, ttl_s=5, clock=clock)
    store.put("a", "x")
    store.put("b", "y", ttl_s=50)
    clock.now += 6
    assert store.get("a") is None
    assert store.pop("b") == "y"
    assert store.pop("b") is None
    store.put("c", "z")
    clock.now += 6
    store.put("d", "w")  # purges the expired "c" from the old end
    assert len(store) == 1
    with pytest.raises(ValueError, match="max_entries"):
        ExpiringStore(max_entries=0, ttl_s=1)


@pytest.mark.anyio
async def test_codes_clients_and_refresh_tokens_are_bounded(http: httpx2.AsyncClient) -> None:
    limits = DevServerLimits(max_codes=2, max_clients=3, max_refresh_tokens=2)
    async with serve_dev_auth_server(limits=limits) as server:
        server.register_client("public", redirect_uris=[REDIRECT])
        pairs = [pkce() for _ in range(3)]
        codes = [await code_for(http, server, challenge) for _, challenge in pairs]
        assert len(server.codes) == 2
        oldest = await exchange(http, server, codes[0], pairs[0][0])
        assert oldest.json()["error"] == "invalid_grant"  # evicted
        assert (await exchange(http, server, codes[2], pairs[2][0])).status_code == 200
        assert (await exchange(http, server, codes[1], pairs[1][0])).status_code == 200
        # A third refresh token evicts the first.
        verifier, challenge = pkce()
        code = await code_for(http, server, challenge)
        assert (await exchange(http, server, code, verifier)).status_code == 200
        assert len(server.refresh_tokens) == 2
        registered = [
            (await http.post(server.registration_endpoint, json={"redirect_uris": [REDIRECT]}))
            for _ in range(4)
        ]
        assert all(r.status_code == 201 for r in registered)
        assert len(server.clients) == 1 + 3  # the pre-registered one is never evicted
        assert server.clients.get(registered[0].json()["client_id"]) is None
        assert server.clients.get("public") is not None


@pytest.mark.anyio
async def test_oversized_bodies_are_413(http: httpx2.AsyncClient) -> None:
    async with serve_dev_auth_server(limits=DevServerLimits(max_request_body_bytes=1024)) as s:
        big = "x" * 2048
        token = await http.post(
            s.token_endpoint, data={"grant_type": "client_credentials", "p": big}
        )
        assert token.status_code == 413
        register = await http.post(s.registration_endpoint, json={"client_name": big})
        assert register.status_code == 413
        authorize = await http.post(s.authorization_endpoint, data={"state": big})
        assert authorize.status_code == 413
