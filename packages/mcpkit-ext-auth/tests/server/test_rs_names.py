"""A scope rule naming nothing registered refuses start-up (scopes rule 5; issue 26
"a name-keyed rule naming nothing"): ``auth.require(tool="sav_note")`` used to leave
``save_note`` callable with ``notes:read`` only, silently."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.ext.auth.server import AuthSettings, StaticTokenValidator, protect
from mcpkit.ext.auth.server.protect import Auth
from mcpkit.server import Server
from mcpkit.server.names import NameRuleError, check_names, late_bound_rules

pytestmark = pytest.mark.anyio


def notes() -> tuple[Server, Auth]:
    server = Server("notes")

    @server.tool()
    def save_note(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    @server.prompt()
    def summary() -> str:  # pyright: ignore[reportUnusedFunction]
        return "sum"

    @server.resource("notes://all")
    def everything() -> str:  # pyright: ignore[reportUnusedFunction]
        return "all"

    @server.resource("notes://by-title/{title}")
    def one(title: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return title

    auth = protect(
        server,
        # kind-ok: fixed-port a resource (audience), never connected
        AuthSettings(server_url="http://127.0.0.1:1/mcp", required_scopes=["notes:read"]),
        validator=StaticTokenValidator({}),
    )
    return server, auth


def test_the_issue_example_refuses_the_http_app_with_one_line() -> None:
    server, auth = notes()
    auth.require(tool="sav_note", all_of=["notes:write"])
    with pytest.raises(NameRuleError) as caught:
        server.http_app()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("auth.require(tool='sav_note', all_of=['notes:write']) (")
    assert "test_rs_names.py:" in message  # where the rule was declared
    assert "protects tool 'sav_note', but no tool of that name is registered" in message
    assert "closest registered tool: 'save_note'" in message
    assert "late_bound=True" in message


async def test_the_issue_example_refuses_to_serve_in_memory() -> None:
    server, auth = notes()
    auth.require(tool="sav_note", all_of=["notes:write"])
    with pytest.raises(NameRuleError, match="'save_note'"):
        async with Client(server):
            pass


@pytest.mark.parametrize(
    ("target", "closest"),
    [
        ({"prompt": "sumary"}, "'summary'"),
        ({"resource": "notes://al"}, "'notes://all'"),
        ({"method": "tools/cal"}, "'tools/call'"),
    ],
)
def test_every_kind_of_scope_rule_is_checked(target: dict[str, Any], closest: str) -> None:
    server, auth = notes()
    auth.require(**target, all_of=["x"])
    with pytest.raises(NameRuleError, match=closest):
        check_names(server)


def test_rules_naming_registered_items_start() -> None:
    server, auth = notes()
    auth.require(tool="save_note", all_of=["notes:write"])
    auth.require(prompt="summary", all_of=["x"])
    auth.require(resource="notes://all", all_of=["x"])
    auth.require(resource="notes://by-title/secret", all_of=["x"])  # a template serves it
    auth.require(resource="notes://by-title/{name}", all_of=["x"])  # other variable name
    auth.require(method="resources/list", all_of=["x"])
    server.http_app()


def test_a_uri_template_rule_covering_nothing_warns_but_starts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, auth = notes()
    auth.require(resource="files://{path}", all_of=["x"])
    server.http_app()
    assert any("'files://{path}'" in r.getMessage() for r in caplog.records)


async def test_a_late_bound_rule_starts_and_protects_the_tool_added_later() -> None:
    server, auth = notes()
    auth.require(tool="export", all_of=["notes:export"], late_bound=True)
    server.http_app()
    async with Client(server) as client:
        assert [t.name for t in await client.list_tools()] == ["save_note"]
    assert [(r.kind, r.name) for r in late_bound_rules(server)] == [("tool", "export")]
    assert auth.policy.requirements_for("tools/call", "tools", "export")[-1].all_of == (
        "notes:export",
    )


@pytest.mark.parametrize(("name", "refused"), [("forecast", True), ("weather_forecast", False)])
def test_a_parent_rule_names_a_mounted_tool_by_its_mounted_name(name: str, refused: bool) -> None:
    parent, auth = notes()
    child = Server("weather")

    @child.tool()
    def forecast() -> str:  # pyright: ignore[reportUnusedFunction]
        return "sun"

    parent.mount(child, "weather")
    auth.require(tool=name, all_of=["weather"])
    if refused:
        with pytest.raises(NameRuleError, match="closest registered tool: 'weather_forecast'"):
            parent.http_app()
    else:
        parent.http_app()


def test_inspect_lists_a_late_bound_scope_rule() -> None:
    from mcpkit.cli.offline import describe, render

    server, auth = notes()
    auth.require(tool="export", all_of=["notes:export"], late_bound=True)
    [rule] = describe(server)["lateBoundRules"]
    assert rule["source"] == "auth.require(tool='export', all_of=['notes:export'])"
    assert rule["where"].startswith(__file__.removesuffix("c"))
    assert "Late-bound rules (1)" in render(describe(server))


def test_the_message_documented_in_server_md_is_the_one_printed() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[4] / "docs" / "server.md"
    [sample] = re.findall(r"`(auth\.require\(tool='sav_note'[^`]+)`", doc.read_text("utf-8"))
    server, auth = notes()
    auth.require(tool="sav_note", all_of=["notes:write"])
    with pytest.raises(NameRuleError) as caught:
        check_names(server)
    assert re.sub(r" \(/[^)]+\.py:\d+\)", " (app.py:14)", str(caught.value)) == sample


async def test_a_rule_declared_while_serving_is_checked_at_once() -> None:
    """Reviewer fault 8 of issue 26: ``auth.require(tool="sav_note")`` inside a running
    server was accepted silently; now it raises where it is written, and a refused rule
    does not make later declarations fail."""
    server, auth = notes()
    auth.require(tool="later", all_of=["w"], late_bound=True)  # before serving: fine
    async with server.lifespan():
        with pytest.raises(NameRuleError, match="closest registered tool: 'save_note'"):
            auth.require(tool="sav_nte", all_of=["notes:write"])
        auth.require(tool="save_note", all_of=["notes:write"])  # a real name: accepted
        auth.require(tool="export", all_of=["x"], late_bound=True)
