"""The shared answer check (:mod:`mcpkit.core.answers`) that server and client both use."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.core.answers import answer_problems
from mcpkit.core.jsonschema import SchemaError

FORM: dict[str, Any] = {
    "mode": "form",
    "message": "?",
    "requestedSchema": {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[0-9]+$", "maxLength": 4}},
        "required": ["code"],
    },
}


def test_a_non_object_answer_has_only_that_problem() -> None:
    assert answer_problems("roots/list", {}, 5) == [
        "(root): the answer must be an object (got a number)"
    ]
    assert answer_problems("roots/list", {}, None) == [
        "(root): the answer must be an object (got null)"
    ]


def test_methods_of_extensions_are_not_checked() -> None:
    assert answer_problems("com.example/ask", {}, "anything") == []


def test_a_peer_pattern_is_not_enforced_but_the_rest_of_its_schema_is() -> None:
    long_letters = {"action": "accept", "content": {"code": "abcde"}}
    assert answer_problems("elicitation/create", FORM, long_letters) == [
        "content.code: 'abcde' does not match '^[0-9]+$'",
        "content.code: 'abcde' is too long",
    ]
    assert answer_problems("elicitation/create", FORM, long_letters, schema_from_peer=True) == [
        "content.code: 'abcde' is too long"
    ]


def test_url_mode_and_declined_answers_have_no_content_to_check() -> None:
    url = {"mode": "url", "message": "?", "url": "https://x", "elicitationId": "e"}
    assert answer_problems("elicitation/create", url, {"action": "accept"}) == []
    assert answer_problems("elicitation/create", FORM, {"action": "decline"}) == []


def test_problems_are_bounded_by_limit() -> None:
    many = {"roots": [{"uri": i} for i in range(1000)]}
    assert len(answer_problems("roots/list", {}, many, limit=3)) == 3


def test_an_unusable_requested_schema_is_a_schema_error() -> None:
    bad = {"requestedSchema": {"type": "object", "properties": {"n": {"type": "nope"}}}}
    with pytest.raises(SchemaError):
        answer_problems("elicitation/create", bad, {"action": "accept", "content": {}})


def test_roots_must_be_file_uris() -> None:
    answer = {"roots": [{"uri": "file:///home/a"}, {"uri": "https://evil.example/"}]}
    assert answer_problems("roots/list", {}, answer) == [
        "roots.1.uri: 'https://evil.example/' is not a file:// URI"
    ]
    assert answer_problems("roots/list", {}, {"roots": [{"uri": "FILE:///A"}]}) == []


SAMPLE: dict[str, Any] = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 5,
}
TOOL_USE: dict[str, Any] = {
    "role": "assistant",
    "model": "m",
    "content": [{"type": "tool_use", "id": "c1", "name": "weather", "input": {}}],
    "stopReason": "toolUse",
}
WEATHER = [{"name": "weather", "inputSchema": {"type": "object"}}]


def test_tool_use_only_where_the_sampling_request_allowed_it() -> None:
    assert answer_problems("sampling/createMessage", SAMPLE, TOOL_USE) == [
        "content: tool_use, but the request offered no tools"
    ]
    offered = {**SAMPLE, "tools": WEATHER}
    assert answer_problems("sampling/createMessage", offered, TOOL_USE) == []
    none = {**offered, "toolChoice": {"mode": "none"}}
    assert answer_problems("sampling/createMessage", none, TOOL_USE) == [
        'content: tool_use, but the request set toolChoice.mode "none"'
    ]
    other = {**SAMPLE, "tools": [{"name": "clock", "inputSchema": {"type": "object"}}]}
    assert answer_problems("sampling/createMessage", other, TOOL_USE) == [
        "content: tool_use of 'weather', a tool not offered"
    ]


@pytest.mark.parametrize(
    "where",
    [
        {"anyOf": [{"pattern": "^[0-9]+$"}]},
        {"not": {"not": {"pattern": "^[0-9]+$"}}},
        {"allOf": [{"$ref": "#/$defs/digits"}]},
    ],
)
def test_a_peer_pattern_is_not_run_at_any_depth(where: dict[str, Any]) -> None:
    # Rule 4: a regular expression nested under anyOf / not / $defs is a peer's regex
    # too (^(a+)+$ on 30 characters takes minutes); only the peer that chose it runs it.
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", **where}},
        "$defs": {"digits": {"pattern": "^[0-9]+$"}},
        "propertyNames": {"pattern": "^[a-z]+$"},
        "patternProperties": {"^x": {"type": "integer"}},
    }
    params = {"mode": "form", "message": "?", "requestedSchema": schema}
    answer = {"action": "accept", "content": {"code": "abc"}}
    assert answer_problems("elicitation/create", params, answer)  # the server runs it
    assert answer_problems("elicitation/create", params, answer, schema_from_peer=True) == []


def test_stripping_peer_patterns_keeps_property_names_and_data() -> None:
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "enum": ["a", "b"]}},
        "required": ["pattern"],
    }
    params = {"mode": "form", "message": "?", "requestedSchema": schema}
    missing = answer_problems(
        "elicitation/create", params, {"action": "accept", "content": {}}, schema_from_peer=True
    )
    assert missing == ["content: 'pattern' is a required property"]
    wrong = answer_problems(
        "elicitation/create",
        params,
        {"action": "accept", "content": {"pattern": "c"}},
        schema_from_peer=True,
    )
    assert wrong == ["content.pattern: 'c' is not one of ['a', 'b']"]
