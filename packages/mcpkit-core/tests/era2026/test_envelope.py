"""The 2026-07-28 per-request envelope, removed methods, resultType and cache hints."""

from __future__ import annotations

import pytest

from mcpkit.core.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
)

from .conftest import RawPeer, envelope

pytestmark = pytest.mark.anyio

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"


@pytest.mark.parametrize("drop", [PV, CAPS])
async def test_missing_required_meta_key_is_invalid_params(peer: RawPeer, drop: str) -> None:
    meta = envelope()
    del meta[drop]
    with pytest.raises(JSONRPCError) as err:
        await peer.call("server/discover", {"_meta": meta})
    assert err.value.code == INVALID_PARAMS
    assert drop in err.value.message


async def test_client_info_is_optional(peer: RawPeer) -> None:
    meta = envelope()
    del meta["io.modelcontextprotocol/clientInfo"]
    result = await peer.call("server/discover", {"_meta": meta})
    assert "2026-07-28" in result["supportedVersions"]


async def test_unsupported_version_lists_supported_and_requested(peer: RawPeer) -> None:
    with pytest.raises(JSONRPCError) as err:
        await peer.call("server/discover", {"_meta": envelope(**{PV: "v999.0.0"})})
    assert err.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert err.value.data["requested"] == "v999.0.0"
    assert "2026-07-28" in err.value.data["supported"]


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ],
)
async def test_methods_removed_in_2026_are_method_not_found(peer: RawPeer, method: str) -> None:
    with pytest.raises(JSONRPCError) as err:
        await peer.call(method, {"_meta": envelope()})
    assert err.value.code == METHOD_NOT_FOUND


async def test_discover_advertises_capabilities_and_identity(peer: RawPeer) -> None:
    r = await peer.call("server/discover", {"_meta": envelope()})
    assert r["resultType"] == "complete"
    assert {"tools", "prompts", "resources"} <= set(r["capabilities"])
    assert "logging" not in r["capabilities"]
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "0.1.0"
    assert r["ttlMs"] >= 0
    assert r["cacheScope"] in ("public", "private")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "test://static-text"}),
    ],
)
async def test_cacheable_results_carry_ttl_and_scope(
    peer: RawPeer, method: str, params: dict[str, object]
) -> None:
    r = await peer.call(method, {**params, "_meta": envelope()})
    assert isinstance(r["ttlMs"], int)
    assert r["ttlMs"] >= 0
    assert r["cacheScope"] in ("public", "private")
    assert r["resultType"] == "complete"


async def test_resource_not_found_is_invalid_params_with_uri(peer: RawPeer) -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    with pytest.raises(JSONRPCError) as err:
        await peer.call("resources/read", {"uri": uri, "_meta": envelope()})
    assert err.value.code == INVALID_PARAMS
    assert err.value.data == {"uri": uri}


async def test_no_log_messages_without_log_level(peer: RawPeer) -> None:
    await peer.call(
        "tools/call", {"name": "test_logging_tool", "arguments": {}, "_meta": envelope()}
    )
    assert not [m for m, _ in peer.notifications if m == "notifications/message"]


async def test_log_messages_follow_the_requested_level(peer: RawPeer) -> None:
    meta = envelope(**{"io.modelcontextprotocol/logLevel": "info"})
    await peer.call("tools/call", {"name": "test_logging_tool", "arguments": {}, "_meta": meta})
    logs = [p for m, p in peer.notifications if m == "notifications/message"]
    assert [p["data"] for p in logs if p] == [
        "test_logging_tool started",
        "test_logging_tool finished",
    ]
    peer.notifications.clear()
    meta = envelope(**{"io.modelcontextprotocol/logLevel": "error"})
    await peer.call("tools/call", {"name": "test_logging_tool", "arguments": {}, "_meta": meta})
    assert not [m for m, _ in peer.notifications if m == "notifications/message"]
