"""2026-07-28 requests on a connection (the dual-era front-end, ``server/frontend.py``):
the per-request envelope, ``server/discover``, removed methods, result decoration,
resource-not-found, and client input through MRTR."""

from __future__ import annotations

from typing import Any

import pytest
from peer import raw

from mcpkit.core.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def envelope(caps: JSON | None = None, **params: Any) -> JSON:
    return {**params, "_meta": {VERSION: "2026-07-28", CAPS: caps or {}}}


def modern_server() -> Server:
    server = Server("modern", "2.0", instructions="stateless")

    @server.tool()
    def hello(name: str) -> str:
        return f"hello {name}"

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"{answer['action']} {answer.get('content')}"

    @server.resource("mem://known")
    def known() -> str:
        return "known"

    return server


async def test_discover_lists_versions_and_capabilities_without_initialize() -> None:
    async with raw(modern_server()) as wire:
        reply = await wire.call(1, "server/discover", envelope())
    result = reply["result"]
    assert "2026-07-28" in result["supportedVersions"]
    assert "2025-11-25" in result["supportedVersions"]
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert "logging" not in result["capabilities"]  # handshake-era only
    assert result["instructions"] == "stateless"
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {"name": "modern", "version": "2.0"}


async def test_modern_tool_call_needs_no_session_and_is_decorated() -> None:
    async with raw(modern_server()) as wire:
        reply = await wire.call(1, "tools/call", envelope(name="hello", arguments={"name": "2026"}))
        listed = await wire.call(2, "tools/list", envelope())
    assert reply["result"]["content"] == [{"type": "text", "text": "hello 2026"}]
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["_meta"][SERVER_INFO]["name"] == "modern"
    assert listed["result"]["ttlMs"] >= 0
    assert listed["result"]["cacheScope"] in ("public", "private")


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({VERSION: "2026-07-28"}, INVALID_PARAMS),  # no capabilities
        ({CAPS: {}}, INVALID_PARAMS),  # no version
        ({VERSION: 2026, CAPS: {}}, INVALID_PARAMS),
        ({VERSION: "2099-01-01", CAPS: {}}, UNSUPPORTED_PROTOCOL_VERSION),
        (
            {VERSION: "2026-07-28", CAPS: {}, "io.modelcontextprotocol/logLevel": "loud"},
            INVALID_PARAMS,
        ),
    ],
)
async def test_malformed_envelope_is_refused(meta: JSON, code: int) -> None:
    async with raw(modern_server()) as wire:
        reply = await wire.call(1, "tools/list", {"_meta": meta})
    assert reply["error"]["code"] == code
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        assert reply["error"]["data"]["requested"] == "2099-01-01"
        assert "2026-07-28" in reply["error"]["data"]["supported"]


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "nope/nothing"]
)
async def test_methods_the_revision_removed_are_method_not_found(method: str) -> None:
    async with raw(modern_server()) as wire:
        reply = await wire.call(1, method, envelope(uri="mem://known", level="info"))
    assert reply["error"]["code"] == METHOD_NOT_FOUND


async def test_unknown_resource_is_invalid_params_with_the_uri_on_2026_07_28() -> None:
    async with raw(modern_server()) as wire:
        reply = await wire.call(1, "resources/read", envelope(uri="mem://missing"))
    assert reply["error"]["code"] == INVALID_PARAMS
    assert reply["error"]["data"] == {"uri": "mem://missing"}


async def test_client_input_is_requested_with_mrtr_and_the_retry_completes() -> None:
    caps = {"elicitation": {"form": {}}}
    async with raw(modern_server()) as wire:
        first = (await wire.call(1, "tools/call", envelope(caps, name="confirm")))["result"]
        assert first["resultType"] == "input_required"
        [(key, request)] = first["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["requestedSchema"]["properties"]["ok"] == {"type": "boolean"}
        retry = envelope(
            caps,
            name="confirm",
            inputResponses={key: {"action": "accept", "content": {"ok": True}}},
            requestState=first["requestState"],
        )
        done = (await wire.call(2, "tools/call", retry))["result"]
        tampered = await wire.call(
            3,
            "tools/call",
            {**retry, "requestState": first["requestState"][:-2] + "xx"},
        )
        no_caps = await wire.call(4, "tools/call", envelope({}, name="confirm"))
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": "accept {'ok': True}"}]
    assert tampered["error"]["code"] == INVALID_PARAMS
    assert no_caps["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert no_caps["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_both_eras_share_one_connection() -> None:
    async with raw(modern_server()) as wire:
        await wire.initialize()
        legacy = await wire.call(1, "tools/call", {"name": "hello", "arguments": {"name": "a"}})
        modern = await wire.call(2, "tools/call", envelope(name="hello", arguments={"name": "b"}))
    assert "resultType" not in legacy["result"]
    assert legacy["result"]["content"][0]["text"] == "hello a"
    assert modern["result"]["resultType"] == "complete"
    assert modern["result"]["content"][0]["text"] == "hello b"
