"""A protected server from a module-level factory, served by the real command line:
``mcpkit run mcpkit.ext.auth.server.demo:build_server --transport http`` with
``MCPKIT_AUTH_*`` settings; and the settings' environment parsing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from rs_helpers import DevIssuer, challenges, free_port, modern_call, modern_headers

from mcpkit.ext.auth.server.env import settings_from_env

pytestmark = pytest.mark.anyio


def _mcpkit() -> list[str]:
    script = Path(sys.executable).parent / "mcpkit"
    found = str(script) if script.exists() else shutil.which("mcpkit")
    assert found is not None, "the mcpkit console script is not installed"
    return [found]


async def test_mcpkit_run_serves_the_protected_factory(issuer: DevIssuer) -> None:
    sock = free_port()
    port = sock.getsockname()[1]
    sock.close()
    url = f"http://127.0.0.1:{port}/mcp"
    env = {
        **os.environ,
        "MCPKIT_AUTH_SERVER_URL": url,
        "MCPKIT_AUTH_AUTHORIZATION_SERVERS": issuer.url,
        "MCPKIT_AUTH_JWKS_URL": issuer.jwks_url,
    }
    cmd = [
        *_mcpkit(),
        "run",
        "mcpkit.ext.auth.server.demo:build_server",
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    proc = await anyio.open_process(cmd, env=env, stdout=subprocess.DEVNULL, stderr=None)
    try:
        async with httpx2.AsyncClient(timeout=5) as client:
            with anyio.fail_after(20):
                while True:
                    try:
                        r = await client.post(
                            url,
                            json=modern_call(1, "tools/list"),
                            headers=modern_headers("tools/list"),
                        )
                        break
                    except httpx2.TransportError:
                        assert proc.returncode is None, "mcpkit run exited"
                        await anyio.sleep(0.1)
            assert r.status_code == 401
            assert (
                challenges(r)[0][1]["resource_metadata"]
                == f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
            )
            token = issuer.mint(aud=url, scope="mcp")
            call = modern_call(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            denied = await client.post(
                url, json=call, headers=modern_headers("tools/call", "add", token)
            )
            ok_token = issuer.mint(aud=url, scope="mcp mcp:write")
            ok = await client.post(
                url, json=call, headers=modern_headers("tools/call", "add", ok_token)
            )
        assert denied.status_code == 403
        assert challenges(denied)[0][1]["scope"] == "mcp:write"
        assert ok.status_code == 200, ok.text
        assert ok.json()["result"]["structuredContent"] == {"result": 3}
    finally:
        proc.terminate()
        with anyio.fail_after(10):
            await proc.wait()


def test_settings_from_env() -> None:
    s = settings_from_env(
        {
            "MCPKIT_AUTH_SERVER_URL": "HTTPS://MCP.example.com:443/mcp/",
            "MCPKIT_AUTH_AUTHORIZATION_SERVERS": "https://as.example",
            "MCPKIT_AUTH_JWKS_URL": "https://as.example/jwks",
            "MCPKIT_AUTH_AUDIENCES": "client-1 client-2",
            "MCPKIT_AUTH_LEEWAY_S": "5",
            "MCPKIT_AUTH_DPOP": "required",
            "MCPKIT_AUTH_ALLOW_PLAIN_JWT": "yes",
        }
    )
    assert s.resource_uri == "https://mcp.example.com/mcp"
    assert s.accepted_audiences == ("https://mcp.example.com/mcp", "client-1", "client-2")
    assert s.expected_issuer == "https://as.example"
    assert s.leeway_s == 5.0
    assert s.allow_plain_jwt is True
    assert s.dpop is not None
    assert s.dpop.required
    with pytest.raises(ValueError, match="MCPKIT_AUTH_SERVER_URL"):
        settings_from_env({})
    with pytest.raises(ValueError, match="LEEWAY_S") as info:
        settings_from_env(
            {"MCPKIT_AUTH_SERVER_URL": "http://x/mcp", "MCPKIT_AUTH_LEEWAY_S": "soon-secret"}
        )
    assert "soon-secret" not in str(info.value)
