"""A server that lists one malformed item (issue 26, ``client/parsing.py``): the client's
error names the item by index and name and the field, never a bare pydantic dump; the
items that parsed stay usable on the error; ``mcpkit ls``/``call`` say the same."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from mcpkit.client import Client, ClientError, MalformedResultError
from mcpkit.client.parsing import parse_items, parse_result
from mcpkit.core.types import CallToolResult, ReadResourceResult, Tool
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]

BROKEN = """
from mcpkit.server import Server

server = Server("broken")


@server.tool
def good(text: str) -> str:
    return text


@server.tool
def bad() -> str:
    return ""


@server.prompt
def greet(name: str) -> str:
    return name


@server.resource("notes://{title}")
def note(title: str) -> str:
    return title


@server.resource("notes://index")
def index() -> str:
    return "index"


BREAK = {
    "tools/list": ("tools", "bad", {"execution": {"taskSupport": "optinal"}}),
    "prompts/list": ("prompts", "greet", {"arguments": [{"required": True}]}),
    "resources/list": ("resources", "index", {"uri": 7}),
    "resources/templates/list": ("resourceTemplates", "note", {"uriTemplate": None}),
    "tools/call": ("content", None, {"type": "image"}),
}


async def corrupt(ctx, call_next):
    result = await call_next(ctx)
    if ctx.method == "tools/call" and ctx.params["name"] != "bad":
        return result
    if ctx.method in BREAK:
        key, name, change = BREAK[ctx.method]
        entries = [dict(e) for e in result[key]]
        for entry in entries:
            if name is None or entry.get("name") == name:
                entry.update(change)
        result = {**result, key: entries}
    return result


server.add_middleware(corrupt)

if __name__ == "__main__":
    server.run()
"""


def broken_server() -> Server:
    namespace: JSON = {}
    exec(compile(BROKEN, "<broken>", "exec"), namespace)  # the same server the CLI runs
    return namespace["server"]


async def test_each_list_names_the_malformed_item_and_keeps_the_rest() -> None:
    async with Client(broken_server()) as client:
        with pytest.raises(MalformedResultError) as tools:
            await client.list_tools()
        with pytest.raises(MalformedResultError) as prompts:
            await client.list_prompts()
        with pytest.raises(MalformedResultError) as resources:
            await client.list_resources()
        with pytest.raises(MalformedResultError) as templates:
            await client.list_resource_templates()
        with pytest.raises(MalformedResultError) as page:
            await client.list_tools_page()
    message = str(tools.value)
    assert message.startswith("tools/list: the server sent a malformed result: tools[1] ")
    assert "(name 'bad'): execution.taskSupport: " in message
    assert "'optinal'" in message
    assert [t.name for t in tools.value.items] == ["good"]
    assert "prompts[0] (name 'greet'): arguments[0].name: Field required" in str(prompts.value)
    assert prompts.value.items == []
    assert "resources[0] (name 'index'): uri: " in str(resources.value)
    assert "resourceTemplates[0] (name 'note'): uriTemplate: " in str(templates.value)
    assert "tools[1] (name 'bad'): execution.taskSupport" in str(page.value)
    for exc in (tools, prompts, resources, templates, page):
        assert isinstance(exc.value, ClientError)
        assert not isinstance(exc.value, ValidationError)
        assert "validation error for" not in str(exc.value)


async def test_a_malformed_result_names_its_field() -> None:
    async with Client(broken_server()) as client:
        with pytest.raises(
            MalformedResultError, match=r"tools/call 'bad': .*content\[0\]: mimeType"
        ):
            await client.call_tool("bad")


async def test_problems_shown_are_bounded() -> None:
    server = Server("many")
    for i in range(40):
        server.add_tool(lambda: "", name=f"t{i}")

    async def corrupt(ctx: Context, call_next: Any) -> JSON:
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            long = "x" * 10_000
            result = {**result, "tools": [{**t, "title": 5, "name": long} for t in result["tools"]]}
        return result

    server.add_middleware(corrupt)
    async with Client(server) as client:
        with pytest.raises(MalformedResultError) as err:
            await client.list_tools()
    assert len(err.value.problems) == 40
    assert "and 35 more" in str(err.value)
    assert len(str(err.value)) < 2_000


def run_cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    import subprocess

    script = tmp_path / "broken.py"
    script.write_text(BROKEN, "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", args[0], f"{sys.executable} {script}", *args[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


def test_the_cli_names_the_item_and_calls_the_other_tools(tmp_path: Path) -> None:
    code, _, err = run_cli(tmp_path, "ls", "--connect-timeout", "60")
    assert code == 2
    assert "tools/list: the server sent a malformed result: tools[1] (name 'bad')" in err
    assert "validation error for" not in err
    assert "Traceback" not in err
    code, out, err = run_cli(tmp_path, "call", "good", "text=hello", "--connect-timeout", "60")
    assert (code, out) == (0, "hello\n"), err


async def test_an_entry_without_a_name_or_not_an_object_is_reported_not_dropped() -> None:
    server = Server("nameless")
    server.add_tool(lambda: "", name="fine")

    async def corrupt(ctx: Context, call_next: Any) -> JSON:
        result = await call_next(ctx)
        if ctx.method in ("tools/list", "prompts/list"):
            key = ctx.method.split("/")[0]
            result = {**result, key: [*result[key], {"description": "nameless"}, 7]}
        return result

    server.add_middleware(corrupt)
    server.add_prompt(lambda: "", name="p")
    async with Client(server) as client:
        with pytest.raises(MalformedResultError) as tools:
            await client.list_tools()
        with pytest.raises(MalformedResultError) as prompts:
            await client.list_prompts()
    for exc, key in ((tools, "tools"), (prompts, "prompts")):
        message = str(exc.value)
        assert f"{key}[1]: name: Field required" in message
        assert f"{key}[2]: the entry: Input should be a valid dictionary" in message
        assert len(exc.value.items) == 1


def test_a_huge_or_hostile_value_in_pydantic_s_message_is_cut_and_escaped() -> None:
    big = "A" * 1_000_000
    with pytest.raises(MalformedResultError) as huge:
        parse_result(CallToolResult, {"content": [{"type": big, "text": "x"}]}, "tools/call")
    assert len(str(huge.value)) < 600
    assert "expected tags: 'text', 'image'" in str(huge.value)
    with pytest.raises(MalformedResultError) as hostile:
        parse_result(CallToolResult, {"content": [{"type": "t\x1b[31m", "text": "x"}]}, "m")
    assert "\x1b" not in str(hostile.value)
    assert "t\\x1b[31m" in str(hostile.value)


def test_field_paths_read_as_the_json_does() -> None:
    with pytest.raises(MalformedResultError) as blob:
        parse_result(ReadResourceResult, {"contents": [{"uri": "x", "blob": 5}]}, "resources/read")
    assert "contents[0] (uri 'x'): blob: Input should be a valid string" in str(blob.value)
    tool = {"name": "t", "inputSchema": {"type": "object"}, "icons": [{"src": "x", "theme": "dim"}]}
    with pytest.raises(MalformedResultError) as icons:
        parse_items(Tool, [tool], "tools/list", "tools")
    assert "tools[0] (name 't'): icons[0].theme: Input should be" in str(icons.value)
