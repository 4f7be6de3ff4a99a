"""The "Server identity and throttling" examples of ``docs/extensions/events.md`` run: the
server example (signing key loaded from a PEM file, rate limit on) is served over https
on loopback, the receiver example fetches its keys from that origin and requires them,
and a subscription through it receives every event (the example's SSRF guard pointed at
loopback and its TLS at the test CA, as a test must)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import httpx2
import pytest
from test_docs import load

from hooks.hookkit import BearerAuth, api_key_principal, loopback_resolver, make_tls, serve
from mcpkit.client import Client
from mcpkit.client.http import HttpTransport
from mcpkit.experimental.events.store import now_ms
from mcpkit.experimental.events.webhooks import AddressPolicy, subscribe_webhook
from mcpkit.experimental.events.webhooks.identity import SigningKey

pytestmark = pytest.mark.anyio


async def test_identity_server_and_receiver_examples() -> None:
    server_ns, receiver_ns = load("identity-server"), load("identity-receiver")
    with tempfile.TemporaryDirectory() as tmp:
        key_file, old_file = Path(tmp) / "signing.pem", Path(tmp) / "old.pem"
        key_file.write_bytes(SigningKey.generate().private_pem())
        old_file.write_bytes(SigningKey.generate().private_pem())
        server, webhooks = server_ns["build"](key_file, old_file)
        assert len(webhooks.identity.jwks()["keys"]) == 2  # the old key stays published
        hooks_dir, mcp_dir = Path(tmp) / "hooks", Path(tmp) / "mcp"
        hooks_dir.mkdir()
        mcp_dir.mkdir()
        hook_tls, mcp_tls = make_tls(hooks_dir), make_tls(mcp_dir, "127.0.0.1")
        webhooks.sender.policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)
        webhooks.sender.verify = hook_tls.client_context()
        app = server.http_app(principal_from_scope=api_key_principal)
        async with serve(app, tls=mcp_tls) as port:
            mcp_url = f"https://127.0.0.1:{port}/mcp"
            receiver, hooks_app = await receiver_ns["receiver_for"](
                mcp_url, verify=mcp_tls.client_context()
            )
            async with (
                serve(hooks_app, tls=hook_tls) as hook_port,
                httpx2.AsyncClient(
                    verify=mcp_tls.client_context(), auth=BearerAuth("key-alice")
                ) as http,
                Client(HttpTransport(mcp_url, http_client=http), mode="modern") as client,
            ):
                sub = await subscribe_webhook(
                    client,
                    receiver,
                    name="incident.created",
                    url=f"https://hooks.test:{hook_port}/hooks/",
                )
                # mounted with routes: one route per server, and no receiver document
                # (a server must pass the challenge, v1a included)
                assert sub.url == f"https://hooks.test:{hook_port}/hooks/{sub.route}"
                assert [getattr(r, "path", "") for r in hooks_app.routes] == ["/hooks"]
                for i in range(12):
                    await webhooks.store.append(
                        "incident.created", event_id=f"i{i}", timestamp_ms=now_ms(), data={"i": i}
                    )
                with anyio.fail_after(30):
                    while len(receiver_ns["received"]) < 12:
                        await anyio.sleep(0.05)
                ids = sorted(e["eventId"] for e in receiver_ns["received"])
                assert ids == sorted(f"i{i}" for i in range(12))
