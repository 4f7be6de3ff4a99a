"""Review (issue 14): what one client sends or holds through a proxy stays its own.

Forged sealed MRTR records (mrtr rule 6), parked-call slots, pooled upstream sessions,
the trace context going upstream and the proxy's own list filters."""

from __future__ import annotations

import base64
import json
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import anyio
import pytest
from proxy_helpers import PAIRS, Probe, answer_sampling, upstream_server

from mcpkit.client import Client
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.tracing import TraceContext, TracedMessage
from mcpkit.proxy import ProxyLimits, proxy
from mcpkit.proxy.calls import UPSTREAM_STATE
from mcpkit.proxy.parked import PARKED
from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.mount import CARRIED

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
ELICIT = "test_input_required_result_elicitation"
STATEFUL = "test_input_required_result_request_state"


def readable(state: str) -> JSON:
    """The body of a sealed state: signed, not encrypted, so its holder can read it."""
    raw = state.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))


async def nobody(_params: Any) -> JSON:
    """Declares elicitation; the tests answer by hand."""
    raise AssertionError("not asked live")


async def first_round(client: Client, tool: str) -> JSON:
    return await client.request(
        "tools/call", {"name": tool, "arguments": {}}, accept_result_types=("input_required",)
    )


async def test_another_client_cannot_resume_a_parked_call_by_naming_it() -> None:
    front = proxy(build_demo_server(), mode="legacy")
    async with (
        Client(front, mode="modern", elicitation=nobody) as victim,
        Client(front, mode="modern", elicitation=nobody) as thief,
    ):
        first = await first_round(victim, ELICIT)
        (key,) = first["inputRequests"]
        parked = readable(first["requestState"])["a"][PARKED]
        forged = {
            "name": ELICIT,
            "arguments": {},
            "inputResponses": {
                PARKED: parked,
                key: {"action": "accept", "content": {"name": "Mallory"}},
            },
        }
        with pytest.raises(JSONRPCError) as info:
            await thief.request("tools/call", forged)
        assert info.value.code == INVALID_PARAMS
        assert "reserved" in info.value.message
        assert len(front.proxy.parked.calls) == 1  # type: ignore[attr-defined]  # untouched


async def test_an_upstream_request_state_cannot_be_replayed_outside_the_proxys_seal() -> None:
    front = proxy(build_demo_server(), mode="modern")
    async with (
        Client(front, mode="modern", elicitation=nobody) as victim,
        Client(front, mode="modern", elicitation=nobody) as thief,
    ):
        first = await first_round(victim, STATEFUL)
        upstream_state = readable(first["requestState"])["a"][UPSTREAM_STATE]
        forged = {
            "name": STATEFUL,
            "arguments": {},
            "inputResponses": {
                UPSTREAM_STATE: upstream_state,
                "confirm": {"action": "accept", "content": {"ok": True}},
            },
        }
        with pytest.raises(JSONRPCError) as info:
            await thief.request("tools/call", forged)
        assert info.value.code == INVALID_PARAMS
        assert "reserved" in info.value.message


async def test_a_mounts_carried_state_cannot_be_forged() -> None:
    parent = Server("host")
    parent.mount(proxy(build_demo_server(), mode="legacy"), namespace="d")
    tool = f"d_{ELICIT}"
    async with (
        Client(parent, mode="modern", elicitation=nobody) as victim,
        Client(parent, mode="modern", elicitation=nobody) as thief,
    ):
        first = await first_round(victim, tool)
        (key,) = first["inputRequests"]
        carried = readable(first["requestState"])["a"][CARRIED]
        forged = {
            "name": tool,
            "arguments": {},
            "inputResponses": {
                CARRIED: carried,
                key: {"action": "accept", "content": {"name": "Mallory"}},
            },
        }
        with pytest.raises(JSONRPCError) as info:
            await thief.request("tools/call", forged)
        assert info.value.code == INVALID_PARAMS
        assert "reserved" in info.value.message


async def test_a_cancelled_parked_call_frees_its_slot_at_once() -> None:
    """A 2026-07-28 client behind a handshake-era upstream that cancels its calls must not
    hold ``max_parked_calls`` slots for ``state_ttl_s`` (600 s): one client could lock
    every other 2026-07-28 client out by starting and cancelling calls."""
    probe = Probe()
    limits = ProxyLimits(max_parked_calls=1)
    front = proxy(upstream_server(probe), mode="legacy", proxy_limits=limits)
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with Client(front, mode="modern") as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "wait_forever")
            with anyio.fail_after(10):
                await probe.started.wait()
            tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(10):  # the upstream handler is stopped ...
            await probe.cancelled.wait()
        with anyio.fail_after(10):  # ... and the slot is free, long before state_ttl_s
            while state.parked.calls:
                await anyio.sleep(0.02)
        r = await client.call_tool("sleep_s", {"seconds": 0})
        assert r.content[0].text == "slept 0.0"  # type: ignore[union-attr]


def notebook() -> Server:
    """An upstream that keeps a note per session, as handshake-era servers may."""
    server = Server("notebook")
    notes: dict[int, str] = {}

    @server.tool()
    def remember(note: str, ctx: Context) -> str:
        notes[id(ctx.session)] = note
        return "ok"

    @server.tool()
    def recall(ctx: Context) -> str:
        return notes.get(id(ctx.session), "nothing")

    return server


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_an_upstream_session_is_never_reused_for_another_client(down: str) -> None:
    """Leased connections are reused only by the client they served: another client
    must not be handed the upstream session holding the first one's state."""
    front = proxy(notebook(), mode="legacy")
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with (
        Client(front, mode=down, client_info={"name": "alice", "version": "1"}) as alice,  # type: ignore[arg-type]
        Client(front, mode=down, client_info={"name": "bob", "version": "1"}) as bob,  # type: ignore[arg-type]
    ):
        await alice.call_tool("remember", {"note": "alice's secret"})
        assert state.upstream.idle_count() == 1  # kept for reuse ...
        r = await bob.call_tool("recall")
        assert r.content[0].text == "nothing"  # type: ignore[union-attr]  # ... not by bob
        r = await alice.call_tool("recall")
        assert r.content[0].text == "alice's secret"  # type: ignore[union-attr]  # by alice


PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_malformed_or_oversized_trace_context_stops_at_the_proxy(up: str, down: str) -> None:
    probe = Probe()
    front = proxy(upstream_server(probe), mode=up)  # type: ignore[arg-type]
    cases: list[tuple[JSON, JSON]] = [
        (  # valid traceparent: kept; a malformed tracestate and a huge baggage: dropped
            {"traceparent": PARENT, "tracestate": "Bad Key=x", "baggage": "k=" + "v" * 9000},
            {"traceparent": PARENT},
        ),
        (  # a malformed traceparent takes its companions with it
            {"traceparent": "00-" + "z" * 52, "tracestate": "a=b", "baggage": "k=v"},
            {},
        ),
        (  # valid ones go through unchanged
            {"traceparent": PARENT, "tracestate": "a=b", "baggage": "k=v"},
            {"traceparent": PARENT, "tracestate": "a=b", "baggage": "k=v"},
        ),
    ]
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        for sent, expected in cases:
            params = {"name": "show_meta", "arguments": {}, "_meta": sent}
            await client.request("tools/call", params)
            seen = {k: v for k, v in probe.metas[-1].items() if k in sent}
            assert seen == expected


class SpanTracer:
    """A tracer whose every handled message opens a span with a fixed id."""

    SPAN_ID = "1111111111111111"

    def handle(self, message: TracedMessage) -> AbstractContextManager[Any]:
        if message.trace_context is not None:
            trace_id = message.trace_context.trace_id
            message.span_context = TraceContext(f"00-{trace_id}-{self.SPAN_ID}-01")
        return nullcontext()

    def send(self, message: TracedMessage) -> AbstractContextManager[Any]:
        return nullcontext()


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_the_upstreams_parent_is_the_proxys_span(up: str, down: str) -> None:
    probe = Probe()
    front = proxy(upstream_server(probe), mode=up)  # type: ignore[arg-type]
    front.set_tracer(SpanTracer())
    async with Client(front, mode=down) as client:  # type: ignore[arg-type]
        params = {"name": "show_meta", "arguments": {}, "_meta": {"traceparent": PARENT}}
        await client.request("tools/call", params)
    assert probe.metas[-1]["traceparent"] == f"00-{PARENT[3:35]}-{SpanTracer.SPAN_ID}-01"


def guarded() -> Server:
    server = Server("guarded")
    server.add_tool(lambda: "public", name="open_tool")
    server.add_tool(lambda: "leaked", name="admin_tool")

    @server.prompt()
    def admin_prompt(topic: str) -> str:
        return f"admin {topic}"

    @server.completion(prompt="admin_prompt")
    def topics(argument: str, value: str, context: Any) -> list[str]:
        return ["payroll"]

    @server.resource("r://admin")
    def admin_resource() -> str:
        return "leaked"

    @server.resource("r://admin/{id}")
    def admin_record(id: str) -> str:
        return f"leaked {id}"

    return server


def hide_admin(ctx: Context, kind: str, definition: Any) -> bool:
    found = definition.get("name") or definition.get("uri") or definition.get("uriTemplate")
    return "admin" not in str(found)


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_the_proxys_own_list_filters_hold_for_forwarded_items(up: str, down: str) -> None:
    """A filter on the proxy (``add_list_filter``) hides upstream items from lists and
    makes them unknown to calls, as it does for a server's own items."""
    front = proxy(guarded(), mode=up)  # type: ignore[arg-type]
    front.add_list_filter(hide_admin)
    async with Client(front, mode=down, cache=False) as client:  # type: ignore[arg-type]
        assert [t.name for t in await client.list_tools()] == ["open_tool"]
        assert await client.list_prompts() == []
        assert await client.list_resources() == []
        assert await client.list_resource_templates() == []
        assert (await client.call_tool("open_tool")).content[0].text == "public"  # type: ignore[union-attr]
        refused = [
            ("tools/call", {"name": "admin_tool", "arguments": {}}),
            ("prompts/get", {"name": "admin_prompt", "arguments": {"topic": "x"}}),
            ("resources/read", {"uri": "r://admin"}),
            ("resources/read", {"uri": "r://admin/7"}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "admin_prompt"},
                    "argument": {"name": "topic", "value": "p"},
                },
            ),
        ]
        for method, params in refused:
            with pytest.raises(JSONRPCError) as info:
                await client.request(method, params)
            assert info.value.code in (-32602, -32002), (method, params)
            assert "leaked" not in str(info.value.message)


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_a_modern_upstreams_per_capability_lists_are_cached_per_capability_set(
    down: str,
) -> None:
    """A 2026-07-28 upstream gets each list request's client capabilities and may list
    per capability set: a page cached for a client that can sample must not be served
    to one that cannot."""
    upstream = Server("per-caps")
    upstream.add_tool(lambda: "ok", name="plain")
    upstream.add_tool(lambda: "ok", name="needs_sampling")

    def sampling_only(ctx: Context, kind: str, definition: Any) -> bool:
        return definition.get("name") != "needs_sampling" or "sampling" in ctx.client_capabilities

    upstream.add_list_filter(sampling_only)
    front = proxy(upstream, mode="modern")

    async with (
        Client(front, mode=down, sampling=answer_sampling, cache=False) as sampler,  # type: ignore[arg-type]
        Client(front, mode=down, cache=False) as plain,  # type: ignore[arg-type]
    ):
        assert {t.name for t in await sampler.list_tools()} == {"plain", "needs_sampling"}
        assert {t.name for t in await plain.list_tools()} == {"plain"}


async def test_one_client_cannot_take_every_parked_slot() -> None:
    """Parked calls no longer count as requests in flight once their first round is
    answered; one client parking calls in a loop must not take every slot."""
    limits = ProxyLimits(max_inflight_per_client=2, max_parked_calls=10)
    front = proxy(build_demo_server(), mode="legacy", proxy_limits=limits)
    async with (
        Client(front, mode="modern", elicitation=nobody, client_info={"name": "hog"}) as hog,
        Client(front, mode="modern", elicitation=nobody, client_info={"name": "ok"}) as other,
    ):
        for _ in range(2):
            assert (await first_round(hog, ELICIT))["resultType"] == "input_required"
        with pytest.raises(JSONRPCError) as info:
            await first_round(hog, ELICIT)
        assert info.value.code == -32603
        assert "max_inflight_per_client" in info.value.message
        assert (await first_round(other, ELICIT))["resultType"] == "input_required"
