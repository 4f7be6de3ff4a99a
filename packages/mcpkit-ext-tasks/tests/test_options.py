"""The tasks extension's tool options (issue 26, ``toolopts.py``): values outside their
set fail at registration naming the tool and the closest value; a misspelt option names
``Tasks.tool()`` and suggests its own options; ``@server.tool(task_support=...)`` works
through core's extension options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import connect

from mcpkit.ext.tasks import Tasks
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
STARTUP_TABLE = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" rows quote these messages."""


def work(n: int) -> int:
    return n


async def test_task_support_outside_its_set_fails_at_registration_and_lists_stay_usable() -> None:
    server = Server("s")
    tasks = Tasks().install(server)
    server.add_tool(work, name="other")
    with pytest.raises(
        ValueError,
        match=r"tool 'work': task_support='optinal': 'optinal' is not one of 'forbidden', "
        r"'optional', 'required' \(did you mean 'optional'\?\)",
    ) as refused:
        tasks.tool(task_support="optinal")(work)
    assert f"`ValueError: {refused.value}`" in STARTUP_TABLE
    assert "work" not in server.tools
    async with connect(server) as client:
        listed = await client.list_tools()
    assert [t.name for t in listed] == ["other"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"preamble": "yes"}, r"preamble='yes': must be True or False"),
        ({"ttl_ms": 0}, r"ttl_ms=0: must be None or a positive int"),
        ({"poll_interval_ms": 1.5}, r"poll_interval_ms=1.5: must be None"),
    ],
)
def test_task_settings_are_checked_at_registration(options: JSON, message: str) -> None:
    server = Server("s")
    tasks = Tasks().install(server)
    with pytest.raises(ValueError, match=rf"tool 'work': {message}"):
        tasks.tool(**options)(work)
    assert not server.tools
    assert not tasks.options


def test_a_misspelt_option_names_tasks_tool_and_suggests_its_own_option() -> None:
    server = Server("s")
    tasks = Tasks().install(server)
    options: JSON = {"task_suport": "optional"}
    with pytest.raises(
        TypeError,
        match=r"^Tasks\.tool\(\): unknown option 'task_suport' \(did you mean 'task_support'\?\)"
        r".*task_support \(mcpkit-ext-tasks",
    ) as misspelt:
        tasks.tool(**options)
    head = str(misspelt.value).split("; the options are ")[0]
    assert f"`TypeError: {head}; the options are ...`" in STARTUP_TABLE
    with pytest.raises(TypeError, match=r"^server\.tool\(\): .*did you mean 'task_support'"):
        server.tool(**options)(work)
    with pytest.raises(TypeError, match=r"^Tasks\.tool\(\) takes the name as its only positional"):
        tasks.tool("a", "b")
    assert not server.tools


async def test_core_decorator_takes_the_task_options_and_tasks_tool_works_bare() -> None:
    server = Server("s")
    modern = Tasks(legacy=False).install(server)
    legacy = Tasks(modern=False, store=modern.store).install(server)
    options: JSON = {"task_support": "required", "ttl_ms": 5_000, "execution": {"x": 1}}
    server.tool(**options)(work)

    @modern.tool
    def bare(n: int) -> int:
        return n

    assert server.tools["work"].definition["execution"] == {"x": 1, "taskSupport": "required"}
    assert server.tools["bare"].definition["execution"] == {"taskSupport": "optional"}
    assert modern.options["work"].ttl_ms == legacy.options["work"].ttl_ms == 5_000
    async with connect(server) as client:
        created = await client.session.request(
            "tools/call", {"name": "work", "arguments": {"n": 2}}
        )
    assert created["resultType"] == "task"


def test_a_failed_registration_keeps_neither_task_settings_nor_a_tool() -> None:
    """Reviewer fault 3 (options.py rule 2): the options are applied only after every
    check of the registration passed."""
    server = Server("s")
    tasks = Tasks().install(server)
    with pytest.raises(ValueError, match="cannot be sent as JSON"):
        server.add_tool(work, ttl_ms=5, meta={"k": object()})  # type: ignore[call-arg]
    assert "work" not in tasks.options
    assert "work" not in server.tools
    server.add_tool(work, task_support="required")  # type: ignore[call-arg]
    assert server.tools["work"].definition["execution"] == {"taskSupport": "required"}
