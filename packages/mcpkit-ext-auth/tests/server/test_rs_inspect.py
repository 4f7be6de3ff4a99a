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
    assert out.split("\nScope rules (4)\n")[1] == (
        "  protected by           https://as.example\n"
        "  every request          all of notes:read\n"
        "  method resources/read  one of files:read, files:all\n"
        "  tool save_note         all of notes:write\n"
    )
    rules = json.loads(inspect(capsys, str(app), "--json"))["sections"]["io.mcpkit/auth"]
    assert rules["authorizationServers"] == ["https://as.example"]
    assert {"kind": "tool", "key": "save_note", "allOf": ["notes:write"], "anyOf": []} in (
        rules["rules"]
    )
