"""A hidden tool is unknown on 2026-07-28 HTTP too, ``Mcp-Param-*`` headers included.

The endpoint checks a ``tools/call``'s ``Mcp-Param-*`` headers against the tool's
``x-mcp-header`` parameters. Done before the list filters ran, a hidden tool answered a
header error naming its parameter, where an absent tool answers "unknown tool": the
caller learnt that it exists and what it takes (visibility rule 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import httpx2
import pytest
from http_helpers import body_of, modern_headers, modern_meta, request, serve
from pydantic import Field

from mcpkit.core.jsonrpc import INVALID_PARAMS
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio

Region = Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]


def build() -> Server:
    server = Server("hidden-headers")

    @server.tool(meta={"com.example/admin": True})
    def reset_region(region: Region) -> str:
        return f"reset {region}"

    @server.tool()
    def weather(region: Region) -> str:
        return f"sunny in {region}"

    def admins_only(ctx: Context, kind: str, definition: Mapping[str, Any]) -> bool:
        admin = (definition.get("_meta") or {}).get("com.example/admin")
        return not admin or ctx.principal == "admin"

    server.add_list_filter(admins_only)
    return server


def principal(scope: Mapping[str, Any]) -> str | None:
    auth = dict(scope["headers"]).get(b"authorization", b"").decode()
    return auth.removeprefix("Bearer ") or None


async def call(client: httpx2.AsyncClient, url: str, name: str, who: str, **hdrs: str) -> Any:
    return await client.post(
        url,
        json=request(
            1, "tools/call", {"name": name, "arguments": {"region": "eu"}, "_meta": modern_meta()}
        ),
        headers={**modern_headers("tools/call", name), "authorization": f"Bearer {who}", **hdrs},
    )


async def test_a_hidden_tool_answers_like_an_absent_one_whatever_its_headers() -> None:
    app = http_app(build(), principal_from_scope=principal)
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        hidden = await call(client, url, "reset_region", "guest")
        absent = await call(client, url, "no_such_tool", "guest")
        for r in (hidden, absent):
            assert r.status_code == 200, r.text
            assert body_of(r)["error"]["code"] == INVALID_PARAMS
            assert "unknown tool" in body_of(r)["error"]["message"]
            assert "Mcp-Param" not in r.text
        # Visible tools still have their headers checked, before they run.
        missing = await call(client, url, "weather", "guest")
        assert missing.status_code == 400
        assert "Mcp-Param-region" in body_of(missing)["error"]["message"]
        ok = await call(client, url, "weather", "guest", **{"mcp-param-region": "eu"})
        assert body_of(ok)["result"]["content"][0]["text"] == "sunny in eu"
        admin = await call(client, url, "reset_region", "admin")
        assert admin.status_code == 400  # the admin sees it: its header is required
        admin = await call(client, url, "reset_region", "admin", **{"mcp-param-region": "eu"})
        assert body_of(admin)["result"]["content"][0]["text"] == "reset eu"
