"""``mcpkit inspect`` shows what extensions add, through core's inspect sources.

Core never imports an extension: each registers ``add_inspect_source(server, fn)``
(:mod:`mcpkit.server.inspection`). Here a stand-in extension written in the test file
registers one, and another whose source raises; the real extensions' sections are
tested in their own packages (scope rules, task support, app views).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from cli_helpers import in_process

from mcpkit.server import Server
from mcpkit.server.inspection import InspectSection, add_inspect_source, inspect_sections

APP = """
from mcpkit.server import Server
from mcpkit.server.inspection import InspectSection, add_inspect_source

server = Server("quota-demo")


@server.tool()
def search(q: str) -> str:
    return q


def quotas(server):
    return InspectSection(
        "io.example/quota",
        "Quotas",
        rows=[("tool search", "10 per minute")],
        warnings=["tool 'serch' has a quota but is not registered"],
    )


def broken(server):
    raise RuntimeError("cannot describe")


add_inspect_source(server, quotas)
add_inspect_source(server, quotas)  # once only
add_inspect_source(server, broken)
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "quota_app.py"
    path.write_text(textwrap.dedent(APP))
    return path


def test_inspect_shows_an_extensions_section_and_its_warnings(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "inspect", str(app))
    assert code == 0, err
    assert "\nQuotas (1)\n  tool search  10 per minute\n" in out
    assert out.count("Quotas (1)") == 1
    assert "warning: tool 'serch' has a quota but is not registered" in out
    assert "warning: quota_app.broken failed to describe the server: RuntimeError: cannot" in out


def test_inspect_json_holds_each_section_under_its_key(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = in_process(capsys, "inspect", str(app), "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["sections"]["io.example/quota"] == [["tool search", "10 per minute"]]
    assert summary["warnings"][0] == "tool 'serch' has a quota but is not registered"
    assert len(summary["warnings"]) == 2


def test_a_server_without_sources_has_none_and_sources_are_per_server() -> None:
    plain, other = Server("plain"), Server("other")
    add_inspect_source(other, lambda s: InspectSection("k", "T", rows=[("a", s.info["name"])]))
    assert inspect_sections(plain) == []
    assert [s.rows for s in inspect_sections(other)] == [[("a", "other")]]


NAMES_APP = """
from mcpkit.server import Server
from mcpkit.server.names import NamedRule, declare_rules

server = Server("typos")


@server.prompt()
def summary(text: str) -> str:
    return text


@server.completion(prompt="sumary")
def complete(argument, context=None):
    return []


declare_rules(
    server, lambda: [NamedRule("tool", "sav_note", "guard(tool='sav_note')", protects=True)]
)
"""


def test_inspect_warns_about_every_rule_that_names_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: `inspect` said nothing of a rule naming nothing, which `run` refuses or
    warns about; now each is shown with run's message: a rule run refuses as an
    ``error:`` line, with exit status 1 (reviewer fault 14: it was a plain warning and
    status 0), the others as ``warning:`` lines; the whole server is still described."""
    path = tmp_path / "typos_app.py"
    path.write_text(textwrap.dedent(NAMES_APP))
    code, out, err = in_process(capsys, "inspect", str(path))
    assert code == 1, err
    assert "Prompts (1)" in out
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, out
    assert errors[0].startswith("error: guard(tool='sav_note') protects tool 'sav_note'"), out
    lines = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 1, out
    assert "@server.completion(prompt='sumary')" in lines[0], out
    assert "closest registered prompt: 'summary'" in lines[0], out
    code, out, _ = in_process(capsys, "inspect", str(path), "--json")
    assert code == 1
    summary = json.loads(out)
    assert len(summary["warnings"]) == 1
    assert summary["errors"][0].startswith("guard(tool='sav_note') protects tool 'sav_note'")
