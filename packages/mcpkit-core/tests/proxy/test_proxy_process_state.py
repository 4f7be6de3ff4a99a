"""Issue 25 §11: a command (stdio) upstream keeps its state per process, so everything
one downstream caller does (calls, subscriptions, lists, pending inputs) reaches the
same upstream process, and what cannot work on one process is refused, never lost.

The upstream is a real subprocess whose tool changes a resource; through the proxy, a
subscriber must get ``notifications/resources/updated`` after a call (on the old code
the subscription lived on the proxy's shared process and the call ran on a leased one,
so the update never came)."""

from __future__ import annotations

import gc
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import ProxyLimits, proxy

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]

SERVER = textwrap.dedent(
    '''
    import anyio
    from mcpkit.server import Context, Server

    server = Server("notes")
    state = {"note": "empty", "pid": __import__("os").getpid()}

    @server.resource("notes://current")
    def current() -> str:
        return state["note"]

    @server.tool()
    async def write_note(text: str, ctx: Context) -> str:
        """Change notes://current."""
        state["note"] = text
        ctx.server.notify_resource_updated("notes://current")
        return "written"

    @server.tool()
    async def whoami() -> str:
        """The upstream process serving this call."""
        return str(state["pid"])

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Elicits, then answers with what the client said."""
        got = await ctx.elicit("name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        await anyio.sleep(0.2)
        return str(got.get("content"))

    server.run()
    '''
)


@pytest.fixture
def command(tmp_path: Path) -> list[str]:
    script = tmp_path / "notes_server.py"
    script.write_text(SERVER)
    return [sys.executable, str(script)]


@pytest.mark.parametrize("up", ["legacy", "modern"])
async def test_handshake_subscriber_gets_the_update_a_call_caused(
    command: list[str], up: str
) -> None:
    """Legacy upstream: the caller's own process; modern: the one shared process."""
    received: list[str] = []
    got = anyio.Event()

    async def on_updated(uri: str) -> None:
        received.append(uri)
        got.set()

    front = proxy(command, mode=up)  # type: ignore[arg-type]
    async with Client(front, mode="legacy", on_resource_updated=on_updated) as client:
        await client.subscribe("notes://current")
        r = await client.call_tool("write_note", {"text": "hello"})
        assert r.content[0].text == "written"  # type: ignore[union-attr]
        with anyio.fail_after(20):  # a hang guard, not a timing assertion
            await got.wait()
        assert received == ["notes://current"]
        read = await client.read_resource("notes://current")
        assert read.contents[0].text == "hello"  # type: ignore[union-attr]


async def test_listen_subscriber_gets_the_update_a_call_caused(command: list[str]) -> None:
    front = proxy(command, mode="legacy")
    async with Client(front, mode="modern") as client:
        async with client.listen(resource_uris=["notes://current"]) as sub:
            await client.call_tool("write_note", {"text": "hi"})
            with anyio.fail_after(20):  # a hang guard
                async for note in sub:
                    if note.method == "notifications/resources/updated":
                        assert note.params["uri"] == "notes://current"
                        break
        read = await client.read_resource("notes://current")
        assert read.contents[0].text == "hi"  # type: ignore[union-attr]


async def test_one_caller_stays_on_one_process_and_another_gets_its_own(
    command: list[str],
) -> None:
    front = proxy(command, mode="legacy")
    async with Client(front, mode="legacy") as alice, Client(front, mode="legacy") as bob:
        await alice.call_tool("write_note", {"text": "alice's"})
        pids: set[str] = set()
        for _ in range(3):
            pids.add((await alice.call_tool("whoami")).content[0].text)  # type: ignore[union-attr]
        assert len(pids) == 1
        read = await alice.read_resource("notes://current")
        assert read.contents[0].text == "alice's"  # type: ignore[union-attr]
        bob_pid = (await bob.call_tool("whoami")).content[0].text  # type: ignore[union-attr]
        assert bob_pid not in pids
        assert (await bob.read_resource("notes://current")).contents[0].text == "empty"  # type: ignore[union-attr]


async def test_an_input_request_while_two_calls_share_the_process_is_refused_by_name(
    command: list[str],
) -> None:
    """Rule 4 of pins: the upstream's elicitation names no call; with two in flight on
    one process the proxy says so instead of guessing."""
    asked = anyio.Event()
    release = anyio.Event()

    async def name(params: Any) -> JSON:
        if not asked.is_set():
            asked.set()
            await release.wait()  # the first call stays in flight
        return {"action": "accept", "content": {"n": "ada"}}

    front = proxy(command, mode="legacy")
    async with Client(front, mode="legacy", elicitation=name) as client:  # type: ignore[arg-type]
        first: list[Any] = []

        async def call_first() -> None:
            first.append(await client.call_tool("ask"))

        message = ""
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_first)
            await asked.wait()
            with pytest.raises(JSONRPCError) as refused:
                await client.call_tool("ask")
            message = refused.value.message
            release.set()
        assert "2 calls are in flight on one upstream process" in message
        assert "ada" in first[0].content[0].text


async def test_pinned_processes_are_bounded_and_a_live_session_keeps_its_own(
    command: list[str],
) -> None:
    """Pins rule 5: with room for one process, a second caller is refused by name while
    the first caller's session holds its process, and served once that session ends."""
    front = proxy(command, mode="legacy", proxy_limits=ProxyLimits(max_connections=1))
    async with Client(front, mode="legacy") as bob:
        async with Client(front, mode="legacy") as alice:
            await alice.call_tool("write_note", {"text": "alice's"})
            with pytest.raises(JSONRPCError) as busy:
                await bob.call_tool("whoami")
            assert "ProxyLimits.max_connections=1" in busy.value.message
            read = await alice.read_resource("notes://current")
            assert read.contents[0].text == "alice's"  # type: ignore[union-attr]
        gc.collect()  # the ended session is freed (reference counting does it in practice)
        assert (await bob.read_resource("notes://current")).contents[0].text == "empty"  # type: ignore[union-attr]


async def test_an_open_listen_stream_holds_its_process_and_frees_it_when_closed(
    command: list[str],
) -> None:
    """Pins rule 5 for sessionless 2026-07-28 callers: the process behind an open listen
    stream is not taken from it; once the stream ends it may be."""
    front = proxy(command, mode="legacy", proxy_limits=ProxyLimits(max_connections=1))
    ann_info = {"name": "ann", "version": "1"}
    bo_info = {"name": "bo", "version": "1"}
    async with (
        Client(front, mode="modern", client_info=ann_info) as ann,
        Client(front, mode="modern", client_info=bo_info) as bo,
    ):
        async with ann.listen(resource_uris=["notes://current"]):
            with pytest.raises(JSONRPCError) as busy:
                await bo.call_tool("whoami")
            assert "ProxyLimits.max_connections=1" in busy.value.message
        served = None
        with anyio.fail_after(60):  # a hang guard: no count of tries assumes a quiet machine
            while served is None:  # the proxy ends the stream when it reads the cancellation
                try:
                    served = await bo.call_tool("whoami")
                except JSONRPCError:
                    await anyio.sleep(0.05)
        assert served.content[0].text  # type: ignore[union-attr]
