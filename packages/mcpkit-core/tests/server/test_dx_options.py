"""Option values and extension options (issue 26, ``server/options.py``): a value
outside its allowed set fails at registration naming the item, the option, the allowed
values and the closest one, and registers nothing; extensions add options to core's
decorators through ``Server.add_options``."""

from __future__ import annotations

from typing import Any

import pytest
from peer import connect

from mcpkit.server import Server
from mcpkit.server.forms import check_options, decorate
from mcpkit.server.options import ExtensionOptions, choice

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def add(a: int) -> int:
    return a


def test_task_support_outside_its_set_fails_at_registration_naming_tool_and_closest() -> None:
    server = Server("s")
    with pytest.raises(
        ValueError,
        match=r"tool 'add': execution taskSupport: 'optinal' is not one of 'forbidden', "
        r"'optional', 'required' \(did you mean 'optional'\?\)",
    ):
        server.tool(execution={"taskSupport": "optinal"})(add)
    with pytest.raises(ValueError, match=r"tool 'sneaky': execution taskSupport: 'maybe'"):
        server.add_tool(add, name="sneaky", extra={"execution": {"taskSupport": "maybe"}})
    assert not server.tools


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("tool", {"icons": [{"src": "https://x/i.png", "theme": "drak"}]}, r"did you mean 'dark'"),
        ("tool", {"icons": [{"src": "https://x/i.png", "sizes": "48x48"}]}, r"icon sizes="),
        ("tool", {"icons": [{"mimeType": "image/png"}]}, r"string src"),
        ("tool", {"annotations": {"readOnlyHint": "yes"}}, r"readOnlyHint='yes' must be a bool"),
        ("tool", {"annotations": "readOnly"}, r"annotations='readOnly' must be an object"),
        ("prompt", {"icons": [{"src": "data:,x", "theme": "lite"}]}, r"'light'"),
        ("resource", {"annotations": {"audience": ["usr"]}}, r"did you mean 'user'"),
        ("resource", {"annotations": {"priority": 2}}, r"priority=2 must be a number from 0"),
        ("resource", {"mime_type": ["text/plain"]}, r"mime_type=\['text/plain'\] must be a str"),
        ("tool", {"title": 5}, r"title=5 must be a string"),
        ("prompt", {"meta": "x"}, r"meta='x' must be an object"),
        ("tool", {"meta": {"hook": object()}}, r"its definition cannot be sent as JSON"),
    ],
)
def test_definition_values_a_client_would_refuse_fail_at_registration(
    kind: str, options: JSON, message: str
) -> None:
    server = Server("s")
    register = {
        "tool": server.add_tool,
        "prompt": server.add_prompt,
        "resource": lambda fn, **o: server.add_resource(fn, "r://x/{a}", **o),
    }[kind]
    with pytest.raises(ValueError, match=rf"{kind} .*{message}"):
        register(add, **options)
    assert not server.tools
    assert not server.prompts
    assert not server.templates


async def test_good_values_are_listed_as_given() -> None:
    server = Server("s")
    icons = [{"src": "https://x/i.png", "theme": "dark", "sizes": ["48x48"]}]
    server.add_tool(add, execution={"taskSupport": "forbidden"}, icons=icons)
    server.add_resource(add, "r://x/{a}", annotations={"audience": ["user"], "priority": 0.5})
    async with connect(server) as peer:
        tools = await peer.request("tools/list", {})
    assert tools["tools"][0]["execution"] == {"taskSupport": "forbidden"}
    assert tools["tools"][0]["icons"] == icons


def scope_options(seen: list[tuple[str, str, JSON]]) -> ExtensionOptions:
    def scopes(value: Any) -> tuple[str, ...]:
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError("give a list of scope strings")
        return tuple(value)

    return ExtensionOptions(
        owner="example-ext",
        checks={"needs": scopes, "level": lambda v: choice(v, ("low", "high"))},
        apply=lambda kind, key, item, values: seen.append((kind, key, values)),
        kinds=frozenset({"tool", "prompt", "resource"}),
    )


async def test_an_extension_option_is_checked_then_applied_to_the_registered_item() -> None:
    seen: list[tuple[str, str, JSON]] = []
    server = Server("s")
    server.add_options(scope_options(seen))
    options: JSON = {"needs": ["a:write"], "title": "Add"}
    server.tool(**options)(add)
    server.add_prompt(add, name="p", level="high")
    server.add_resource(add, "r://x/{a}", needs=["r"])
    assert seen == [
        ("tool", "add", {"needs": ("a:write",)}),
        ("prompt", "p", {"level": "high"}),
        ("resource", "r://x/{a}", {"needs": ("r",)}),
    ]
    assert "needs" not in server.tools["add"].definition  # only the extension sees it
    async with connect(server) as peer:
        tools = await peer.request("tools/list", {})
    assert tools["tools"][0]["title"] == "Add"


def test_an_extension_option_value_refused_names_the_item_and_registers_nothing() -> None:
    seen: list[tuple[str, str, JSON]] = []
    server = Server("s")
    server.add_options(scope_options(seen))
    with pytest.raises(
        ValueError, match=r"tool 'add': level='hihg': 'hihg' is not one of .*did you mean 'high'"
    ):
        server.add_tool(add, level="hihg")
    with pytest.raises(ValueError, match=r"prompt 'add': needs='a': give a list"):
        server.add_prompt(add, needs="a")
    assert not server.tools
    assert not server.prompts
    assert not seen


def test_an_apply_that_fails_registers_nothing() -> None:
    server = Server("s")

    def refuse(kind: str, key: str, item: Any, values: JSON) -> None:
        raise ValueError(f"{kind} {key!r}: refused")

    server.add_options(ExtensionOptions("ext", {"flag": bool}, refuse))
    with pytest.raises(ValueError, match="tool 'add': refused"):
        server.add_tool(add, flag=True)
    assert not server.tools


def test_unknown_options_suggest_core_and_installed_extension_options() -> None:
    server = Server("s")
    options: JSON = {"neds": ["x"]}
    with pytest.raises(TypeError, match=r"unknown option 'neds'.*installed on the server before"):
        server.tool(**options)(add)  # not installed yet: the message says what to do
    server.add_options(scope_options([]))
    with pytest.raises(
        TypeError,
        match=r"server\.tool\(\): unknown option 'neds' \(did you mean 'needs'\?\); the "
        r"options are name, annotations, .*needs \(example-ext\)",
    ):
        server.tool(**options)(add)
    assert not server.tools


def test_an_option_name_taken_twice_is_refused_when_installed() -> None:
    server = Server("s")
    server.add_options(scope_options([]))
    with pytest.raises(ValueError, match=r"other: the tool option 'needs' is already example-ext"):
        server.add_options(ExtensionOptions("other", {"needs": bool}, lambda *_: None))
    with pytest.raises(ValueError, match=r"the tool option 'title' is already core's"):
        server.add_options(ExtensionOptions("other", {"title": str}, lambda *_: None))


def test_an_extension_decorator_built_on_the_forms_names_itself() -> None:
    with pytest.raises(TypeError, match=r"^Ext\.tool\(\): unknown option 'colr' \(did you mean"):
        check_options("tool", {"colr": 1}, {"color": "ext", "title": "core"}, "Ext.tool")
    with pytest.raises(TypeError, match=r"^Ext\.tool\(\) takes the name as its only positional"):
        decorate("tool", "a", ("b",), None, lambda fn, n: None, "Ext.tool")
    with pytest.raises(TypeError, match=r"^Ext\.tool: int is a class"):
        decorate("tool", int, (), None, lambda fn, n: None, "Ext.tool")


@pytest.mark.parametrize(
    ("eras", "message"),
    [
        (["moden"], r"eras: 'moden' is not one of 'legacy', 'modern' \(did you mean 'modern'\?\)"),
        ("modern", r"eras='modern' must be a non-empty list of eras \(did you mean \['modern'\]"),
        ([], r"eras=\[\] must be a non-empty list"),
    ],
)
def test_add_method_eras_outside_the_set_name_the_method_and_closest(
    eras: Any, message: str
) -> None:
    server = Server("s")

    async def handler(ctx: Any) -> JSON:
        return {}

    with pytest.raises(ValueError, match=rf"^method 'x/y': {message}"):
        server.add_method("x/y", handler, eras=eras)
    assert "x/y" not in server.methods["legacy"]
    assert "x/y" not in server.methods["modern"]


def test_the_startup_table_shows_the_messages_as_they_are() -> None:
    # docs/server.md "Mistakes caught at start-up": the core rows are the real messages
    from pathlib import Path

    table = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
    server = Server("s")
    refused = ExtensionOptions("com.example/audit", {"title": str}, lambda *_: None)
    for attempt in (
        lambda: server.add_tool(add, execution={"taskSupport": "optinal"}),
        lambda: server.add_method("x/y", add, eras=["moden"]),  # type: ignore[arg-type]
        lambda: server.add_options(refused),
    ):
        with pytest.raises(ValueError, match=r"^(tool|method|com)") as caught:
            attempt()
        assert f"`ValueError: {caught.value}`" in table
    with pytest.raises(TypeError, match="unknown option 'titel'") as misspelt:
        server.tool(titel="x")(add)  # type: ignore[call-overload]
    head, tail = str(misspelt.value).split("; the options are name, ")
    assert f"`TypeError: {head}; the options are name, " in table
    last = "; an extension's option needs the extension installed on the server before the "
    assert tail.endswith(last + "decorator runs")
    assert f"{last}decorator runs`" in table
