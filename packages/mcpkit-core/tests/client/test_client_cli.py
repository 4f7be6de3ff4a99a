"""``mcpkit ls`` and ``mcpkit call`` against a spawned ``mcpkit demo`` (stdio)."""

from __future__ import annotations

import os
import subprocess
import sys

DEMO = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_ls_prints_identity_and_tables_of_tools_prompts_and_resources() -> None:
    out = mcpkit("ls", DEMO)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("mcpkit-demo 0.1.0  (protocol 2026-07-28, modern era)")
    for title in ("Tools (", "Prompts (", "Resources (", "Resource templates ("):
        assert any(line.startswith(title) for line in lines), title
    add_row = next(line for line in lines if line.startswith("add "))
    assert "a, b" in add_row
    assert "Add two numbers." in add_row


def test_ls_pinned_to_the_handshake_era() -> None:
    out = mcpkit("ls", DEMO, "--mode", "legacy")
    assert out.returncode == 0, out.stderr
    assert "(protocol 2025-11-25, legacy era)" in out.stdout.splitlines()[0]


def test_call_prints_content_and_exit_status_follows_is_error() -> None:
    ok = mcpkit("call", DEMO, "echo", '{"text": "hello cli"}')
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "hello cli"
    failed = mcpkit("call", DEMO, "test_error_handling")
    assert failed.returncode == 1
    assert "reported an error" in failed.stderr
    raw = mcpkit("call", DEMO, "echo", '{"text": "x"}', "--json")
    assert '"type": "text"' in raw.stdout


def test_call_rejects_bad_json_args_and_unknown_tools_with_status_2() -> None:
    bad = mcpkit("call", DEMO, "echo", "{nope")
    assert bad.returncode == 2
    assert "json-args is not JSON" in bad.stderr
    unknown = mcpkit("call", DEMO, "no_such_tool")
    assert unknown.returncode == 2
    assert "-32602" in unknown.stderr
