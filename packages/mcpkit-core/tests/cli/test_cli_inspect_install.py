"""``mcpkit inspect`` (offline) and ``mcpkit install`` (with a temporary HOME)."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path

import pytest
from cli_helpers import in_process

NOTES = '''
from dataclasses import dataclass

from mcpkit.core.extensions import Extension
from mcpkit.server import Context, Server

mcp = Server(
    "notes",
    "1.2.0",
    instructions="Keeps notes.",
    extensions=[Extension("io.example/pins", spec_version="2026-01-01")],
)
print("importing notes")  # must not reach stdout


@dataclass
class Saved:
    id: int
    title: str


@mcp.tool()
def save_note(title: str, body: str, ctx: Context, pinned: bool = False) -> Saved:
    """Save a note.

    Second line."""
    return Saved(1, title)


@mcp.prompt()
def review(text: str) -> str:
    """Review a text."""
    return text


@mcp.resource("notes://all", mime_type="application/json")
def all_notes() -> str:
    """Every note."""
    return "[]"


@mcp.resource("notes://{id}")
def one(id: str) -> str:
    """One note."""
    return id
'''


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    name = f"notes_{tmp_path.name.replace('-', '_')}.py"
    path = tmp_path / "project" / name
    path.parent.mkdir()
    path.write_text(textwrap.dedent(NOTES))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(path.parent)
    return path


def test_inspect_prints_typed_signatures_and_everything_offered(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "inspect", str(notes))
    assert code == 0, err
    assert out.splitlines()[:2] == ["notes 1.2.0", "Keeps notes."]
    assert "save_note(title: str, body: str, pinned: bool = False) -> Saved  Save a note." in out
    assert "Second line" not in out
    assert "review(text: str) -> str  Review a text." in out
    assert "notes://all  application/json Every note." in out
    assert "notes://{id}  One note." in out
    assert "io.example/pins  specVersion 2026-01-01" in out
    assert "importing notes" in err  # the module's print went to stderr


def test_inspect_json_holds_the_wire_definitions(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = in_process(capsys, "inspect", f"{notes}:mcp", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["server"] == {"name": "notes", "version": "1.2.0"}
    tool = data["tools"][0]
    assert tool["name"] == "save_note"
    assert tool["signature"].startswith("save_note(title: str")
    assert tool["inputSchema"]["required"] == ["title", "body"]
    assert data["prompts"][0]["arguments"][0]["name"] == "text"
    assert data["resources"][0]["uri"] == "notes://all"
    assert data["resourceTemplates"][0]["uriTemplate"] == "notes://{id}"
    assert data["extensions"] == {"io.example/pins": {}}  # the settings object, untouched
    pins = {"specVersion": "2026-01-01", "stability": "stable"}
    assert data["_meta"] == {"io.mcpkit/extensions": {"io.example/pins": pins}}


def test_inspect_reports_a_broken_target_like_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, "inspect", str(tmp_path / "nothing.py"))
    assert code == 2
    assert err.startswith("mcpkit inspect: no such file:")


def _entry(notes: Path) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["-m", "mcpkit.cli.main", "run", str(notes)],
    }


def test_install_cursor_merges_and_refuses_to_overwrite_without_force(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = Path.home() / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    code, _, err = in_process(capsys, "install", "cursor", str(notes))
    assert code == 0, err
    data = json.loads(config.read_text())
    assert data == {
        "mcpServers": {"other": {"command": "x"}, "notes": _entry(notes)},
        "theme": "dark",
    }
    before = config.read_text()
    code, _, err = in_process(capsys, "install", "cursor", str(notes), "--env", "A=1")
    assert code == 2
    assert "already has a server named 'notes'; --force replaces it" in err
    assert config.read_text() == before
    code, _, err = in_process(capsys, "install", "cursor", str(notes), "--env", "A=1", "--force")
    assert code == 0, err
    assert "replaced 'notes'" in err
    assert json.loads(config.read_text())["mcpServers"]["notes"]["env"] == {"A": "1"}
    assert json.loads(config.read_text())["mcpServers"]["other"] == {"command": "x"}


def test_install_claude_desktop_creates_the_file_under_home(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, "install", "claude-desktop", f"{notes}:mcp", "--name", "n")
    assert code == 0, err
    expected = (
        Path.home() / "Library/Application Support/Claude"
        if sys.platform == "darwin"
        else Path.home() / ".config/Claude"
    ) / "claude_desktop_config.json"
    entry = json.loads(expected.read_text())["mcpServers"]["n"]
    assert entry["args"][-1] == f"{notes}:mcp"
    assert Path(entry["command"]).is_absolute()


def test_install_refuses_a_config_that_is_not_an_object(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = notes.parent / "odd.json"
    config.write_text("[1, 2]")
    code, _, err = in_process(capsys, "install", "mcp-json", str(notes), "--config", str(config))
    assert code == 2
    assert "does not hold a JSON object; not touching it" in err
    assert config.read_text() == "[1, 2]"


def test_install_claude_code_writes_mcp_json_or_prints_the_claude_command(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "install", "claude-code", str(notes), "--print")
    assert code == 0, err
    words = shlex.split(out)
    assert words[:6] == ["claude", "mcp", "add", "--scope", "project", "notes"]
    assert words[6:] == ["--", sys.executable, "-m", "mcpkit.cli.main", "run", str(notes)]
    assert not (notes.parent / ".mcp.json").exists()
    code, _, err = in_process(capsys, "install", "claude-code", str(notes))
    assert code == 0, err
    written = json.loads((notes.parent / ".mcp.json").read_text())
    assert written == {"mcpServers": {"notes": {"type": "stdio", **_entry(notes)}}}


def test_install_mcp_json_prints_a_module_target_with_pythonpath(
    notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "install", "mcp-json", notes.stem)
    assert code == 0, err
    entry = json.loads(out)["mcpServers"]["notes"]
    assert entry["args"] == ["-m", "mcpkit.cli.main", "run", notes.stem]
    assert entry["env"] == {"PYTHONPATH": str(notes.parent)}


def test_inspect_shows_annotated_parameters_as_their_type_and_field_defaults_as_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The README's style (`Annotated[str, Field(description=...)]`) used to print the
    # FieldInfo repr inside the signature.
    path = tmp_path / "annotated_server.py"
    path.write_text(
        textwrap.dedent(
            """
            from typing import Annotated, Literal

            from pydantic import Field

            from mcpkit.server import Server

            server = Server("typed", "1.0.0")


            @server.tool
            def save(
                title: Annotated[str, Field(description="Short title")],
                tags: list[Annotated[str, Field(min_length=1)]],
                mode: Literal["a", "b"] = "a",
                limit: Annotated[int | None, Field(ge=1)] = None,
                size: int = Field(3, ge=1),
                ids: list[int] = Field(default_factory=list),
            ) -> dict[str, int]:
                return {}
            """
        )
    )
    code, out, err = in_process(capsys, "inspect", str(path))
    assert code == 0, err
    assert (
        "save(title: str, tags: list[str], mode: Literal['a', 'b'] = 'a', "
        "limit: int | None = None, size: int = 3, ids: list[int] = ...) -> dict[str, int]"
    ) in out
    assert "FieldInfo" not in out


LATE = """
from mcpkit.server import Server
from mcpkit.server.names import NamedRule, declare_rules

server = Server("late")
declare_rules(
    server,
    lambda: [NamedRule("tool", "export", "guard(tool='export')", protects=True, late_bound=True)],
)
"""


def test_inspect_lists_the_late_bound_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "late_rules.py"
    path.write_text(LATE)
    code, out, err = in_process(capsys, "inspect", str(path))
    assert code == 0, err
    assert "Late-bound rules (1)\n  tool 'export'  guard(tool='export')" in out
    code, out, err = in_process(capsys, "inspect", str(path), "--json")
    assert json.loads(out)["lateBoundRules"] == [
        {
            "kind": "tool",
            "name": "export",
            "source": "guard(tool='export')",
            "where": None,
            "protects": True,
        }
    ]
