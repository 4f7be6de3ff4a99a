"""Registration forms (issue 13 §1, ``server/forms.py``): bare ``@server.tool`` and
``@server.prompt`` register; every wrong form of every decorator is a ``TypeError`` that
shows the right one; options are typed keywords that reach the definitions."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from peer import connect

from mcpkit.server import Context, Server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

JSON = dict[str, Any]


async def test_bare_tool_and_prompt_register_and_return_the_function() -> None:
    server = Server("s")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    assert add(1, 2) == 3  # still the function, not a decorator
    assert greet("Ada") == "Hello Ada"
    assert server.tools["add"].definition["description"] == "Add two numbers."
    async with connect(server) as peer:
        result = await peer.call_tool("add", {"a": 2, "b": 3})
        prompt = await peer.request("prompts/get", {"name": "greet", "arguments": {"name": "Bo"}})
    assert result["structuredContent"] == {"result": 5}
    assert prompt["messages"][0]["content"]["text"] == "Hello Bo"


def test_called_forms_with_name_and_options() -> None:
    server = Server("s")

    @server.tool("renamed", title="Renamed", annotations={"readOnlyHint": True})
    def f() -> str:
        return ""

    @server.tool(name="by_keyword", meta={"k": 1}, icons=[{"src": "https://x/i.png"}])
    def g() -> str:
        return ""

    @server.tool()
    def h() -> str:
        return ""

    @server.prompt("p", title="P", description="described")
    def p() -> str:
        return ""

    @server.resource("mem://r", name="r", mime_type="text/plain", size=3, title="R")
    def r() -> str:
        return "abc"

    @server.resource(uri="mem://t/{x}", mime_type="text/plain", size=3)
    def t(x: str) -> str:
        return x

    assert set(server.tools) == {"renamed", "by_keyword", "h"}
    assert server.tools["renamed"].definition["title"] == "Renamed"
    assert server.tools["renamed"].definition["annotations"] == {"readOnlyHint": True}
    assert server.tools["by_keyword"].definition["_meta"] == {"k": 1}
    assert server.prompts["p"].definition["description"] == "described"
    assert server.resources["mem://r"].definition == {
        "uri": "mem://r",
        "name": "r",
        "title": "R",
        "mimeType": "text/plain",
        "size": 3,
    }
    assert "size" not in server.templates[0].definition  # a template has no size


def test_add_functions_register_like_the_decorators() -> None:
    server = Server("s")

    def fn() -> str:
        return "x"

    def by_id(id: str) -> str:
        return id

    tool = server.add_tool(fn, name="t", title="T")
    prompt = server.add_prompt(fn, name="p")
    resource = server.add_resource(fn, "mem://x", mime_type="text/plain")
    template = server.add_resource(by_id, "mem://x/{id}", name="tpl", size=9)
    assert server.tools["t"] is tool
    assert server.prompts["p"] is prompt
    assert server.resources["mem://x"] is resource
    assert server.templates == [template]


class Widget:
    pass


@pytest.mark.parametrize("index", range(6))
@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_wrong_tool_and_prompt_forms_raise_type_error_with_the_right_form(
    kind: str, index: int
) -> None:
    server = Server("s")
    decorator: Any = getattr(server, kind)
    forms: list[Any] = [
        lambda: decorator("name", "extra"),
        lambda: decorator(42),
        lambda: decorator(Widget),
        lambda: decorator()(Widget),
        lambda: decorator("n")(42),
        lambda: decorator("a", name="b"),
    ]
    with pytest.raises(TypeError) as raised:
        forms[index]()
    assert f"server.{kind}" in str(raised.value)
    assert f"@server.{kind}" in str(raised.value) or "given twice" in str(raised.value)
    assert not server.tools
    assert not server.prompts


def test_wrong_resource_forms_raise_type_error_showing_the_uri_form() -> None:
    server = Server("s")
    resource: Any = server.resource

    def reader() -> str:
        return ""

    with pytest.raises(TypeError, match="needs the resource's URI") as bare:
        resource(reader)  # @server.resource used bare
    for wrong in (
        lambda: resource("mem://a", "extra"),
        lambda: resource(42),
        lambda: resource(),
        lambda: resource("mem://a")(42),
        lambda: resource("mem://a")(Widget),
    ):
        with pytest.raises(TypeError) as raised:
            wrong()
        assert '@server.resource("scheme://path"' in str(raised.value)
    assert '@server.resource("scheme://path"' in str(bare.value)
    assert not server.resources
    assert not server.templates


def test_wrong_completion_and_method_forms_raise_type_error() -> None:
    server = Server("s")
    completion: Any = server.completion

    def fn(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    for wrong in (
        lambda: completion(fn),  # bare
        lambda: completion(),
        lambda: completion(prompt="p", resource="r"),
        lambda: completion(prompt="p")(42),
    ):
        with pytest.raises(TypeError, match=r"@server\.completion\(prompt="):
            wrong()
    assert not server.completers
    with pytest.raises(TypeError, match="add_method"):
        server.add_method("x/y", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a function"):
        server.add_tool("not a function")  # type: ignore[arg-type]


async def test_a_callable_instance_is_accepted() -> None:
    class Counter:
        def __call__(self, step: int, ctx: Context) -> int:
            return step

    server = Server("s")
    server.add_tool(Counter(), name="count")
    async with connect(server) as peer:
        result = await peer.call_tool("count", {"step": 4})
    assert result["structuredContent"] == {"result": 4}


def test_a_misspelt_option_raises_type_error_naming_the_closest_option() -> None:
    server = Server("s")
    options: dict[str, Any] = {"titel": "Add"}

    def add(a: int) -> int:
        return a

    with pytest.raises(
        TypeError, match=r"server\.tool\(\): unknown option 'titel' \(did you mean 'title'\?\)"
    ):
        server.tool(**options)(add)
    with pytest.raises(TypeError, match=r"server\.prompt\(\): unknown option 'desc'.*description"):
        server.add_prompt(add, **{"desc": "x", **options})
    with pytest.raises(
        TypeError,
        match=r"server\.resource\(\): unknown option 'mimetype' \(did you mean 'mime_type'\?\)",
    ):
        server.resource("r://x", **{"mimetype": "text/plain", **options})(add)
    assert not server.tools
    assert not server.prompts
    assert not server.resources


def test_a_callable_without_a_name_needs_one_and_says_so() -> None:
    class Counter:
        def __call__(self, step: int) -> int:
            return step

    server = Server("s")
    with pytest.raises(
        TypeError, match=r"has no __name__; give the name: server\.add_tool\(fn, name="
    ):
        server.tool(Counter())
    with pytest.raises(TypeError, match=r"@server\.prompt\(name=\.\.\.\)"):
        server.add_prompt(functools.partial(Counter(), 1))
    with pytest.raises(TypeError, match=r"@server\.resource\(uri, name=\.\.\.\)"):
        server.resource("r://x")(functools.partial(Counter(), 1))
    server.resource("r://x", name="one")(functools.partial(Counter(), 1))
    assert server.resources["r://x"].definition["name"] == "one"
