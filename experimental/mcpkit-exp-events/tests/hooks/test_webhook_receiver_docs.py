"""The "Webhook receiver" example of ``docs/extensions/events.md`` runs: one receiver
(``receiver.routes("/hooks")``, over TLS on loopback) follows two servers built from the
page's server example; both are verified by the receiver document with no challenge
POST, and each occurrence reaches the application attributed to its own server."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from on_redis.test_webhook_docs import for_tests, load

from hooks.hookkit import BearerAuth, Flaky, make_tls, serve

pytestmark = pytest.mark.anyio


async def test_the_receiver_example_follows_two_servers_by_the_document() -> None:
    one, two = load("webhook-server"), load("webhook-server")
    ns = load("webhook-receiver")
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        for server in (one, two):
            for_tests(server["webhooks"], tls.client_context())
        app = Flaky(ns["app"])
        async with (
            serve(one["app"]) as port_one,
            serve(two["app"]) as port_two,
            serve(app, tls=tls) as hooks_port,
        ):
            urls = [f"http://127.0.0.1:{p}/mcp" for p in (port_one, port_two)]
            hooks_url = f"https://hooks.test:{hooks_port}/hooks/"
            subs = [await ns["follow"](u, hooks_url, BearerAuth("key-123")) for u in urls]
            assert subs[0].route != subs[1].route
            assert all("webhook-id" not in seen for seen in app.seen)  # no challenge POST
            await one["incidents"].emit({"severity": "P1"}, event_id="from-one")
            await two["incidents"].emit({"severity": "P1"}, event_id="from-two")
            with anyio.fail_after(30):
                while len(ns["received"]) < 2:
                    await anyio.sleep(0.05)
    got = [(server, body["eventId"]) for server, body in ns["received"]]
    assert sorted(got) == sorted([(urls[0], "from-one"), (urls[1], "from-two")])
