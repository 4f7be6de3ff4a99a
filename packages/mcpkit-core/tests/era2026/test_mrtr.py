"""MRTR on the 2026-07-28 wire (SEP-2322): input_required, requestState, accumulation."""

from __future__ import annotations

import pytest

from mcpkit.core.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, JSONRPCError

from .conftest import RawPeer, envelope

pytestmark = pytest.mark.anyio

ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}}


def accept(**content: object) -> dict[str, object]:
    return {"action": "accept", "content": content}


async def test_missing_input_is_answered_input_required_with_sealed_state(peer: RawPeer) -> None:
    r = await peer.call(
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "_meta": envelope(ALL_CAPS),
        },
    )
    assert r["resultType"] == "input_required"
    assert r["inputRequests"]["user_name"]["method"] == "elicitation/create"
    assert isinstance(r["requestState"], str)
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpkit-demo"


async def test_retry_with_input_response_completes(peer: RawPeer) -> None:
    params = {
        "name": "test_input_required_result_elicitation",
        "arguments": {},
        "_meta": envelope(ALL_CAPS),
    }
    first = await peer.call("tools/call", params)
    done = await peer.call(
        "tools/call",
        {
            **params,
            "requestState": first["requestState"],
            "inputResponses": {"user_name": accept(name="Alice")},
        },
    )
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": "Hello, Alice!"}]


async def test_answers_accumulate_across_rounds_and_state_changes(peer: RawPeer) -> None:
    params = {
        "name": "test_input_required_result_multi_round",
        "arguments": {},
        "_meta": envelope(ALL_CAPS),
    }
    r1 = await peer.call("tools/call", params)
    assert list(r1["inputRequests"]) == ["step1"]
    r2 = await peer.call(
        "tools/call",
        {
            **params,
            "requestState": r1["requestState"],
            "inputResponses": {"step1": accept(name="Alice")},
        },
    )
    assert list(r2["inputRequests"]) == ["step2"]
    assert r2["requestState"] != r1["requestState"]
    # Round 3 repeats nothing from round 1: step1's answer travels inside requestState.
    r3 = await peer.call(
        "tools/call",
        {
            **params,
            "requestState": r2["requestState"],
            "inputResponses": {"step2": accept(color="blue")},
        },
    )
    assert r3["content"][0]["text"] == "Alice likes blue"


async def test_tampered_request_state_is_refused_with_invalid_params(peer: RawPeer) -> None:
    params = {
        "name": "test_input_required_result_tampered_state",
        "arguments": {},
        "_meta": envelope(ALL_CAPS),
    }
    r1 = await peer.call("tools/call", params)
    with pytest.raises(JSONRPCError) as err:
        await peer.call(
            "tools/call",
            {
                **params,
                "requestState": r1["requestState"] + "-TAMPERED",
                "inputResponses": {"confirm": accept(ok=True)},
            },
        )
    assert err.value.code == INVALID_PARAMS


async def test_request_state_is_bound_to_the_request(peer: RawPeer) -> None:
    r1 = await peer.call(
        "tools/call",
        {
            "name": "test_input_required_result_request_state",
            "arguments": {},
            "_meta": envelope(ALL_CAPS),
        },
    )
    with pytest.raises(JSONRPCError) as err:
        await peer.call(
            "tools/call",
            {
                "name": "test_input_required_result_tampered_state",
                "arguments": {},
                "_meta": envelope(ALL_CAPS),
                "requestState": r1["requestState"],
            },
        )
    assert err.value.code == INVALID_PARAMS
    assert "different request" in err.value.message


async def test_extra_input_response_keys_are_ignored(peer: RawPeer) -> None:
    r = await peer.call(
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "_meta": envelope(ALL_CAPS),
            "inputResponses": {"user_name": accept(name="Bo"), "unknown_extra": accept(x=1)},
        },
    )
    assert r["resultType"] == "complete"
    assert r["content"][0]["text"] == "Hello, Bo!"


async def test_wrong_keys_get_input_required_again(peer: RawPeer) -> None:
    r = await peer.call(
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "_meta": envelope(ALL_CAPS),
            "inputResponses": {"wrong_key": accept(data="x")},
        },
    )
    assert r["resultType"] == "input_required"


async def test_malformed_input_responses_are_invalid_params(peer: RawPeer) -> None:
    with pytest.raises(JSONRPCError) as err:
        await peer.call(
            "tools/call",
            {
                "name": "test_input_required_result_elicitation",
                "arguments": {},
                "_meta": envelope(ALL_CAPS),
                "inputResponses": {"user_name": 12345},
            },
        )
    assert err.value.code == INVALID_PARAMS


async def test_multiple_inputs_in_one_round(peer: RawPeer) -> None:
    params = {
        "name": "test_input_required_result_multiple_inputs",
        "arguments": {},
        "_meta": envelope(ALL_CAPS),
    }
    r1 = await peer.call("tools/call", params)
    methods = {v["method"] for v in r1["inputRequests"].values()}
    assert methods == {"elicitation/create", "sampling/createMessage", "roots/list"}
    done = await peer.call(
        "tools/call",
        {
            **params,
            "requestState": r1["requestState"],
            "inputResponses": {
                "user_name": accept(name="Alice"),
                "greeting": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "Hello there!"},
                    "model": "m",
                    "stopReason": "endTurn",
                },
                "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
            },
        },
    )
    assert done["content"][0]["text"] == "Hello there! Alice (1 roots)"


async def test_undeclared_capability_is_never_requested(peer: RawPeer) -> None:
    r = await peer.call(
        "tools/call",
        {
            "name": "test_input_required_result_capabilities",
            "arguments": {},
            "_meta": envelope({"sampling": {}}),
        },
    )
    assert r["resultType"] == "input_required"
    assert all(v["method"] != "elicitation/create" for v in r["inputRequests"].values())


async def test_missing_required_capability_is_32021_with_required_capabilities(
    peer: RawPeer,
) -> None:
    with pytest.raises(JSONRPCError) as err:
        await peer.call(
            "tools/call",
            {"name": "test_missing_capability", "arguments": {}, "_meta": envelope({})},
        )
    assert err.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert err.value.data == {"requiredCapabilities": {"sampling": {}}}


async def test_prompts_get_can_require_input(peer: RawPeer) -> None:
    params = {"name": "test_input_required_result_prompt", "_meta": envelope(ALL_CAPS)}
    r1 = await peer.call("prompts/get", params)
    assert r1["resultType"] == "input_required"
    r2 = await peer.call(
        "prompts/get",
        {
            **params,
            "requestState": r1["requestState"],
            "inputResponses": {"user_context": accept(context="test context")},
        },
    )
    assert r2["resultType"] == "complete"
    assert "test context" in r2["messages"][0]["content"]["text"]


async def test_list_methods_never_answer_input_required(peer: RawPeer) -> None:
    for method in ("tools/list", "prompts/list"):
        r = await peer.call(method, {"_meta": envelope(ALL_CAPS)})
        assert r["resultType"] == "complete"
