"""Server-to-client input through the proxy on 2026-07-28 (MRTR, SEP-2322) and its
bridges: upstream keys and state passed through, the proxy's sealed state, parked
calls (a handshake-era upstream behind a 2026-07-28 client) and their bounds, and
cancellation of an input request (issue 14; wire case I2)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from proxy_helpers import PAIRS, answer_elicitation, answer_sampling, upstream_server

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import proxy
from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
SECRET = bytes(range(32))
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


async def answer_name(params: Any) -> JSON:
    if params.message == "Please confirm":
        return {"action": "accept", "content": {"ok": True}}
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_mrtr_fixtures_work_through_every_era_pair(up: str, down: str) -> None:
    front = proxy(build_demo_server(), mode=up)  # type: ignore[arg-type]
    async with Client(
        front,
        mode=down,  # type: ignore[arg-type]
        elicitation=answer_name,
        sampling=answer_sampling,
        roots=["file:///r"],
    ) as client:
        r = await client.call_tool("test_input_required_result_elicitation")
        assert r.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
        r = await client.call_tool("test_input_required_result_request_state")
        assert r.content[0].text == "state-ok"  # type: ignore[union-attr]
        r = await client.call_tool("test_input_required_result_multiple_inputs")
        assert not r.is_error


async def first_round(client: Client, tool: str) -> JSON:
    return await client.request(
        "tools/call",
        {"name": tool, "arguments": {}},
        accept_result_types=("input_required",),
    )


async def test_modern_upstream_keys_pass_through_and_state_is_sealed_by_the_proxy() -> None:
    front = proxy(build_demo_server(), mode="modern", state_secret=SECRET)
    async with Client(front, mode="modern", elicitation=answer_name) as client:
        first = await first_round(client, "test_input_required_result_request_state")
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["confirm"]  # the upstream's own key
        state = first["requestState"]
        answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
        done = await client.request(
            "tools/call",
            {
                "name": "test_input_required_result_request_state",
                "arguments": {},
                "inputResponses": answers,
                "requestState": state,
            },
        )
        assert done["content"][0]["text"] == "state-ok"
        with pytest.raises(JSONRPCError) as info:  # tampered: refused by the proxy
            await client.request(
                "tools/call",
                {
                    "name": "test_input_required_result_request_state",
                    "arguments": {},
                    "inputResponses": answers,
                    "requestState": state[:-4] + "AAAA",
                },
            )
        assert info.value.code == -32602
        assert "requestState" in info.value.message


async def test_a_parked_call_is_only_resumed_by_the_proxy_holding_it() -> None:
    upstream = build_demo_server()
    front = proxy(upstream, mode="legacy", state_secret=SECRET)
    other = proxy(upstream, mode="legacy", state_secret=SECRET)  # a second replica
    async with (
        Client(front, mode="modern", elicitation=answer_name) as client,
        Client(other, mode="modern", elicitation=answer_name) as elsewhere,
    ):
        first = await first_round(client, "test_input_required_result_elicitation")
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        assert first["inputRequests"][key]["method"] == "elicitation/create"
        retry = {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": {"name": "Bo"}}},
            "requestState": first["requestState"],
        }
        with pytest.raises(JSONRPCError) as info:
            await elsewhere.request("tools/call", retry)
        assert info.value.code == -32602
        assert "gone" in info.value.message
        done = await client.request("tools/call", retry)
        assert done["content"][0]["text"] == "Hello, Bo!"
        with pytest.raises(JSONRPCError) as info:  # collected: the state is spent
            await client.request("tools/call", retry)
        assert info.value.code == -32602


async def test_a_parked_call_never_resumed_is_released() -> None:
    front = proxy(build_demo_server(), mode="legacy", state_ttl_s=1.0)
    state: Any = front.proxy  # type: ignore[attr-defined]
    async with Client(front, mode="modern", elicitation=answer_name) as client:
        first = await first_round(client, "test_input_required_result_elicitation")
        assert first["resultType"] == "input_required"
        assert len(state.parked.calls) == 1
        with anyio.fail_after(15):  # ttl 1 s to answer + 1 s to collect; deadline 5x+
            while state.parked.calls:
                await anyio.sleep(0.05)


async def test_a_bad_answer_to_a_parked_input_request_is_refused() -> None:
    front = proxy(build_demo_server(), mode="legacy")
    async with Client(front, mode="modern", elicitation=answer_name) as client:
        first = await first_round(client, "test_input_required_result_elicitation")
        (key,) = first["inputRequests"]
        with pytest.raises(JSONRPCError) as info:
            await client.request(
                "tools/call",
                {
                    "name": "test_input_required_result_elicitation",
                    "arguments": {},
                    "inputResponses": {key: {"action": "accept", "content": {"name": 5}}},
                    "requestState": first["requestState"],
                },
            )
        assert info.value.code == -32602


async def test_upstream_giving_up_on_its_input_request_cancels_the_downstream_one() -> None:
    upstream = Server("impatient")
    asked = anyio.Event()
    dropped = anyio.Event()

    @upstream.tool()
    async def impatient(ctx: Context) -> str:
        try:
            await ctx.elicit("quick!", {"type": "object", "properties": {}}, timeout_s=0.5)
        except TimeoutError:
            return "gave up"
        return "answered"

    async def slow_person(params: Any) -> JSON:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            dropped.set()
        return {"action": "cancel"}

    front = proxy(upstream, mode="legacy")
    async with Client(front, mode="legacy", elicitation=slow_person) as client:
        with anyio.fail_after(15):
            r = await client.call_tool("impatient")
            await dropped.wait()  # the proxy told the downstream client
        assert asked.is_set()
        assert r.content[0].text == "gave up"  # type: ignore[union-attr]


async def test_I2_progress_goes_upstream_with_the_proxys_token() -> None:
    seen_upstream: list[Any] = []
    upstream = upstream_server()

    @upstream.tool()
    async def report(ctx: Context) -> str:
        seen_upstream.append(ctx.progress_token)
        await ctx.report_progress(1, 2)
        await ctx.report_progress(2, 2)
        return "ok"

    got: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        got.append(params)

    async with Client(proxy(upstream), elicitation=answer_elicitation) as client:
        await client.call_tool("report", on_progress=on_progress, progress_token="down-7")
    assert len(seen_upstream) == 1
    assert seen_upstream[0] not in (None, "down-7")  # the proxy's own token upstream
    assert [(p["progressToken"], p["progress"]) for p in got] == [("down-7", 1), ("down-7", 2)]
