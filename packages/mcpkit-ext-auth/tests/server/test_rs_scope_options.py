"""Scope rules on the decorator (issue 26, protect.py rule 6, scopes.py rule 5):
``@server.tool(all_of_scopes=[...])`` and its kin make the same rule as
``auth.require(...)``, refused with HTTP 403 like it; a bad value or a decorator run
before ``protect()`` fails at registration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rs_helpers import DevIssuer, challenges, modern_call, modern_headers

from mcpkit.ext.auth.server import AuthSettings, protect
from mcpkit.ext.auth.server.scopes import Requirement
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

SETTINGS = AuthSettings(
    server_url="https://mcp.example.com/mcp",
    authorization_servers=["https://login.example.com"],
    jwks_url="https://login.example.com/jwks",
)

STARTUP_TABLE = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" rows quote these messages."""


def save_note(text: str) -> str:
    return "saved " + text


def register(server: Server) -> None:
    server.tool(all_of_scopes=["notes:write"])(save_note)

    @server.prompt(any_of_scopes=["prompts", "admin"])
    def review(title: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return "review " + title

    @server.resource("notes://{title}", all_of_scopes=["notes:read"], mime_type="text/plain")
    def note(title: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return "note " + title


async def post(site: Any, token: str, method: str, params: dict[str, Any], name: str) -> Any:
    return await site.client.post(
        site.url, json=modern_call(5, method, params), headers=modern_headers(method, name, token)
    )


async def test_decorator_scope_rules_refuse_like_require(protected: Any, issuer: DevIssuer) -> None:
    async with protected(register=register) as site:
        reader = issuer.mint(aud=site.url, scope="mcp notes:read")
        call = {"name": "save_note", "arguments": {"text": "x"}}
        r = await post(site, reader, "tools/call", call, "save_note")
        assert r.status_code == 403, r.text
        assert challenges(r)[0][1]["scope"] == "mcp notes:write"
        writer = issuer.mint(aud=site.url, scope="mcp notes:write")
        r = await post(site, writer, "tools/call", call, "save_note")
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "saved x"
        r = await post(site, writer, "resources/read", {"uri": "notes://a"}, "notes://a")
        assert challenges(r)[0][1]["scope"] == "mcp notes:read"
        get = {"name": "review", "arguments": {"title": "t"}}
        r = await post(site, writer, "prompts/get", get, "review")
        assert challenges(r)[0][1]["scope"] == "mcp prompts"
        r = await post(
            site, issuer.mint(aud=site.url, scope="mcp admin"), "prompts/get", get, "review"
        )
        assert r.status_code == 200, r.text


def test_both_styles_make_the_same_rule() -> None:
    by_option, by_require = Server("a"), Server("b")
    auth_a = protect(by_option, SETTINGS)
    auth_b = protect(by_require, SETTINGS)
    by_option.add_tool(save_note, all_of_scopes=["w"], any_of_scopes=["x", "y"])
    by_require.add_tool(save_note)
    auth_b.require(tool="save_note", all_of=["w"], any_of=["x", "y"])
    rule = Requirement(("w",), ("x", "y"))
    assert auth_a.policy.requirements_for("tools/call", "tools", "save_note") == [rule]
    assert auth_b.policy.requirements_for("tools/call", "tools", "save_note") == [rule]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("notes:write", r"give a list of scope strings \(did you mean \['notes:write'\]\?\)"),
        (["notes write"], r"'notes write' is not a scope"),
        ([], r"give at least one scope"),
    ],
)
def test_a_bad_scope_value_names_the_tool_and_registers_nothing(value: Any, message: str) -> None:
    server = Server("s")
    auth = protect(server, SETTINGS)
    with pytest.raises(ValueError, match=rf"^tool 'save_note': all_of_scopes=.*{message}") as bad:
        server.tool(all_of_scopes=value)(save_note)
    if isinstance(value, str):
        assert f"`ValueError: {bad.value}`" in STARTUP_TABLE
    assert not server.tools
    assert auth.policy.requirements_for("tools/call", "tools", "save_note") == []


def test_scope_options_before_protect_or_misspelt_say_what_to_do() -> None:
    server = Server("s")
    options: dict[str, Any] = {"all_of_scopes": ["w"]}
    with pytest.raises(TypeError, match=r"unknown option 'all_of_scopes'.*installed on the server"):
        server.tool(**options)(save_note)
    protect(server, SETTINGS)
    with pytest.raises(
        TypeError,
        match=r"unknown option 'all_of_scope' \(did you mean 'all_of_scopes'\?\).*"
        r"any_of_scopes \(mcpkit-ext-auth \(protect\(\)\)\)",
    ):
        server.tool(all_of_scope=["w"])(save_note)
    assert not server.tools
