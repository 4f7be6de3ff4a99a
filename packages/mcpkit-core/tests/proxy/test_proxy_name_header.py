"""An extension method whose 2026-07-28 HTTP routing needs ``Mcp-Name`` (SEP-2243; the
tasks extension's ``tasks/get`` -> ``taskId`` is the real case, found by the conformance
suite's tasks scenarios through the proxy): the proxy learns the field from the
downstream request's header, sends its own upstream, and refuses a header that names
another value once it knows the field (forward.py rule 6)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from proxy_helpers import serve_http

from mcpkit.client import Client
from mcpkit.core.jsonrpc import HEADER_MISMATCH
from mcpkit.proxy import proxy
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
METHOD = "com.example/jobs/get"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def jobs_server() -> Server:
    server = Server("jobs")

    async def get_job(ctx: Context) -> JSON:
        return {"jobId": ctx.params["jobId"], "status": "done"}

    server.add_method(METHOD, get_job, eras=("modern",), name_param="jobId")
    return server


async def raw_post(url: str, job_id: str, header: str) -> JSON:
    body = {"jsonrpc": "2.0", "id": 7, "method": METHOD, "params": {"jobId": job_id}}
    body["params"]["_meta"] = ENVELOPE
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": METHOD,
        "Mcp-Name": header,
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(url, json=body, headers=headers)
    return answer.json()


async def test_the_mcp_name_of_an_extension_method_reaches_the_upstream() -> None:
    async with (
        serve_http(http_app(jobs_server())) as upstream_url,
        serve_http(http_app(proxy(upstream_url, mode="modern"))) as proxy_url,
        Client(proxy_url, mode="modern") as client,
    ):
        client.add_name_param(METHOD, "jobId")
        first = await client.request(METHOD, {"jobId": "j-1"})
        again = await client.request(METHOD, {"jobId": "j-2"})
        mismatched = await raw_post(proxy_url, "j-3", "not-j-3")
    assert first["status"] == "done"
    assert again["jobId"] == "j-2"
    assert mismatched["error"]["code"] == HEADER_MISMATCH
