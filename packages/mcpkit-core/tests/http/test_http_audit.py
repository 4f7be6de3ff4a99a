"""The status codes and headers of the endpoint against the MUSTs of the transport pages
(2025-11-25 ``basic/transports``, 2026-07-28 ``transports/streamable-http``, 2025-03-26
batches): the rows of the audit table in ``docs/transports.md`` that no other test
covers."""

from __future__ import annotations

import re

import pytest
from http_helpers import BOTH, LATEST, headers, initialize, mcp_http, request

from mcpkit.server.http.security import OriginGuard

pytestmark = pytest.mark.anyio

TYPED = ("application/json", "text/event-stream")


async def test_delete_with_an_unsupported_protocol_version_is_400() -> None:
    # Regression: DELETE skipped the MCP-Protocol-Version check (the MUST: 400 for an
    # invalid or unsupported version on any request) and ended the session with 204.
    async with mcp_http() as (client, url, endpoint):
        sid = await initialize(client, url)
        r = await client.delete(url, headers=headers(sid, mcp_protocol_version="1999-01-01"))
        assert r.status_code == 400
        assert "1999-01-01" in r.json()["error"]["message"]
        assert len(endpoint.sessions) == 1
        r = await client.delete(url, headers=headers(sid, mcp_protocol_version=LATEST))
        assert r.status_code == 204


def test_origin_is_validated_even_where_dns_rebinding_protection_is_off_by_default() -> None:
    # Regression: on a non-loopback bind without allowlists no Origin was checked at
    # all (the MUST: validate Origin on all incoming connections; 403 when invalid).
    guard = OriginGuard()
    public = {"server": ("10.1.2.3", 8765)}
    assert guard.check(public, "mcp.example.com", "https://attacker.test") == (
        403,
        "Forbidden: Origin 'https://attacker.test' is not this server's origin "
        "(Host 'mcp.example.com'); list it in allowed_origins",
    )
    assert guard.check(public, "mcp.example.com", "https://mcp.example.com") is None
    assert guard.check(public, "mcp.example.com:443", "https://mcp.example.com") is None
    assert guard.check(public, "mcp.example.com:8080", "http://mcp.example.com:8080") is None
    assert guard.check(public, "mcp.example.com:8080", "http://mcp.example.com") is not None
    assert guard.check(public, "mcp.example.com", None) is None  # no Origin: not a browser
    assert guard.check(public, "mcp.example.com", "null") is not None
    configured = OriginGuard(allowed_hosts=["*"], allowed_origins=["https://app.example"])
    assert configured.check(public, "mcp.example.com", "https://app.example") is None
    assert OriginGuard(enabled=False).check(public, "a.test", "https://b.test") is None


async def test_session_id_is_visible_ascii_and_notifications_get_202_without_a_body() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        assert re.fullmatch(r"[\x21-\x7e]+", sid)
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        r = await client.post(url, json=note, headers=headers(sid))
        assert (r.status_code, r.content) == (202, b"")
        r = await client.post(
            url, json={"jsonrpc": "2.0", "id": 99, "result": {}}, headers=headers(sid)
        )
        assert (r.status_code, r.content) == (202, b"")


async def test_every_405_carries_allow() -> None:
    for options, allow in (({}, "GET, POST, DELETE"), ({"stateless": True}, "POST")):
        async with mcp_http(**options) as (client, url, _):
            for method in ("PUT", "PATCH", *(("GET", "DELETE") if options else ())):
                r = await client.request(method, url, headers=headers(accept=BOTH))
                assert r.status_code == 405, (options, method)
                assert r.headers["allow"] == allow


@pytest.mark.parametrize("accept", [BOTH, "application/json", "text/event-stream", "*/*"])
@pytest.mark.parametrize("response_mode", ["auto", "json", "sse"])
async def test_every_post_carrying_a_request_is_json_or_sse(
    accept: str, response_mode: str
) -> None:
    # The MUST of both pages, across response modes, Accept values and outcomes
    # (result, JSON-RPC error, tool error, batch).
    async with mcp_http(response_mode=response_mode) as (client, url, _):
        sid = await initialize(client, url, version="2025-03-26")
        h = headers(sid, accept=accept)
        bodies = [
            request(2, "ping"),
            request(3, "nope/nope"),
            request(4, "tools/call", {"name": "test_error_handling", "arguments": {}}),
            [request(5, "ping"), request(6, "tools/list")],
        ]
        for body in bodies:
            r = await client.post(url, json=body, headers=h)
            assert r.status_code == 200, (body, r.text)
            assert r.headers["content-type"].split(";")[0] in TYPED, body
            if r.headers["content-type"] == "text/event-stream":
                assert r.headers["cache-control"] == "no-cache, no-transform"
                assert r.headers["x-accel-buffering"] == "no"


# kind-ok: fixed-port Origin and Host header values only, nothing is bound or connected
SITE = "http://localhost:8000"


@pytest.mark.parametrize(
    "origin",
    [
        f"{SITE}//",  # the old rstrip("/") made these the allowed origin
        f"{SITE}/?",
        f"{SITE}/#",
        f"{SITE}/x",
        SITE.replace("//", "//user@"),
        SITE.replace("8000", "99999"),
        SITE.replace("local", "local\t"),  # urlsplit alone would drop the tab
        SITE.replace(":8000", "\u00a0:8000"),
        "null",
        SITE.removeprefix("http://"),
    ],
)
def test_an_origin_is_parsed_as_a_serialized_origin_never_trimmed(origin: str) -> None:
    # Rule 5 (issue 25 §2, URLs read with a parser): only scheme://host[:port] passes.
    loopback = {"server": ("127.0.0.1", 8000)}
    public = {"server": ("10.1.2.3", 8000)}
    host = SITE.removeprefix("http://")
    listed = OriginGuard(allowed_origins=[SITE])
    assert OriginGuard().check(loopback, host, origin) is not None
    assert OriginGuard().check(public, host, origin) is not None
    assert listed.check(loopback, host, origin) is not None
    assert OriginGuard().check(loopback, host, SITE) is None
    assert OriginGuard().check(loopback, host, SITE + "/") is None
    assert listed.check(loopback, host, SITE.upper()) is None
    v6 = SITE.replace("localhost", "[::1]")
    assert OriginGuard().check(loopback, v6.removeprefix("http://"), v6) is None
