"""MRTR answers are checked against what was asked (issue 11 §5, SEP-2322 §Error Handling).

The conformance scenarios' expectations: a missing or unknown key is asked for again
(``input-required-result-missing-input-response``), extra keys are ignored
(``...-ignore-extra-params``), an answer that breaks its request is -32602
(``...-validate-input``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError

from .conftest import RawPeer, envelope

pytestmark = pytest.mark.anyio

ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}}
JSON = dict[str, Any]


def call(tool: str, **extra: Any) -> JSON:
    return {"name": tool, "arguments": {}, "_meta": envelope(ALL_CAPS), **extra}


async def refused(peer: RawPeer, params: JSON) -> JSONRPCError:
    with pytest.raises(JSONRPCError) as err:
        await peer.call("tools/call", params)
    assert err.value.code == INVALID_PARAMS
    return err.value


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"action": "accept", "content": {"bogus": 1}}, "content: 'name' is a required property"),
        ({"action": "accept", "content": {"name": {"nested": 1}}}, "content.name"),
        ({"action": "accept", "content": "x"}, "content"),
        ({"action": "accept"}, "content: 'name' is a required property"),
        ({"action": "yes", "content": {"name": "Al"}}, "action"),
        ({"roots": []}, "action: required field is missing"),
    ],
)
async def test_an_answer_that_breaks_the_elicitation_is_invalid_params(
    peer: RawPeer, answer: JSON, problem: str
) -> None:
    err = await refused(
        peer, call("test_input_required_result_elicitation", inputResponses={"user_name": answer})
    )
    assert err.data["inputKey"] == "user_name"
    assert err.data["method"] == "elicitation/create"
    assert any(problem in p for p in err.data["problems"])
    assert "AttributeError" not in err.message


async def test_null_input_responses_are_invalid_params(peer: RawPeer) -> None:
    err = await refused(peer, call("test_input_required_result_elicitation", inputResponses=None))
    assert "inputResponses" in err.message


async def test_decline_reaches_the_tool(peer: RawPeer) -> None:
    r = await peer.call(
        "tools/call",
        call(
            "test_input_required_result_elicitation",
            inputResponses={"user_name": {"action": "decline"}},
        ),
    )
    assert r["resultType"] == "complete"
    assert r["content"][0]["text"] == "Hello, stranger!"


async def test_a_malformed_sampling_answer_is_invalid_params(peer: RawPeer) -> None:
    err = await refused(
        peer,
        call(
            "test_input_required_result_sampling",
            inputResponses={"capital_question": {"role": "assistant", "model": "m"}},
        ),
    )
    assert err.data["method"] == "sampling/createMessage"
    assert err.data["problems"] == ["content: required field is missing"]


async def test_a_malformed_roots_answer_is_invalid_params(peer: RawPeer) -> None:
    err = await refused(
        peer,
        call(
            "test_input_required_result_list_roots",
            inputResponses={"client_roots": {"roots": [{"uri": 5}]}},
        ),
    )
    assert err.data["method"] == "roots/list"
    assert err.data["problems"][0].startswith("roots.0.uri")


async def test_every_answer_of_a_round_is_checked_before_missing_ones_are_asked_again(
    peer: RawPeer,
) -> None:
    # One good answer, one bad, one missing: the bad one is reported, not re-asked.
    err = await refused(
        peer,
        call(
            "test_input_required_result_multiple_inputs",
            inputResponses={
                "user_name": {"action": "accept", "content": {"name": "Al"}},
                "greeting": {"role": "assistant", "content": {"type": "text"}, "model": "m"},
            },
        ),
    )
    assert err.data["inputKey"] == "greeting"


async def test_a_bad_answer_in_a_later_round_is_invalid_params(peer: RawPeer) -> None:
    params = call("test_input_required_result_multi_round")
    r1 = await peer.call("tools/call", params)
    r2 = await peer.call(
        "tools/call",
        {
            **params,
            "requestState": r1["requestState"],
            "inputResponses": {"step1": {"action": "accept", "content": {"name": "Al"}}},
        },
    )
    assert list(r2["inputRequests"]) == ["step2"]
    err = await refused(
        peer,
        {
            **params,
            "requestState": r2["requestState"],
            "inputResponses": {"step2": {"action": "accept", "content": {"colour": "blue"}}},
        },
    )
    assert err.data["inputKey"] == "step2"


async def test_an_answer_under_a_key_never_asked_is_ignored_even_when_malformed(
    peer: RawPeer,
) -> None:
    r = await peer.call(
        "tools/call",
        call(
            "test_input_required_result_elicitation",
            inputResponses={
                "user_name": {"action": "accept", "content": {"name": "Al"}},
                "never_asked": {"action": "nonsense", "content": "x"},
            },
        ),
    )
    assert r["content"][0]["text"] == "Hello, Al!"
