"""Tables that keep what a peer chooses are bounded by bytes, not only by count (issue
25 §3). Each test fills one store with long peer-chosen texts and sums the bytes of the
text it holds (:func:`mcpkit.core.bounded.text_bytes`)."""

from __future__ import annotations

from typing import Any

import pytest
from peer import raw

from mcpkit.core import meta as M
from mcpkit.core.bounded import text_bytes
from mcpkit.core.versions import MODERN_VERSION
from mcpkit.proxy import proxy
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

LONG = 1_000_000
"""One peer-chosen text: 1 MB (a 4 MiB HTTP body holds four)."""
PAGE_BYTES = 16 * 1024 * 1024
"""``ProxyLimits.max_cached_page_bytes``' default."""


async def test_the_client_result_cache_counts_its_keys() -> None:
    """client/cache.py ResultCache rule 6: a server's cursors are part of the key."""
    from mcpkit.client.cache import ResultCache

    cache = ResultCache(max_entries=512, max_bytes=4 * 1024 * 1024)
    page: dict[str, Any] = {"tools": [], "ttlMs": 60_000}
    for i in range(40):
        assert cache.put("tools/list", {"cursor": f"{i}" + "c" * LONG}, page) or i > 0
    held = text_bytes(list(cache._entries))  # pyright: ignore[reportPrivateUsage]
    assert held <= 2 * cache.max_bytes  # the key text counted once as JSON, once as str
    assert cache.bytes <= cache.max_bytes


def upstream() -> Server:
    server = Server("up")

    @server.tool()
    async def plain() -> str:
        return "plain"

    return server


def modern(caps: dict[str, Any]) -> dict[str, Any]:
    return {
        "_meta": {
            M.PROTOCOL_VERSION: MODERN_VERSION,
            M.CLIENT_INFO: {"name": "t", "version": "1"},
            M.CLIENT_CAPABILITIES: caps,
        }
    }


async def test_the_proxys_page_cache_is_bounded_by_bytes() -> None:
    """proxy/lists.py ProxyLists.pages: each distinct downstream capability set is a key
    (the client chooses it), and each gets its own cached page."""
    front = proxy(upstream(), mode="modern")
    async with raw(front) as wire:
        for i in range(40):
            caps = {"experimental": {"pad": f"{i}" + "p" * LONG}}
            answer = await wire.call(i + 1, "tools/list", modern(caps))
            assert "result" in answer, answer
    pages = front.proxy.lists.pages  # type: ignore[attr-defined]
    assert 0 < len(pages) < 40
    assert text_bytes(list(pages.items())) <= PAGE_BYTES


def test_the_media_type_caches_keep_no_long_header_value() -> None:
    """server/http/media.py ``_COMMON`` / ``_JSON_TYPES`` (rule 5)."""
    from mcpkit.server.http import media

    for i in range(64):
        media.negotiate(f"application/json;x={i}" + ";y=1" * 25_000)
        media.is_json_content_type(f"application/json;x={i}" + ";y=1" * 25_000)
    held = text_bytes(list(media._COMMON), list(media._JSON_TYPES))  # pyright: ignore[reportPrivateUsage]
    assert held <= 2 * 64 * 400


def test_the_schema_cache_is_bounded_by_bytes() -> None:
    """core/jsonschema.py: a client compiles each server's ``outputSchema``."""
    from mcpkit.core import jsonschema as J

    J._cache.clear()  # pyright: ignore[reportPrivateUsage]
    for i in range(64):
        J.compile_schema({"type": "object", "description": f"{i}" + "d" * LONG})
    held = text_bytes(list(J._cache._entries))  # pyright: ignore[reportPrivateUsage]
    J._cache.clear()  # pyright: ignore[reportPrivateUsage]
    assert held <= 16 * 1024 * 1024


async def test_a_session_keeps_no_more_than_max_client_info_bytes_of_initialize() -> None:
    """server/lifecycle.py rule 4: capabilities and clientInfo live as long as the
    session (and ``max_sessions`` sessions at once)."""
    from mcpkit.core.jsonrpc import JSONRPCError
    from mcpkit.server.lifecycle import LegacySession

    server = upstream()
    session = LegacySession(server)
    huge = {"experimental": {"pad": "i" * LONG}}
    params = {"protocolVersion": "2025-11-25", "capabilities": huge, "clientInfo": {"name": "x"}}
    refused: JSONRPCError | None = None
    try:
        session.initialize(params)
    except JSONRPCError as exc:
        refused = exc
    held = text_bytes(session.client_capabilities, session.client_info)
    session.close()
    assert held <= 64 * 1024
    assert refused is not None
    assert refused.code == -32602
    assert "max_client_info_bytes" in refused.message
    async with raw(server) as wire:  # a usual initialize is served
        assert "result" in await wire.initialize()


async def test_a_refusal_quotes_an_unknown_name_only_in_part() -> None:
    """An unknown tool or prompt name goes back in the error, into logs, spans and the
    resumable event store: its first 64 characters and its length, not all of it."""
    server = upstream()
    async with raw(server) as wire:
        await wire.initialize()
        for i, (method, params) in enumerate(
            [
                ("tools/call", {"name": "t" * LONG, "arguments": {}}),
                ("prompts/get", {"name": "p" * LONG}),
            ]
        ):
            answer = await wire.call(i + 1, method, params)
            message = answer["error"]["message"]
            assert len(message) < 1024
            assert f"({LONG} characters)" in message
