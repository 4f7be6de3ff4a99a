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
