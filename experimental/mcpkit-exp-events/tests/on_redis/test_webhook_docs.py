"""The webhook and Redis examples of ``docs/extensions/events.md`` run: the server and
client examples over real HTTP on loopback with the receiver behind TLS (the example's
SSRF guard pointed at loopback and its TLS at the test CA, as a test must), and the
Redis example against a real redis-server, granting no expiry."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hooks.hookkit import BearerAuth, api_key_principal, loopback_resolver, make_tls, serve

from mcpkit.experimental.events.redis_store import RedisSubscriptions
from mcpkit.experimental.events.webhooks import AddressPolicy, Webhooks, subscribe_webhook
from mcpkit.server.redis import RedisSettings

DOC = Path(__file__).resolve().parents[4] / "docs" / "extensions" / "events.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")

pytestmark = pytest.mark.anyio


def load(name: str) -> dict[str, Any]:
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        m = MARKER.match(code)
        if lang == "python" and m is not None and m.group(1) == name:
            ns: dict[str, Any] = {"__name__": f"docs_events_{name.replace('-', '_')}"}
            exec(compile(code, f"<docs-example {name}>", "exec"), ns)
            return ns
    raise AssertionError(f"no docs-example {name} in {DOC}")


def for_tests(webhooks: Webhooks, ca_context: Any) -> None:
    """Point the example's guard at loopback (explicit allow-list) and its TLS at the CA."""
    webhooks.sender.policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)
    webhooks.sender.verify = ca_context


async def test_webhook_server_and_client_examples() -> None:
    server_ns, client_ns = load("webhook-server"), load("webhook-client")
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        for_tests(server_ns["webhooks"], tls.client_context())
        async with serve(server_ns["app"]) as port, serve(client_ns["hooks_app"], tls=tls) as hp:
            sub = await client_ns["subscribe"](
                f"http://127.0.0.1:{port}/mcp",
                f"https://hooks.test:{hp}/hooks/",
                BearerAuth("key-123"),
            )
            assert sub.refresh_before is not None
            incidents = server_ns["incidents"]
            await incidents.emit({"severity": "P2"}, event_id="i1")
            await incidents.emit({"severity": "P1"}, event_id="i2")
            with anyio.fail_after(30):
                while not client_ns["received"]:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.5)
            assert [e["eventId"] for e in client_ns["received"]] == ["i2"]


async def test_redis_example_grants_no_expiry_and_keeps_it_verified(redis_url: str) -> None:
    from mcpkit.client import Client

    server, webhooks = load("redis")["build"](redis_url)
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        for_tests(webhooks, tls.client_context())
        receiver_ns = load("webhook-client")
        app = server.http_app(principal_from_scope=api_key_principal)
        async with serve(app) as port, serve(receiver_ns["hooks_app"], tls=tls) as hp:
            async with Client(
                f"http://127.0.0.1:{port}/mcp", mode="modern", auth=BearerAuth("key-alice")
            ) as client:
                sub = await subscribe_webhook(
                    client,
                    receiver_ns["receiver"],
                    name="incident.created",
                    url=f"https://hooks.test:{hp}/hooks/",
                    ttl_ms=None,
                )
            assert sub.refresh_before is None  # no expiry granted
    again = RedisSubscriptions(RedisSettings(redis_url))  # as another process would
    record = await again.get(sub.id)
    assert record is not None
    assert record.expires_at_s is None
    assert record.verified
    await again.aclose()
