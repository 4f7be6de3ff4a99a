"""Issue 25 §1: a proxy's pooled upstream sessions are keyed by who the caller is
(:func:`mcpkit.server.identity.caller_key`), never by ``id()`` of a downstream session
(instance A) nor by ``clientInfo`` and address (instance B); a caller with no identity
gets an upstream session of its own per request, pooled for nobody."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from proxy_helpers import Probe, serve_http, upstream_server

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import ProxyLimits, proxy
from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.http import http_app
from mcpkit.server.identity import caller_key

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
ELICIT = "test_input_required_result_elicitation"
INFO = {"name": "same-app", "version": "1.0"}
TRIES = 12
"""Fresh sessions Bob opens (instance A); CPython hands a freed session's address to the
next one of its size, so the old ``id()`` key matched within the first few."""


def notebook() -> Server:
    """An upstream that keeps a note per upstream session (its caller key)."""
    server = Server("notebook")
    notes: dict[str, str] = {}

    @server.tool()
    def remember(note: str, ctx: Context) -> str:
        key = caller_key(ctx)
        assert key is not None
        notes[key] = note
        return "ok"

    @server.tool()
    def recall(ctx: Context) -> str:
        key = caller_key(ctx)
        return notes.get(key, "nothing") if key is not None else "nothing"

    return server


def text(result: Any) -> str:
    return result.content[0].text


async def test_a_departed_sessions_upstream_session_never_reaches_a_new_session() -> None:
    """Instance A: Alice stores state upstream through the proxy and ends her session
    (DELETE); Bob opens fresh sessions over and over, never getting Alice's."""
    front = proxy(notebook(), mode="legacy")
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with serve_http(http_app(front)) as url:
        async with Client(url, mode="legacy", client_info=INFO) as alice:
            await alice.call_tool("remember", {"note": "alice's secret"})
            assert text(await alice.call_tool("recall")) == "alice's secret"
        assert state.upstream.idle_count() == 1  # Alice's upstream session, pooled
        for _ in range(TRIES):
            gc.collect()  # free whatever the last session left, so its address is reused
            async with Client(url, mode="legacy", client_info=INFO) as bob:
                assert text(await bob.call_tool("recall")) == "nothing"


@pytest.mark.parametrize(("down", "stateless"), [("modern", False), ("legacy", True)])
async def test_stateless_callers_with_the_same_client_info_and_address_share_nothing(
    down: str, stateless: bool
) -> None:
    """Instance B: two unauthenticated 2026-07-28 callers (or handshake-era callers of a
    stateless endpoint, whose per-request session object was keyed by ``id()``) with the
    same ``clientInfo`` from the same address have no identity: each request gets its own
    upstream session, which is never pooled, so neither reads what the other stored."""
    front = proxy(notebook(), mode="legacy")
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with (
        serve_http(http_app(front, stateless=stateless)) as url,
        Client(url, mode=down, client_info=INFO) as alice,  # type: ignore[arg-type]
        Client(url, mode=down, client_info=INFO) as bob,  # type: ignore[arg-type]
    ):
        await alice.call_tool("remember", {"note": "alice's secret"})
        assert state.upstream.idle_count() == 0  # pooled for nobody
        assert text(await bob.call_tool("recall")) == "nothing"
        assert text(await alice.call_tool("recall")) == "nothing"  # not even for herself
        assert state.upstream.idle_count() == 0


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_an_in_memory_caller_keeps_its_upstream_session_and_a_new_one_does_not(
    down: str,
) -> None:
    """On an in-memory (or stdio) connection the caller is the connection's token, both
    eras: its upstream session is reused for it, and never for a later connection."""
    front = proxy(notebook(), mode="legacy")
    state: Any = front.proxy  # type: ignore[attr-defined]
    connected, held, gone = anyio.Event(), anyio.Event(), anyio.Event()

    async def alice() -> None:
        async with Client(front, mode=down, client_info=INFO) as client:  # type: ignore[arg-type]
            connected.set()
            await held.wait()
            await client.call_tool("remember", {"note": "alice's secret"})
            assert text(await client.call_tool("recall")) == "alice's secret"
        gone.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(alice)
        await connected.wait()
        # a later connection keeps the proxy serving: connections opened from now on
        # live in its task group, so the pool outlives Alice's connection
        async with Client(front, mode=down, client_info=INFO):  # type: ignore[arg-type]
            held.set()
            await gone.wait()
            assert state.upstream.idle_count() == 1
            for _ in range(TRIES):
                gc.collect()
                async with Client(front, mode=down, client_info=INFO) as bob:  # type: ignore[arg-type]
                    assert text(await bob.call_tool("recall")) == "nothing"


async def nobody(_params: Any) -> JSON:
    raise AssertionError("not asked live")


async def test_parked_slots_are_counted_per_connection_not_per_client_info() -> None:
    """Two in-memory 2026-07-28 clients with the same ``clientInfo`` are two callers
    (their connections' tokens): one at its parked-call cap does not block the other."""
    limits = ProxyLimits(max_inflight_per_client=2, max_parked_calls=10)
    front = proxy(build_demo_server(), mode="legacy", proxy_limits=limits)
    async with (
        Client(front, mode="modern", elicitation=nobody, client_info=INFO) as hog,
        Client(front, mode="modern", elicitation=nobody, client_info=INFO) as other,
    ):
        for _ in range(2):
            assert (await first_round(hog))["resultType"] == "input_required"
        with pytest.raises(JSONRPCError) as info:
            await first_round(hog)
        assert "max_inflight_per_client" in info.value.message
        assert (await first_round(other))["resultType"] == "input_required"


async def test_callers_without_identity_are_not_counted_against_each_other() -> None:
    """Unauthenticated 2026-07-28 callers over HTTP with the same ``clientInfo`` from the
    same address are not one client: one with calls in flight does not make another's
    call refused for ``max_inflight_per_client`` (``max_connections`` still bounds all)."""
    limits = ProxyLimits(max_inflight_per_client=1, timeout_s=60)
    probe = Probe()
    async with (
        serve_http(http_app(proxy(upstream_server(probe), proxy_limits=limits))) as url,
        Client(url, mode="modern", client_info=INFO) as busy,
        Client(url, mode="modern", client_info=INFO) as other,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(busy.call_tool, "wait_forever")
        with anyio.fail_after(10):
            await probe.started.wait()
        r = await other.call_tool("sleep_s", {"seconds": 0})
        assert not r.is_error
        tg.cancel_scope.cancel()


async def first_round(client: Client) -> JSON:
    return await client.request(
        "tools/call", {"name": ELICIT, "arguments": {}}, accept_result_types=("input_required",)
    )


async def test_a_departed_callers_idle_connection_makes_room_for_a_new_caller() -> None:
    """A departed caller's key is never presented again, so its idle connection must not
    hold the pool: the least recently returned one is closed to make room, and the new
    caller keeps its own upstream session."""
    front = proxy(notebook(), mode="legacy", proxy_limits=ProxyLimits(max_idle_connections=1))
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with serve_http(http_app(front)) as url:
        async with Client(url, mode="legacy") as alice:
            await alice.call_tool("remember", {"note": "alice's secret"})
        assert state.upstream.idle_count() == 1
        async with Client(url, mode="legacy") as bob:
            await bob.call_tool("remember", {"note": "bob's note"})
            assert text(await bob.call_tool("recall")) == "bob's note"
        assert state.upstream.idle_count() == 1


def unlockable() -> Server:
    """A handshake-era upstream that lists a tool only to a session that unlocked it."""
    server = Server("per-session-lists")

    @server.tool()
    def unlock(ctx: Context) -> str:
        assert ctx.session is not None
        ctx.session.state["unlocked"] = True
        return "ok"

    @server.tool()
    def payroll_export() -> str:
        return "rows"

    def only_unlocked(ctx: Context, kind: str, item: Mapping[str, Any]) -> bool:
        if item.get("name") != "payroll_export":
            return True
        return ctx.session is not None and bool(ctx.session.state.get("unlocked"))

    server.add_list_filter(only_unlocked)
    return server


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_a_callers_listing_from_its_own_upstream_session_never_reaches_another(
    down: str,
) -> None:
    """Lists rule 1: a handshake-era upstream lists on the caller's own (pooled) upstream
    session; the page was cached per capability set alone, so Bob, with the same
    capabilities, was served the listing Alice's session had unlocked."""
    front = proxy(unlockable(), mode="legacy")
    async with Client(front, mode=down) as alice, Client(front, mode=down) as bob:  # type: ignore[arg-type]
        await alice.call_tool("unlock")
        assert "payroll_export" in {t.name for t in await alice.list_tools()}
        assert {t.name for t in await bob.list_tools()} == {"unlock"}
    async with Client(front, mode=down) as carol:  # type: ignore[arg-type]
        assert {t.name for t in await carol.list_tools()} == {"unlock"}


async def test_a_callers_listing_from_its_own_upstream_session_is_private() -> None:
    """Lists rule 1: the page came from the caller's own upstream session, so a public
    cache hint on the proxy does not make it shareable (``cacheScope: "private"``)."""
    from mcpkit.server.app import CacheHint

    front = proxy(unlockable(), mode="legacy")
    front.cache_hints["tools/list"] = CacheHint(60_000, "public")
    async with Client(front, mode="modern") as alice:
        await alice.call_tool("unlock")
        result = await alice.request("tools/list", {})
        assert "payroll_export" in {t["name"] for t in result["tools"]}
        assert result["cacheScope"] == "private"
