"""A lifecycle hook for an event type that is not declared warns once when the server
starts serving (server rule 10; issue 26 "a name-keyed rule naming nothing")."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.experimental.events import EventsExtension
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


def build() -> tuple[Server, EventsExtension]:
    server = Server("hooks")
    events = EventsExtension(server)
    events.source("deploy.finished", payload={"type": "object"})
    return server, events


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcpkit.experimental.events" and r.levelno == logging.WARNING
    ]


async def test_a_hook_for_an_undeclared_type_warns_once_naming_the_closest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, events = build()

    @events.on_unsubscribe("deploy.finish")
    async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:  # pyright: ignore[reportUnusedFunction]
        return None

    for _ in range(2):
        async with Client(server, mode="modern") as client:
            await client.ping()
    [message] = warnings_of(caplog)
    assert message.startswith("@events.on_unsubscribe('deploy.finish') (")
    assert "test_hook_names.py:" in message
    assert "closest registered event type: 'deploy.finished'" in message
    assert "events.source(" in message


def test_hooks_for_declared_types_say_nothing(caplog: pytest.LogCaptureFixture) -> None:
    server, events = build()

    @events.on_subscribe("deploy.finished")
    async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:  # pyright: ignore[reportUnusedFunction]
        return None

    server.http_app()
    assert warnings_of(caplog) == []


def test_the_message_documented_in_server_md_is_the_one_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[3] / "docs" / "server.md"
    [sample] = re.findall(r"`(@events\.on_unsubscribe[^`]+)`", doc.read_text("utf-8"))
    server, events = build()
    events.on_unsubscribe("deploy.finish")(hook)
    server.http_app()
    [message] = warnings_of(caplog)
    assert re.sub(r" \(/[^)]+\.py:\d+\)", " (app.py:30)", message) == sample


async def hook(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
    return None
