"""Reviewer fault 11 of issue 26: ``require_principal`` sent server-code advice ("serve
it over HTTP with protect()") to the remote client. The client's message now says only
what is missing; the server's fix goes to the server's log (principal.py rule 5)."""

from __future__ import annotations

import importlib
import logging

import pytest

from mcpkit.client import Client, MemoryTransport
from mcpkit.core.jsonrpc import INVALID_REQUEST, JSONRPCError
from mcpkit.ext.auth.server import require_principal
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


async def test_the_client_gets_no_server_advice_and_the_server_log_gets_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    principal_module = importlib.import_module("mcpkit.ext.auth.server.principal")

    monkeypatch.setattr(principal_module, "_advised", False)
    server = Server("accounts")

    @server.tool()
    def close_account(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"closed {require_principal(ctx).subject}"

    caplog.set_level(logging.WARNING, logger="mcpkit.ext.auth")
    async with Client(MemoryTransport(server)) as client:
        with pytest.raises(JSONRPCError) as refused:
            await client.call_tool("close_account", {})
        with pytest.raises(JSONRPCError):  # a peer's repeated calls: logged once
            await client.call_tool("close_account", {})
    assert refused.value.code == INVALID_REQUEST
    assert refused.value.message == (
        "Unauthorized: this operation needs an authenticated caller, and the request has "
        "none (this connection carries no access token)"
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "mcpkit.ext.auth"]
    assert sum("Serve the server over HTTP with protect()" in m for m in logged) == 1, logged
