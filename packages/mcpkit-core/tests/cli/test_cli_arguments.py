"""``key=value`` arguments and answering a form elicitation on a terminal."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from typing import Any

import pytest

from mcpkit.cli.arguments import coerce, parse_tool_arguments
from mcpkit.cli.elicit import ask_form
from mcpkit.cli.plugins import CliError

MCPKIT = (sys.executable, "-m", "mcpkit.cli.main")
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "dry_run": {"type": "boolean"},
        "tags": {"type": "array"},
        "options": {"type": "object"},
        "anything": {},
    },
}


def test_key_value_words_are_typed_by_the_schema() -> None:
    words = [
        "name=42",
        "count=3",
        "ratio=0.5",
        "dry_run=yes",
        'tags=["a", "b"]',
        'options={"deep": true}',
        "anything=7",
        "unknown=plain text",
    ]
    assert parse_tool_arguments(words, SCHEMA) == {
        "name": "42",
        "count": 3,
        "ratio": 0.5,
        "dry_run": True,
        "tags": ["a", "b"],
        "options": {"deep": True},
        "anything": 7,
        "unknown": "plain text",
    }
    assert parse_tool_arguments(['{"count": "raw"}'], SCHEMA) == {"count": "raw"}
    assert parse_tool_arguments([], SCHEMA) == {}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["count=1.5"], "count: expected an integer"),
        (["ratio=abc"], "ratio: expected a number in JSON"),
        (["dry_run=maybe"], "dry_run: expected a boolean"),
        (["tags={}"], "tags: expected an array"),
        (["noequals"], "'noequals' is not key=value"),
        (["[1]"], "is not key=value"),
    ],
)
def test_bad_words_are_usage_errors(words: list[str], message: str) -> None:
    with pytest.raises(CliError, match=message):
        parse_tool_arguments(words, SCHEMA)


def test_coerce_of_an_enum_without_type_is_a_string() -> None:
    assert coerce("1", {"enum": ["1", "2"]}) == "1"


FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
        "news": {"type": "boolean", "default": False},
        "pets": {"type": "array", "items": {"type": "string", "enum": ["cat", "dog"]}},
        "note": {"type": "string"},
    },
    "required": ["name", "age", "color", "size"],
}


def answer(lines: list[str]) -> tuple[dict[str, Any], str]:
    out = io.StringIO()
    result = ask_form("Tell me", FORM, io.StringIO("".join(f"{x}\n" for x in lines)), out)
    return result, out.getvalue()


def test_a_form_is_asked_field_by_field_validated_and_asked_again() -> None:
    result, shown = answer(["", "A", "Ada", "", "-1", "x", "36", "3", "green", "1", "", "2,1", ""])
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "age": 36,
            "color": "green",
            "size": "s",
            "news": False,
            "pets": ["dog", "cat"],
        },
    }
    assert "The server asks: Tell me" in shown
    assert "Your name (string)" in shown
    assert "an answer is required" in shown
    assert "1. Small" in shown
    assert "expected an integer" in shown


def test_decline_cancel_and_end_of_input() -> None:
    assert answer(["n"])[0] == {"action": "decline"}
    assert answer(["c"])[0] == {"action": "cancel"}
    assert answer(["y", "Ada"])[0] == {"action": "cancel"}  # input ends mid-form


def test_call_on_a_terminal_asks_the_person() -> None:
    """The real command with its stdin on a pseudo-terminal answers the demo's
    elicitation from what is typed there."""
    demo = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [*MCPKIT, "call", demo, "test_elicitation", "message=Who?", "--connect-timeout", "60"],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=secondary,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(secondary)
    seen = b""
    # Each answer is typed once its prompt is on the terminal.
    script = [
        (b"[c]ancel: ", b"y\n"),
        (b"username (", b"ada\n"),
        (b"email (", b"ada@example.com\n"),
    ]
    deadline = time.monotonic() + 120
    try:
        while process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(primary, 4096)
                except OSError:
                    break
            if script and script[0][0] in seen:
                os.write(primary, script.pop(0)[1])
        stdout, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(primary)
    assert process.returncode == 0, seen.decode(errors="replace")
    assert b"The server asks: Who?" in seen
    assert b"action=accept" in stdout
    assert b"ada" in stdout
