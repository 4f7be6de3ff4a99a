"""``mcpkit inspect`` shows a protected server's scope rules (issue 26: it showed none),
through core's inspect sources (``protect()`` registers one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpkit.cli.main import main

APP = """
from mcpkit.server import Server
from mcpkit.ext.auth.server import AuthSettings, StaticTokenValidator, protect

server = Server("notes")
auth = protect(
    server,
    AuthSettings(
        server_url="https://notes.example/mcp",
        authorization_servers=["https://as.example"],
        required_scopes=["notes:read"],
    ),
    validator=StaticTokenValidator({}),
)
auth.require(tool="save_note", all_of=["notes:write"])
auth.require(method="resources/read", any_of=["files:read", "files:all"])


@server.tool()
def save_note(text: str) -> str:
    return text
"""


def inspect(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["inspect", *argv])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_inspect_lists_the_scope_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "notes_app.py"
    app.write_text(APP)
    out = inspect(capsys, str(app))
    assert out.split("\nScope rules (3)\n")[1] == (  # the rules, not "protected by"
        "  protected by           https://as.example\n"
        "  every request          all of notes:read\n"
        "  method resources/read  one of files:read, files:all\n"
        "  tool save_note         all of notes:write\n"
    )
    rules = json.loads(inspect(capsys, str(app), "--json"))["sections"]["io.mcpkit/auth"]
    assert rules["authorizationServers"] == ["https://as.example"]
    assert {
        "kind": "tool",
        "key": "save_note",
        "allOf": ["notes:write"],
        "anyOf": [],
        "source": "auth.require(tool='save_note', all_of=['notes:write'])",
    } in rules["rules"]


def test_inspect_shows_a_rule_run_refuses_as_an_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reviewer fault 14: a typo rule that ``mcpkit run`` refuses was a plain
    ``warning:`` and inspect exited 0; a decorator rule whose tool was removed is
    neither (reviewer fault 5)."""
    app = tmp_path / "typo_app.py"
    app.write_text(
        APP
        + "auth.require(tool='sav_note', all_of=['notes:admin'])\n"
        + "@server.tool(all_of_scopes=['admin'])\n"
        + "def purge() -> str:\n    return 'x'\n"
        + "server.remove_tool('purge')\n"
    )
    with pytest.raises(SystemExit) as exited:
        main(["inspect", str(app)])
    out = capsys.readouterr().out
    assert exited.value.code == 1
    assert "\nScope rules (5)\n" in out
    line = APP.count("\n") + 1
    tail = out.split("\n\n")[-1].splitlines()
    assert tail == [
        f"error: auth.require(tool='sav_note', all_of=['notes:admin']) ({app}:{line}) protects "
        "tool 'sav_note', but no tool of that name is registered (closest registered tool: "
        "'save_note'); fix the name, or pass late_bound=True to auth.require() if the tool "
        "is added at run time"
    ], out
