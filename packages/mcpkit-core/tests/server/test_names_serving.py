"""When the name rules run relative to serving (:mod:`mcpkit.server.names` rules 4, 9,
10; issue 26 review): after the lifespans are entered, so a tool a lifespan registers
counts; on declaration once serving (a live ``mount()``, an extension's rule store);
and a tool listing task support the server does not offer."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest

from mcpkit.client import Client
from mcpkit.server import Server
from mcpkit.server.names import (
    NamedRule,
    NameRuleError,
    TaskSupportError,
    check_declared,
    check_names,
    declare_rules,
)

pytestmark = pytest.mark.anyio


def echo(text: str) -> str:
    return text


def guard(name: str) -> NamedRule:
    return NamedRule("tool", name, f"guard(tool={name!r})", protects=True)


def plugin_server() -> Server:
    """A server whose lifespan registers the tool a protecting rule names."""
    server = Server("plugins")

    @asynccontextmanager
    async def plugins(srv: Server) -> AsyncGenerator[None]:
        srv.add_tool(lambda: "reset", name="admin_reset")
        yield

    server.add_lifespan(plugins)
    declare_rules(server, lambda: [guard("admin_reset")])
    return server


async def test_a_tool_a_lifespan_registers_satisfies_a_rule() -> None:
    server = plugin_server()
    server.http_app()  # built before the lifespans: the check waits for them
    async with Client(server) as client:
        assert [t.name for t in await client.list_tools()] == ["admin_reset"]


async def test_a_rule_naming_nothing_still_refuses_once_the_lifespans_are_entered() -> None:
    server = plugin_server()
    declare_rules(server, lambda: [guard("admin_rest")])
    server.http_app()
    with pytest.raises(NameRuleError, match="closest registered tool: 'admin_reset'"):
        async with Client(server):
            pass
    with pytest.raises(NameRuleError):
        async with server.lifespan():
            pass


async def test_a_rule_declared_while_serving_is_checked_on_declaration() -> None:
    server = Server("live")
    server.add_tool(echo, name="save_note")
    rules: list[NamedRule] = []
    declare_rules(server, lambda: rules)
    check_declared(server)  # not serving: start-up checks it
    async with server.lifespan():
        rules.append(guard("sav_note"))
        with pytest.raises(NameRuleError, match="closest registered tool: 'save_note'"):
            check_declared(server)
    check_declared(server)  # no longer serving: the next start-up checks it


async def test_a_live_mount_of_a_server_with_a_typo_rule_is_refused() -> None:
    outer = Server("outer")
    outer.add_tool(lambda: "x", name="hello")
    inner = Server("inner")
    inner.add_tool(echo, name="save_note")
    declare_rules(inner, lambda: [guard("sav_note")])
    async with outer.lifespan():
        with pytest.raises(NameRuleError, match="'sav_note'"):
            outer.mount(inner, "notes")
    assert outer.tools.keys() == {"hello"}
    async with Client(outer) as client:
        assert [t.name for t in await client.list_tools()] == ["hello"]


def task_server(support: str) -> Server:
    server = Server("tasks")

    @server.tool(execution={"taskSupport": support})
    def slow(x: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return x

    return server


async def test_a_tool_requiring_tasks_the_server_does_not_offer_refuses_start_up() -> None:
    server = task_server("required")
    with pytest.raises(TaskSupportError, match=r"tool 'slow' declares execution.taskSupport="):
        server.http_app()
    with pytest.raises(TaskSupportError, match="install the tasks extension"):
        async with Client(server):
            pass


async def test_optional_task_support_not_offered_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = task_server("optional")
    for _ in range(2):
        async with Client(server) as client:
            await client.list_tools()
    warned = [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcpkit.server" and r.levelno == logging.WARNING
    ]
    assert len([m for m in warned if "taskSupport='optional'" in m]) == 1


def test_task_support_is_fine_when_the_server_advertises_tasks() -> None:
    server = task_server("required")
    server.add_capability("tasks", {"requests": {"tools": {"call": {}}}})
    check_names(server)
    task_server("forbidden").http_app()


def test_the_task_support_message_in_server_md_is_the_one_raised() -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
    [sample] = re.findall(r"`(tool 'slow' declares execution\.taskSupport[^`]+)`", doc)
    with pytest.raises(TaskSupportError) as refused:
        check_names(task_server("required"))
    assert str(refused.value) == sample
