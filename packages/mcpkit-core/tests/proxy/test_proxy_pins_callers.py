"""Pinned upstream processes (``proxy/pins.py``) keep one caller's state from another.

The upstream is a real handshake-era stdio subprocess that keeps a note per upstream
session and serves any URI (a catch-all template, as a gateway-like server does), so
whatever a caller can name upstream it can subscribe to."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import pytest
from proxy_helpers import serve_http

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import ProxyLimits, proxy
from mcpkit.server.http import http_app

if TYPE_CHECKING:
    from mcpkit.proxy.pins import Pins

pytestmark = pytest.mark.anyio
INFO = {"name": "same-app", "version": "1.0"}

SERVER = textwrap.dedent(
    '''
    import os
    from mcpkit.server import Context, Server

    server = Server("session-notes")

    @server.resource("{+uri}")
    def anything(uri: str) -> str:
        return uri

    @server.tool()
    def remember(note: str, ctx: Context) -> str:
        """Keep ``note`` for this upstream session."""
        ctx.session.state["note"] = note
        return "ok"

    @server.tool()
    def recall(ctx: Context) -> str:
        """This upstream session's note."""
        return str(ctx.session.state.get("note", "nothing"))

    @server.tool()
    def touch(uri: str, ctx: Context) -> str:
        """Say ``uri`` changed."""
        ctx.server.notify_resource_updated(uri)
        return "touched"

    @server.tool()
    def whoami() -> str:
        return str(os.getpid())

    server.run()
    '''
)


@pytest.fixture
def command(tmp_path: Path) -> list[str]:
    script = tmp_path / "session_notes.py"
    script.write_text(SERVER)
    return [sys.executable, str(script)]


def text(result: Any) -> str:
    return result.content[0].text


async def test_anonymous_http_callers_never_see_each_others_upstream_session_state(
    command: list[str],
) -> None:
    """Pins rule 2: two unauthenticated 2026-07-28 HTTP callers (same ``clientInfo``,
    same address) have no identity, so they are pinned nowhere: each call gets a process
    of its own, and their listen streams share the reserved process, which no call
    reaches. Neither ever reads the note the other kept upstream."""
    front = proxy(command, mode="legacy")
    async with (
        serve_http(http_app(front)) as url,
        Client(url, mode="modern", client_info=INFO) as alice,
        Client(url, mode="modern", client_info=INFO) as bob,
        alice.listen(resource_uris=["notes://alice"]),
        bob.listen(resource_uris=["notes://bob"]),
    ):
        assert text(await alice.call_tool("remember", {"note": "alice's secret"})) == "ok"
        for _ in range(3):
            assert text(await bob.call_tool("recall")) == "nothing"
            assert text(await alice.call_tool("recall")) == "nothing"  # a process per call
        names = {t.name for t in await bob.list_tools()}
        assert {"remember", "recall"} <= names
        assert text(await bob.call_tool("remember", {"note": "bob's"})) == "ok"
        pids = {text(await c.call_tool("whoami")) for c in (alice, bob, alice, bob)}
        assert len(pids) == 4  # never a pooled or a pinned process
        assert text(await alice.call_tool("recall")) == "nothing"


async def test_a_caller_cannot_subscribe_to_another_callers_pinned_updates(
    command: list[str],
) -> None:
    """Pins rule 3: an update from Alice's process reaches Alice only. Bob subscribes to
    the proxy's internal hub key of Alice's updates (``pin:<token> <uri>``, a string a
    peer can send as a URI); on the old code the hub handed him Alice's update."""
    front = proxy(command, mode="legacy")
    state: Any = front.proxy  # type: ignore[attr-defined]
    alice_got: list[str] = []
    bob_got: list[str] = []
    alice_event = anyio.Event()
    bob_event = anyio.Event()

    async def alice_updated(uri: str) -> None:
        alice_got.append(uri)
        alice_event.set()

    async def bob_updated(uri: str) -> None:
        bob_got.append(uri)
        if uri == "notes://bob":
            bob_event.set()

    async with (
        Client(front, mode="legacy", on_resource_updated=alice_updated) as alice,
        Client(front, mode="legacy", on_resource_updated=bob_updated) as bob,
    ):
        await alice.subscribe("notes://alice")
        await bob.subscribe("notes://bob")
        pins = cast("Pins", state.upstream.pins)
        held = pins._pins.values()  # pyright: ignore[reportPrivateUsage]
        (alice_pin,) = [p for p in held if "notes://alice" in p.subscribed]
        # The worst case: Bob knows (or guessed: tokens were a counter) Alice's token.
        await bob.subscribe(f"pin:{alice_pin.token} notes://alice")
        await alice.call_tool("touch", {"uri": "notes://alice"})
        with anyio.fail_after(20):  # a hang guard, not a timing assertion
            await alice_event.wait()
        await bob.call_tool("touch", {"uri": "notes://bob"})
        with anyio.fail_after(20):  # Bob's own update comes after anything offered before
            await bob_event.wait()
        assert alice_got == ["notes://alice"]
        assert bob_got == ["notes://bob"]


async def test_one_anonymous_caller_cannot_fill_the_shared_process_for_the_others(
    command: list[str],
) -> None:
    """Pins rule 5: the process that serves the listen streams of callers with no
    identity dropped no subscription, so one such caller subscribing to as many URIs
    as the bound allows refused every later one's listen (-32602) for good. It now goes
    with its last stream."""
    front = proxy(command, mode="legacy", proxy_limits=ProxyLimits(max_upstream_subscriptions=2))
    async with serve_http(http_app(front)) as url:
        async with (
            Client(url, mode="modern", client_info=INFO) as mallory,
            mallory.listen(resource_uris=["notes://1", "notes://2"]),
        ):
            pass
        refusals: list[str] = []
        async with Client(url, mode="modern", client_info=INFO) as ann:
            listened = False
            for _ in range(100):  # the proxy ends Mallory's stream when it reads the close
                try:
                    async with ann.listen(resource_uris=["notes://3"]):
                        listened = True
                    break
                except JSONRPCError as refused:
                    refusals.append(refused.message)
                    await anyio.sleep(0.05)
            assert listened
        assert all("max_upstream_subscriptions" in m for m in refusals)
