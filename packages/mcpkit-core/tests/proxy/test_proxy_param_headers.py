"""A 2026-07-28 ``tools/call`` through the proxy's HTTP front has its ``Mcp-Param-*``
headers checked against the upstream tool's ``x-mcp-header`` parameters, as the
endpoint checks its own tools' (SEP-2243; found by the conformance suite's
``http-custom-header-server-validation`` through the proxy): a matching header is
forwarded, a mismatching or missing one is -32020 and never reaches the upstream
(proxy lists rule 6), on both upstream eras."""

from __future__ import annotations

from typing import Annotated, Any

import httpx2
import pytest
from proxy_helpers import serve_http
from pydantic import Field

from mcpkit.core.jsonrpc import HEADER_MISMATCH
from mcpkit.proxy import proxy
from mcpkit.server import Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


def regions_server(calls: list[str]) -> Server:
    server = Server("regions")

    @server.tool
    def deploy(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        calls.append(region)
        return f"deployed to {region}"

    return server


async def call(url: str, region: str, header: str | None) -> JSON:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "deploy", "arguments": {"region": region}, "_meta": ENVELOPE},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "deploy",
    }
    if header is not None:
        headers["Mcp-Param-Region"] = header
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(url, json=body, headers=headers)
    return answer.json()


@pytest.mark.parametrize("upstream_mode", ["modern", "legacy"])
async def test_param_headers_are_checked_at_the_proxy(upstream_mode: str) -> None:
    calls: list[str] = []
    async with (
        serve_http(http_app(regions_server(calls))) as upstream_url,
        serve_http(http_app(proxy(upstream_url, mode=upstream_mode))) as proxy_url,
    ):
        good = await call(proxy_url, "eu-west-1", "eu-west-1")
        wrong = await call(proxy_url, "eu-west-1", "us-east-1")
        missing = await call(proxy_url, "eu-west-1", None)
    assert good["result"]["content"][0]["text"] == "deployed to eu-west-1"
    assert wrong["error"]["code"] == HEADER_MISMATCH
    assert missing["error"]["code"] == HEADER_MISMATCH
    assert calls == ["eu-west-1"]  # the refused calls never reached the upstream
