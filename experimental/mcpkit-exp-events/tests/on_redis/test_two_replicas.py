"""Two server processes on one Redis serve one webhook subscription: each occurrence is
POSTed once while both run; when the one delivering dies, the other takes over from the
persisted watermark and nothing is lost."""

from __future__ import annotations

import signal
from collections import Counter

import anyio
import pytest
from hooks.hookkit import BearerAuth
from hooks.procs import hook_endpoint, replicas

from mcpkit.client import Client
from mcpkit.experimental.events.redis_store import RedisSubscriptions
from mcpkit.experimental.events.webhooks import subscribe_webhook
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio


def client(url: str) -> Client:
    return Client(url, mode="modern", auth=BearerAuth("key-alice"), timeout_s=60)


async def test_two_replicas_deliver_each_occurrence_once_and_fail_over(redis_url: str) -> None:
    async with hook_endpoint() as hook:
        with replicas(2, hook.tmp, hook.tls, "--redis", redis_url, "--lease-s", "5.0") as (a, b):
            async with client(a.url) as ca, client(b.url) as cb:
                sub = await subscribe_webhook(ca, hook.receiver, name="soak", url=hook.url)
                await cb.call_tool("emit", {"start": 0, "count": 200})
                await hook.inbox.wait_for(lambda i: len(i.events()) >= 200, timeout_s=120)
                await anyio.sleep(1.0)
                posts = Counter(h["webhook-id"] for h in hook.flaky.seen)
                dup = {k: v for k, v in posts.items() if v != 1 and k.startswith("soak")}
                assert dup == {}
                # the refresh on the other replica sees the same subscription
                sub.client = cb
                assert (await sub.refresh())["id"] == sub.id
                subs = RedisSubscriptions(RedisSettings(redis_url))
                holder = await subs.redis.get(subs._k("lease", sub.id))
                await subs.aclose()
                owner, other, other_client = (a, b, cb) if holder == b"r0" else (b, a, ca)
                owner.stop(signal.SIGKILL)
                await other_client.call_tool("emit", {"start": 200, "count": 200})
                await hook.inbox.wait_for(
                    lambda i: len({e["eventId"] for e in i.events()}) >= 400, timeout_s=120
                )
                ids = {e["eventId"] for e in hook.inbox.events()}
                assert ids == {f"soak-{i}" for i in range(400)}
                assert other.proc is not None
                assert other.proc.poll() is None
