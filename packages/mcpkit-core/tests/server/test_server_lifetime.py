"""A server that is dropped is collected, with what core keeps for it
(:mod:`mcpkit.server.attached` rule 3).

Regression (issue 26 merge): the name-rule registry, the inspect sources and the
start-up checks were module-level weak-key tables whose values referred back to their
server (``partial(view_rules, server)``), so no server was ever collected, nor its task
records and stores.
"""

from __future__ import annotations

import gc
import sys
import weakref
from functools import partial
from pathlib import Path

import anyio
import pytest

from mcpkit.proxy import proxy
from mcpkit.server import Server
from mcpkit.server.inspection import InspectSection, add_inspect_source, inspect_sections
from mcpkit.server.names import NamedRule, declare_names, declare_rules, problems
from mcpkit.server.startup import add_startup_check, run_startup_checks

ONE_ERA = Path(__file__).resolve().parents[1] / "proxy" / "one_era_server.py"


def rules(server: Server) -> list[NamedRule]:
    return [NamedRule("tool", name, f"rule({name!r})") for name in server.tools]


def section(server: Server) -> InspectSection:
    return InspectSection("k", "T", rows=[("a", server.info["name"])])


def build() -> weakref.ref[Server]:
    server = Server("kept-by-nothing")
    child = Server("child")

    @child.tool
    def echo(text: str) -> str:
        return text

    server.mount(child, "kid")
    declare_rules(server, partial(rules, server))  # refers back to its server
    declare_names(server, "event type", lambda: server.tools)
    add_inspect_source(server, section)
    add_inspect_source(server, lambda s: section(server))

    async def check() -> None:
        assert server.info["name"]

    add_startup_check(server, check)
    anyio.run(run_startup_checks, server)
    assert problems(server) == []
    assert inspect_sections(server)
    return weakref.ref(server)


def test_a_dropped_server_and_its_registries_are_collected() -> None:
    ref = build()
    gc.collect()
    assert ref() is None


def test_a_dropped_proxy_is_collected() -> None:
    front = proxy([sys.executable, str(ONE_ERA), "legacy"], mode="modern")
    ref = weakref.ref(front)
    del front
    gc.collect()
    assert ref() is None


@pytest.mark.anyio
async def test_a_served_then_dropped_server_is_collected() -> None:
    from mcpkit.client import Client

    server = Server("served")

    @server.tool
    def echo(text: str) -> str:
        return text

    declare_rules(server, partial(rules, server))
    async with Client(server) as client:
        assert [t.name for t in await client.list_tools()] == ["echo"]
    ref = weakref.ref(server)
    del server, echo, client
    gc.collect()
    assert ref() is None
