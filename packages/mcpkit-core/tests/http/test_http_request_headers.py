"""``ctx.http_headers()`` (issue 26, ``server/request_headers.py``): a tool reads the HTTP
request's headers, never the credentials unless it names them, bounded; empty over the
in-memory transport."""

from __future__ import annotations

import json
from typing import Any

import pytest
from http_helpers import mcp_http

from mcpkit.client import Client, HttpTransport
from mcpkit.server import Context, Server
from mcpkit.server.request_headers import read

pytestmark = pytest.mark.anyio

SECRETS = {
    "Authorization": "Bearer s3cret",
    "Cookie": "sid=abc",
    "Proxy-Authorization": "Basic eA==",
    "X-Api-Key": "k-123",
    "X-Auth-Token": "t-456",
}


def headers_server() -> Server:
    server = Server("headers")

    @server.tool
    def seen(ctx: Context, include: list[str] | None = None) -> str:  # pyright: ignore[reportUnusedFunction]
        return json.dumps(ctx.http_headers(include=include or ()))

    return server


async def test_a_tool_reads_the_headers_without_credentials_over_http() -> None:
    sent = {"X-Tenant": "acme", "User-Agent": "test-agent", **SECRETS}
    async with mcp_http(headers_server()) as (_, url, _endpoint):
        for mode in ("legacy", "modern"):
            async with Client(HttpTransport(url, headers=sent), mode=mode) as client:
                plain = await client.call_tool("seen", {})
                asked = await client.call_tool("seen", {"include": ["Authorization"]})
            got: dict[str, Any] = json.loads(plain.content[0].text)  # type: ignore[union-attr]
            assert got["x-tenant"] == "acme", mode
            assert got["user-agent"] == "test-agent"
            leaked = [n for n in got if n in {k.lower() for k in SECRETS} or n == "mcp-session-id"]
            assert leaked == [], mode
            explicit: dict[str, Any] = json.loads(asked.content[0].text)  # type: ignore[union-attr]
            assert explicit["authorization"] == "Bearer s3cret"
            assert "cookie" not in explicit


async def test_over_the_in_memory_transport_there_are_no_headers() -> None:
    async with Client(headers_server()) as client:
        result = await client.call_tool("seen", {"include": ["authorization"]})
    assert json.loads(result.content[0].text) == {}  # type: ignore[union-attr]


def test_repeated_headers_join_and_the_total_is_bounded() -> None:
    raw = [(b"X-Tag", b"a"), (b"x-tag", b"b"), (b"cookie", b"c=1")]
    raw += [(f"x-h{i}".encode(), b"v" * 100) for i in range(1_000)]
    got = read({"headers": raw}, max_bytes=2_000)
    assert got["x-tag"] == "a, b"
    assert "cookie" not in got
    assert sum(len(k) + len(v) for k, v in got.items()) <= 2_000
    assert 10 < len(got) < 25
    assert len(read({"headers": raw}, max_bytes=10**9)) == 100
    assert read({}) == {}


def test_common_credential_headers_are_left_out_underscores_included() -> None:
    names = [
        "X-Api_Key",
        "Cf-Access-Jwt-Assertion",
        "X-Goog-Iap-Jwt-Assertion",
        "Ocp-Apim-Subscription-Key",
        "X-Functions-Key",
        "DPoP",
        "X-Credentials",
        "X-Access-Key",
        "X-Bearer",
        "X-Pass",
        "X-Forwarded-Client-Cert",
        "Private-Key",
        "X-Csrf-Token",
        "X-Hub-Signature",
    ]
    raw = [(n.encode(), b"SECRET") for n in names] + [(b"X-Tenant", b"acme")]
    assert read({"headers": raw}) == {"x-tenant": "acme"}
    asked = read({"headers": raw}, include=["x-api-key", "DPoP"])
    assert asked == {"x-api_key": "SECRET", "dpop": "SECRET", "x-tenant": "acme"}


def test_include_as_a_bare_string_is_refused() -> None:
    with pytest.raises(TypeError, match=r"include=\['authorization'\]"):
        read({"headers": [(b"authorization", b"Bearer x")]}, include="authorization")
