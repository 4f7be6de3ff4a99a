"""``mcpkit ls``, ``call``, ``read`` and ``prompt`` against a real ``mcpkit demo``.

One HTTP demo serves the module (each command is then one process); the first two tests
spawn the demo over stdio, as a user pointing ``ls`` at a command line would.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import CONNECT, DEMO, DemoProcess, demo_process, mcpkit


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoProcess]:
    with demo_process() as process:
        yield process


def test_ls_over_stdio_prints_identity_and_tables_of_tools_prompts_and_resources() -> None:
    out = mcpkit("ls", DEMO, *CONNECT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("mcpkit-demo 0.1.0  (protocol 2026-07-28, modern era)")
    for title in ("Tools (", "Prompts (", "Resources (", "Resource templates ("):
        assert any(line.startswith(title) for line in lines), title
    add_row = next(line for line in lines if line.startswith("add "))
    assert "a, b" in add_row
    assert "Add two numbers." in add_row


def test_call_over_stdio_pinned_to_the_handshake_era() -> None:
    out = mcpkit("call", DEMO, "echo", "text=hello cli", "--mode", "legacy", *CONNECT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "hello cli\n"


def test_call_prints_a_structured_result_once(demo: DemoProcess) -> None:
    # The tool sends the JSON twice (text block + structuredContent); it is printed once.
    out = mcpkit("call", demo.url, "weather", "city=Paris", *CONNECT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"city": "Paris", "temperature_c": 18.5, "conditions": "sunny"}
    assert out.stdout.count("Paris") == 1


def test_call_key_value_arguments_are_typed_by_the_input_schema(demo: DemoProcess) -> None:
    out = mcpkit("call", demo.url, "add", "a=1", "b=2.5", *CONNECT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"result": 3.5}
    same = mcpkit("call", demo.url, "add", '{"a": 1, "b": 2.5}', *CONNECT)
    assert same.stdout == out.stdout
    bad = mcpkit("call", demo.url, "add", "a=one", "b=2", *CONNECT)
    assert bad.returncode == 2
    assert "a: expected a number" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_call_json_prints_the_raw_result_and_exit_status_follows_is_error(
    demo: DemoProcess,
) -> None:
    raw = mcpkit("call", demo.url, "echo", "text=x", "--json", *CONNECT)
    assert raw.returncode == 0, raw.stderr
    assert json.loads(raw.stdout)["content"] == [{"type": "text", "text": "x"}]
    failed = mcpkit("call", demo.url, "test_error_handling", *CONNECT)
    assert failed.returncode == 1
    assert "reported an error" in failed.stderr


def test_call_rejects_bad_json_and_unknown_tools_with_status_2(demo: DemoProcess) -> None:
    bad = mcpkit("call", demo.url, "echo", "{nope", *CONNECT)
    assert bad.returncode == 2
    assert "arguments are not JSON" in bad.stderr
    unknown = mcpkit("call", demo.url, "no_such_tool", *CONNECT)
    assert unknown.returncode == 2
    assert "-32602" in unknown.stderr


def test_call_shows_progress_and_log_notifications_on_stderr(demo: DemoProcess) -> None:
    progress = mcpkit("call", demo.url, "test_tool_with_progress", *CONNECT)
    assert progress.returncode == 0, progress.stderr
    assert progress.stderr.splitlines()[:3] == [
        "progress 0/100",
        "progress 50/100",
        "progress 100/100",
    ]
    assert "progress 0/100" not in progress.stdout
    logs = mcpkit("call", demo.url, "test_tool_with_logging", *CONNECT)
    assert logs.returncode == 0, logs.stderr
    assert "[info] Tool execution started" in logs.stderr
    assert "Tool execution started" not in logs.stdout
    quiet = mcpkit("call", demo.url, "test_tool_with_logging", "--log-level", "error", *CONNECT)
    assert "Tool execution started" not in quiet.stderr


def test_call_without_a_terminal_cancels_elicitation_with_a_message(demo: DemoProcess) -> None:
    out = mcpkit("call", demo.url, "test_elicitation", "message=Who are you?", *CONNECT)
    assert out.returncode == 0, out.stderr
    assert "stdin is not a terminal; answered 'cancel'" in out.stderr
    assert "action=cancel" in out.stdout


def test_read_and_prompt(demo: DemoProcess) -> None:
    readme = mcpkit("read", demo.url, "demo://readme", *CONNECT)
    assert readme.returncode == 0, readme.stderr
    assert readme.stdout.startswith("# mcpkit demo")
    greeting = mcpkit("read", demo.url, "demo://greeting/Ada", "--json", *CONNECT)
    assert greeting.returncode == 0, greeting.stderr
    assert "Ada" in json.loads(greeting.stdout)["contents"][0]["text"]
    prompt = mcpkit("prompt", demo.url, "summarize", "text=MCP is a protocol.", *CONNECT)
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout.splitlines()[:2] == [
        "# Ask the model to summarize a text.",
        "user: Summarize the following text in a concise style:",
    ]
    assert "MCP is a protocol." in prompt.stdout
    missing = mcpkit("read", demo.url, "demo://nothing-here", *CONNECT)
    assert missing.returncode == 2
    assert "server error" in missing.stderr


def test_ls_lists_a_server_with_a_resource_template_and_no_static_resource(
    tmp_path: Path,
) -> None:
    # The README's notes server: resources capability, one template, no static resource.
    # `ls` used to die on the empty Resources table (max() of one int: TypeError).
    (tmp_path / "notes.py").write_text(
        "from mcpkit.server import Server\n"
        "server = Server('notes', '1.0.0')\n"
        "@server.resource('notes://{title}', mime_type='text/plain')\n"
        "def read_note(title: str) -> str:\n"
        "    return title\n"
    )
    target = f"{sys.executable} -m mcpkit.cli.main run {tmp_path / 'notes.py'}"
    out = mcpkit("ls", target, *CONNECT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("notes 1.0.0")
    assert "Resources (0)" in lines
    assert "URI  NAME  MIME TYPE" not in out.stdout  # no headers over no rows
    assert any(line.startswith("notes://{title}") for line in lines)


def test_ls_shows_each_extension_with_its_settings_version_and_stability(
    tmp_path: Path,
) -> None:
    # The settings object is the extension's own; version and stability come from the
    # result's _meta["io.mcpkit/extensions"] (issue 25 §10), on both eras.
    (tmp_path / "exts.py").write_text(
        "from mcpkit.core import Extension, Stability\n"
        "from mcpkit.server import Server\n"
        "server = Server('exts', '1.0.0', extensions=[\n"
        "    Extension('com.example/search', '2026-01-15', Stability.EXPERIMENTAL,\n"
        "              {'maxResults': 5}),\n"
        "    Extension('com.example/plain', stability=Stability.UNSPECIFIED),\n"
        "])\n"
    )
    target = f"{sys.executable} -m mcpkit.cli.main run {tmp_path / 'exts.py'}"
    for mode in ("legacy", "modern"):
        out = mcpkit("ls", target, "--mode", mode, *CONNECT)
        assert out.returncode == 0, out.stderr
        rows = [line.split() for line in out.stdout.splitlines()]
        assert ["Extensions", "(2)"] in rows, out.stdout
        assert ["com.example/search", "2026-01-15", "experimental", '{"maxResults":', "5}"] in rows
        assert ["com.example/plain", "{}"] in rows
