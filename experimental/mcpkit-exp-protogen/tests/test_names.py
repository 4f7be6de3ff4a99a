"""The annotations' value syntax: snake_case names, tool names, Go durations, summaries."""

from __future__ import annotations

import pytest

from mcpkit.experimental.protogen.names import (
    parse_duration_s,
    render_summary,
    snake_case,
    summary_fields,
    tool_name_problem,
)


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("GetUser", "get_user"),
        ("HTTPStatus", "http_status"),
        ("ListV2Items", "list_v2_items"),
        ("getX", "get_x"),
        ("Search", "search"),
    ],
)
def test_snake_case(method: str, name: str) -> None:
    assert snake_case(method) == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("get_user", None),
        ("a" * 64, None),
        ("a" * 65, "more than 64"),
        ("", "empty"),
        ("Get", "lowercase letter"),
        ("1x", "lowercase letter"),
        ("get-user", "'-'"),
        ("_x", "lowercase letter"),
        ("x.y", "'.'"),
    ],
)
def test_tool_names(name: str, problem: str | None) -> None:
    found = tool_name_problem(name)
    assert (found is None) == (problem is None)
    if problem is not None:
        assert found is not None
        assert problem in found


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("5m", 300.0),
        ("1m30s", 90.0),
        ("250ms", 0.25),
        ("1.5h", 5400.0),
        ("1h2m3.5s", 3723.5),
        ("100us", 1e-4),
        ("10µs", 1e-5),
        ("+2s", 2.0),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("30", "no unit"),
        ("30 seconds", "unknown unit"),
        ("5x", "unknown unit 'x'"),
        ("", "not a Go duration"),
        ("0", "zero"),
        ("-3s", "not positive"),
        ("1..5s", "not a Go"),
        ("s", "not a Go duration"),
        ("0s", "not positive"),
        ("2562048h", "out of range"),  # Go: time: invalid duration
        ("9999999999h", "out of range"),
        ("\u0663s", "not a Go duration"),  # ARABIC-INDIC DIGIT THREE: not an ASCII digit
    ],
)
def test_what_is_not_a_timeout(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_duration_s(text)


def test_summaries() -> None:
    template = "Found {total} books for {query} ({{literal}}) {ok} {tags}"
    assert summary_fields(template) == ["total", "query", "ok", "tags"]
    data = {"total": 2, "query": "dune", "ok": True, "tags": ["a", "b"]}
    assert render_summary(template, data) == 'Found 2 books for dune ({literal}) true ["a","b"]'
    assert render_summary("{missing}!", {}) == "!"
    for bad in ("{a.b}", "{a[0]}", "{a!r}", "{a:>5}", "{}", "{", "}"):
        with pytest.raises(ValueError, match=r"field name|write just|valid template"):
            summary_fields(bad)
