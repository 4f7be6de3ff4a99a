"""Rules keyed by a name or URI are checked against what the server registers
(:mod:`mcpkit.server.names`; issue 26 "a name-keyed rule naming nothing")."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcpkit.client import Client
from mcpkit.server import Server
from mcpkit.server.names import (
    NamedRule,
    NameRuleError,
    check_names,
    declare_dynamic,
    declare_names,
    declare_rules,
    late_bound_rules,
    problems,
)

pytestmark = pytest.mark.anyio


def notes() -> Server:
    server = Server("notes")

    @server.tool()
    def save_note(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    @server.prompt()
    def summary(topic: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return topic

    @server.resource("notes://by-title/{title}")
    def one(title: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return title

    return server


def warnings_of(caplog: pytest.LogCaptureFixture, logger: str = "mcpkit.server") -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING
    ]


async def test_a_completion_handler_for_an_unregistered_prompt_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = notes()

    @server.completion(prompt="sumary")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    for _ in range(2):  # each in-memory connection starts serving again
        async with Client(server) as client:
            await client.ping()
    [message] = warnings_of(caplog)
    assert message.startswith("@server.completion(prompt='sumary') names prompt 'sumary'")
    assert "closest registered prompt: 'summary'" in message


def test_a_completion_handler_for_an_unregistered_template_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = notes()

    @server.completion(resource="notes://by-titel/{title}")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    server.http_app()
    [message] = warnings_of(caplog)
    assert "closest registered resource template: 'notes://by-title/{title}'" in message


def test_a_cache_hint_for_a_method_not_served_warns(caplog: pytest.LogCaptureFixture) -> None:
    from mcpkit.server.app import CacheHint

    server = Server("hints", cache_hints={"tools/lst": CacheHint(5_000)})
    server.http_app()
    [message] = warnings_of(caplog)
    assert "Server(cache_hints={'tools/lst': ...})" in message
    assert "closest registered method: 'tools/list'" in message


def test_rules_naming_registered_items_say_nothing(caplog: pytest.LogCaptureFixture) -> None:
    server = notes()

    @server.completion(prompt="summary")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    server.http_app()
    assert problems(server) == []
    assert warnings_of(caplog) == []


def rule(name: str, *, protects: bool = False, late_bound: bool = False) -> NamedRule:
    source = f"guard(tool={name!r})"
    return NamedRule("tool", name, source, protects=protects, late_bound=late_bound)


def test_an_extension_protecting_rule_refuses_start_up_everywhere() -> None:
    server = notes()
    declare_rules(server, lambda: [rule("sav_note", protects=True)])
    with pytest.raises(NameRuleError) as caught:
        server.http_app()
    assert str(caught.value) == (
        "guard(tool='sav_note') protects tool 'sav_note', but no tool of that name is "
        "registered (closest registered tool: 'save_note'); fix the name, or mark the "
        "rule late_bound=True if the tool is added at run time"
    )


async def test_the_refusal_reaches_an_in_memory_client_as_raised() -> None:
    server = notes()
    declare_rules(server, lambda: [rule("sav_note", protects=True)])
    with pytest.raises(NameRuleError, match="'sav_note'"):
        async with Client(server):
            pass


async def test_the_refusal_fails_the_server_lifespan() -> None:
    server = notes()
    declare_rules(server, lambda: [rule("sav_note", protects=True)])
    with pytest.raises(NameRuleError):
        async with server.lifespan():
            pass


def test_rules_are_read_when_checked_so_a_tool_added_later_counts() -> None:
    server = Server("late")
    declare_rules(server, lambda: [rule("export", protects=True)])

    @server.tool()
    def export() -> str:  # pyright: ignore[reportUnusedFunction]
        return "x"

    check_names(server)


def test_late_bound_rules_are_not_refused_and_are_listed() -> None:
    server = notes()
    late = rule("export", protects=True, late_bound=True)
    declare_rules(server, lambda: [late])
    check_names(server)
    assert late_bound_rules(server) == [late]


def test_an_extension_kind_is_checked_against_its_own_names(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("events")
    declare_names(server, "event type", lambda: ["deploy.finished"])
    declare_rules(
        server,
        lambda: [NamedRule("event type", "deploy.finish", "hook", logger="mcpkit.test")],
    )
    check_names(server)
    [message] = warnings_of(caplog, "mcpkit.test")
    assert "closest registered event type: 'deploy.finished'" in message


def test_a_proxy_s_names_come_from_run_time_so_a_protecting_rule_needs_late_bound() -> None:
    server = Server("proxy")
    declare_dynamic(server, "tool")
    declare_rules(server, lambda: [rule("anything", protects=True)])
    with pytest.raises(NameRuleError, match="come from run time"):
        check_names(server)


def test_a_mounted_proxy_makes_only_its_own_prefix_unknown() -> None:
    parent = notes()
    child = Server("upstream")
    declare_dynamic(child, "tool")
    parent.mount(child, "up")
    declare_rules(parent, lambda: [rule("up_x", protects=True), rule("sav_note")])
    [(first, why_first), (second, why_second)] = problems(parent)
    assert (first.name, second.name) == ("up_x", "sav_note")
    assert "come from run time" in why_first
    assert "no tool of that name is registered" in why_second


@pytest.mark.parametrize("late_bound", [False, True])
def test_a_proxy_declares_its_names_dynamic(late_bound: bool) -> None:
    from mcpkit.proxy import proxy

    front = proxy(notes())
    declare_rules(front, lambda: [rule("save_note", protects=True, late_bound=late_bound)])
    if late_bound:
        check_names(front)
    else:
        with pytest.raises(NameRuleError, match="come from run time"):
            check_names(front)


def test_an_http_name_field_for_a_method_not_served_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = notes()
    server.http_app(name_fields={"task/get": "taskId"})
    [message] = warnings_of(caplog)
    assert message.startswith("StreamableHTTP(name_fields={'task/get': ...}) names method")


def test_the_core_messages_documented_in_server_md_are_the_ones_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import re

    from mcpkit.server.app import CacheHint

    doc = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
    samples = re.findall(r"`((?:@server\.completion|Server\(cache_hints)[^`]+ names [^`]+)`", doc)
    server = Server("hints", cache_hints={"tools/lst": CacheHint(5_000)})

    @server.prompt()
    def summary() -> str:  # pyright: ignore[reportUnusedFunction]
        return "sum"

    @server.completion(prompt="sumary")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    server.http_app()
    logged = warnings_of(caplog)
    assert len(samples) == len(logged) == 2
    for sample, message in zip(samples, logged, strict=True):
        assert message.startswith(sample.removesuffix("...").removesuffix(", ").rstrip("; "))


def test_a_name_registered_after_mounting_that_hides_a_mounted_one_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    parent = notes()
    child = Server("weather")
    parent.mount(child, "weather")

    @child.tool()
    def forecast() -> str:  # pyright: ignore[reportUnusedFunction]
        return "child"

    @parent.tool(name="weather_forecast")
    def own() -> str:  # pyright: ignore[reportUnusedFunction]
        return "parent"

    parent.http_app()
    check_names(parent)
    [message] = warnings_of(caplog)
    assert message == (
        "mount 'weather' ('weather'): tool 'weather_forecast' is hidden by the server's own "
        "tool of that name (mount rule 3: the first wins); rename one of them or mount "
        "under another namespace"
    )
    doc = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
    assert f"`{message}`" in doc  # the table's sample is what is logged
