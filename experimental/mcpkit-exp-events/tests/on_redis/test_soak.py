"""Soak: events pushed through poll, push (``events/stream``) and webhook, ``N`` per
delivery mode (``MCPKIT_EVENTS_SOAK``, default 5 000; 100 000 on demand). None is lost
and, after the client drops duplicates by ``eventId``, each arrives exactly once: across
a server restart after which the client resumes from the cursor it saved, and with two
replicas on one Redis. Every wait is bounded (``DEADLINE_S``)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from hooks.hookkit import BearerAuth
from hooks.procs import Hook, Replica, hook_endpoint, replicas

from mcpkit.client import Client
from mcpkit.experimental.events import EventsClient
from mcpkit.experimental.events.webhooks import subscribe_webhook

pytestmark = pytest.mark.anyio
N = int(os.environ.get("MCPKIT_EVENTS_SOAK", "5000"))
CHUNK = 500
DEADLINE_S = max(300.0, N / 10)
"""Generous bound for one mode: 10 events/s on a loaded 2-CPU machine."""


def client(url: str) -> Client:
    return Client(url, mode="modern", auth=BearerAuth("key-alice"), timeout_s=120)


class Seen:
    """What the consuming application got, deduplicated by eventId."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.duplicates = 0
        self.cursor: str | None = None

    def add(self, event_id: str) -> None:
        if event_id in self.ids:
            self.duplicates += 1
        self.ids.add(event_id)

    async def reach(self, n: int) -> None:
        with anyio.fail_after(DEADLINE_S):
            while len(self.ids) < n:
                await anyio.sleep(0.05)

    def check(self, n: int) -> None:
        assert self.ids == {f"soak-{i}" for i in range(n)}, (len(self.ids), n)


async def emit(clients: list[Client], start: int, count: int) -> None:
    for k, first in enumerate(range(start, start + count, CHUNK)):
        size = min(CHUNK, start + count - first)
        await clients[k % len(clients)].call_tool("emit", {"start": first, "count": size})


async def rotating(
    urls: Callable[[], list[str]],
    seen: Seen,
    stop: anyio.Event,
    session: Callable[[EventsClient], Awaitable[None]],
) -> None:
    """Run ``session`` against each server in turn, from the saved cursor; a failure (a
    server restarting) is followed by the next session, resuming from the cursor."""
    k = 0
    while not stop.is_set():
        url = urls()[k % len(urls())]
        k += 1
        try:
            async with client(url) as c:
                events = EventsClient(c)
                if seen.cursor is None:  # "now", in the form poll and push share
                    seen.cursor = (await events.poll("soak")).cursor
                await session(events)
        except Exception:
            await anyio.sleep(0.2)


async def consume_poll(urls: Callable[[], list[str]], seen: Seen, stop: anyio.Event) -> None:
    """Up to 20 polls per server, each from the saved cursor."""

    async def polls(events: EventsClient) -> None:
        for _ in range(20):
            batch = await events.poll("soak", cursor=seen.cursor, max_events=100)
            for event in batch.events:
                seen.add(event.event_id)
            seen.cursor = batch.cursor
            if stop.is_set():
                return
            if not batch.has_more:
                await anyio.sleep(0.05)

    await rotating(urls, seen, stop, polls)


async def consume_stream(urls: Callable[[], list[str]], seen: Seen, stop: anyio.Event) -> None:
    """One push stream at a time (1 000 events per server when there are several)."""

    async def one_stream(events: EventsClient) -> None:
        stream = events.stream("soak", cursor=seen.cursor, heartbeat_timeout_s=5)
        async with stream:
            count = 0
            async for event in stream:
                seen.add(event.event_id)
                seen.cursor = stream.cursor
                count += 1
                if stop.is_set() or (len(urls()) > 1 and count >= 1000):
                    break
            seen.cursor = stream.cursor or seen.cursor

    await rotating(urls, seen, stop, one_stream)


Restart = Callable[[], Awaitable[None]]
MODES = ("poll", "stream", "webhook")


async def run_modes(servers: list[Replica], hook: Hook, restart: Restart | None) -> dict[str, Seen]:
    """One emitter, three consumers at once (poll, push, webhook): ``N`` events each."""
    seen = {mode: Seen() for mode in MODES}
    stop = anyio.Event()

    def urls() -> list[str]:
        return [s.url for s in servers]

    async def on_message(message: Any) -> None:
        if message.kind == "event":
            seen["webhook"].add(message.body["eventId"])

    async def reach_all(n: int) -> None:
        for one in seen.values():
            await one.reach(n)

    hook.receiver.on_message = on_message
    async with anyio.create_task_group() as tg:
        stack = contextlib.AsyncExitStack()
        clients = [await stack.enter_async_context(client(u)) for u in urls()]
        try:
            sub = await subscribe_webhook(clients[0], hook.receiver, name="soak", url=hook.url)
            tg.start_soon(consume_poll, urls, seen["poll"], stop)
            tg.start_soon(consume_stream, urls, seen["stream"], stop)
            with anyio.fail_after(60):
                while seen["poll"].cursor is None or seen["stream"].cursor is None:
                    await anyio.sleep(0.05)
            half = N // 2
            await emit(clients, 0, half)
            if restart is not None:
                await reach_all(N // 4)
                await restart()
                clients = [await stack.enter_async_context(client(u)) for u in urls()]
                # in-memory subscriptions are gone: the refresh resubscribes from the last
                # cursor the receiver saw (the client's saved cursor)
                sub.client = clients[0]
                with anyio.fail_after(60):
                    while True:
                        try:
                            await sub.refresh()
                            break
                        except Exception:
                            await anyio.sleep(0.2)
            await emit(clients, half, N - half)
            await reach_all(N)
        finally:
            stop.set()
            await stack.aclose()  # in the scope the clients were entered in
            tg.cancel_scope.cancel()
    return seen


async def test_soak_across_a_server_restart(tmp_path: Any) -> None:
    started = time.monotonic()
    async with hook_endpoint() as hook:
        store_file = str(tmp_path / "occurrences.jsonl")
        with replicas(1, hook.tmp, hook.tls, "--store-file", store_file) as servers:

            async def restart() -> None:
                servers[0].stop(signal.SIGTERM)
                servers[0].start()

            seen = await run_modes(servers, hook, restart)
    for mode, one in seen.items():
        one.check(N)
        print(f"soak restart {mode}: {N} events, {one.duplicates} duplicates dropped")
    print(f"soak restart: {time.monotonic() - started:.1f} s")


async def test_soak_with_two_replicas_on_one_redis(redis_url: str) -> None:
    started = time.monotonic()
    async with hook_endpoint() as hook:
        with replicas(2, hook.tmp, hook.tls, "--redis", redis_url, "--lease-s", "5") as servers:
            seen = await run_modes(servers, hook, None)
    for mode, one in seen.items():
        one.check(N)
        print(f"soak two replicas {mode}: {N} events, {one.duplicates} duplicates dropped")
    print(f"soak two replicas: {time.monotonic() - started:.1f} s")
