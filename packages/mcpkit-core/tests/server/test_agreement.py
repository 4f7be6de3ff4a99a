"""A decorator whose parts disagree is refused when it is registered (issue 26,
``server/agreement.py``): before, each case below was accepted and failed only when a
client used the item."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from peer import connect

from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


def test_a_template_variable_that_is_no_parameter_is_refused() -> None:
    server = Server("s")
    with pytest.raises(TypeError) as err:

        @server.resource("notes://{title}")
        def read(name: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return name

    message = str(err.value)
    assert message.startswith("server.resource('notes://{title}') on read(): ")
    assert "variable {title} is not a parameter" in message
    assert "rename the parameter 'name' to 'title'" in message
    assert server.templates == []


def test_a_required_parameter_that_is_no_variable_is_refused() -> None:
    server = Server("s")

    def read(title: str, folder: str) -> str:
        return title + folder

    with pytest.raises(TypeError, match=r"'folder' has no default.*\{folder\}.*default"):
        server.add_resource(read, "notes://{title}")


def test_a_typo_gets_the_closest_parameter() -> None:
    server = Server("s")

    def read(title: str, titel: str = "") -> str:
        return title

    with pytest.raises(TypeError, match=r"\{titl\}.*did you mean 'title'"):
        server.add_resource(read, "notes://{title}/{titl}")


def test_a_query_variable_needs_a_default() -> None:
    server = Server("s")

    def search(q: str) -> str:
        return q

    with pytest.raises(TypeError, match=r"leave out the query variable 'q'; give 'q' a default"):
        server.add_resource(search, "notes://search{?q}")


async def test_what_agrees_is_accepted_context_and_defaults_considered() -> None:
    server = Server("s")

    @server.resource("notes://{folder}/{title}{?lang}")
    def read(ctx: Context, folder: str, title: str, lang: str = "en", extra: int = 0) -> str:
        return f"{folder}/{title}/{lang}/{extra}"

    @server.resource("notes://index")
    def index(ctx: Context, limit: int = 3) -> str:
        return str(limit)

    async with connect(server) as peer:
        got = await peer.request("resources/read", {"uri": "notes://a/b?lang=fr"})
    assert got["contents"][0]["text"] == "a/b/fr/0"


def test_a_static_resource_with_a_required_parameter_is_refused() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"'notes://all'.*'name' has no default.*\{name\}"):

        @server.resource("notes://all")
        def read(name: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return name


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ([{"name": "topc", "required": True}], r"'topc' is not a parameter.*did you mean 'topic'"),
        ([{"name": "style"}], r"'topic' has no default and is not in arguments="),
        ([{"name": "topic"}], r"'topic' is declared optional.*'required': True"),
        ([{"name": "topic", "required": True}] * 2, r"'topic' is declared twice"),
        ([{"description": "no name"}], r"arguments\[0\] has no name"),
    ],
)
def test_prompt_arguments_that_disagree_with_the_signature(
    arguments: list[dict[str, Any]], expected: str
) -> None:
    server = Server("s")

    def brief(topic: str, style: str = "plain") -> str:
        return topic + style

    with pytest.raises(TypeError, match=rf"server.prompt\('brief'\) on brief\(\): .*{expected}"):
        server.add_prompt(brief, arguments=arguments)
    assert server.prompts == {}


def test_prompt_arguments_that_agree_are_kept() -> None:
    server = Server("s")

    @server.prompt(arguments=[{"name": "topic", "required": True, "description": "What"}])
    def brief(ctx: Context, topic: str, style: str = "plain") -> str:  # pyright: ignore[reportUnusedFunction]
        return topic

    assert server.prompts["brief"].definition["arguments"][0]["description"] == "What"


def test_a_tool_input_schema_that_disagrees_with_the_signature() -> None:
    server = Server("s")

    def save(title: str, body: str = "") -> str:
        return title

    with pytest.raises(TypeError, match=r"property 'titel'.*did you mean 'title'"):
        server.add_tool(
            save,
            input_schema={"type": "object", "properties": {"titel": {"type": "string"}}},
        )
    with pytest.raises(TypeError, match=r"'title' has no default.*input_schema\['required'\]"):
        server.add_tool(
            save,
            input_schema={"type": "object", "properties": {"title": {"type": "string"}}},
        )

    def loose(**kwargs: Any) -> str:
        return str(kwargs)

    server.add_tool(loose, input_schema={"type": "object", "properties": {"x": {}}})
    server.add_tool(
        save,
        input_schema={
            "type": "object",
            "properties": {"title": {"type": "string"}},
            "required": ["title"],
        },
    )
    assert set(server.tools) == {"loose", "save"}


def test_a_completion_handler_needing_more_than_it_is_given() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"\(argument, value, context\).*requires 'limit'"):

        @server.completion(prompt="brief")
        def complete(argument: str, value: str, context: dict[str, str], limit: int) -> list[str]:  # pyright: ignore[reportUnusedFunction]
            return []


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ({"prompt": "breif"}, r"names prompt 'breif'.*closest registered prompt: 'brief'"),
        (
            {"resource": "notes://{titel}"},
            r"names resource template 'notes://\{titel\}'.*'notes://\{title\}'",
        ),
    ],
)
async def test_a_completion_naming_nothing_warns_at_start_up(
    ref: dict[str, str], expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("s")

    @server.completion(**ref)  # pyright: ignore[reportCallIssue, reportArgumentType]
    def complete(argument: str, value: str) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    @server.prompt
    def brief(topic: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return topic

    @server.resource("notes://{title}")
    def read(title: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return title

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        async with server.lifespan():  # a warning: the server serves on
            pass
    warned = [r.getMessage() for r in caplog.records if r.name == "mcpkit.server"]
    assert len(warned) == 1
    assert re.search(expected, warned[0])


async def test_a_completion_registered_before_its_prompt_starts() -> None:
    server = Server("s")

    @server.completion(prompt="brief")
    def complete(argument: str, value: str) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return [v for v in ("alpha", "beta") if v.startswith(value)]

    @server.prompt
    def brief(topic: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return topic

    async with connect(server) as peer:
        got = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "brief"},
                "argument": {"name": "topic", "value": "a"},
            },
        )
    assert got["completion"]["values"] == ["alpha"]


AGREEMENT_MESSAGES = (
    "server.resource(",
    "server.prompt(",
    "server.tool(",
    "server.completion on",
    "... the parameter",
    "... a URI may",
)


def _table_messages() -> list[str]:
    """The example messages of docs/server.md's rows for these checks."""
    text = (Path(__file__).resolve().parents[4] / "docs" / "server.md").read_text("utf-8")
    section = text.split("## Mistakes caught at start-up", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    rows = [row for row in rows if "`mcpkit-ext-" not in row]  # each extension checks its own
    quoted = [re.findall(r"`([^`]*)`", row.rsplit(" | ", 1)[1]) for row in rows]
    messages = [found[0] for found in quoted if found]
    return [m for m in messages if m.startswith(AGREEMENT_MESSAGES)]  # the table is shared


def test_the_documented_messages_are_the_real_ones() -> None:
    """Each documented example message (up to its ``...``) is what the check raises."""
    got: list[str] = []

    def refused(register: Any) -> None:
        with pytest.raises(TypeError) as err:
            register()
        got.append(str(err.value))

    server = Server("notes")

    def read(name: str) -> str:
        return name

    def two(title: str, folder: str) -> str:
        return title

    def query(q: str) -> str:
        return q

    def brief(topic: str) -> str:
        return topic

    def save(title: str) -> str:
        return title

    def complete(argument: str, value: str, context: dict[str, str], limit: int) -> list[str]:
        return []

    refused(lambda: server.add_resource(read, "notes://{title}"))
    refused(lambda: server.add_resource(two, "notes://{title}"))
    refused(lambda: server.add_resource(query, "notes://search{?q}"))
    refused(lambda: server.add_resource(read, "notes://all"))
    refused(lambda: server.add_prompt(brief, arguments=[{"name": "topc"}]))
    props = {"titel": {"type": "string"}}
    refused(lambda: server.add_tool(save, input_schema={"type": "object", "properties": props}))
    refused(lambda: server.completion(prompt="brief")(complete))
    documented = _table_messages()
    assert len(documented) == len(got)
    for doc, real in zip(documented, got, strict=True):
        for part in doc.split("..."):
            assert part.strip(" ;") in real, (doc, real)


async def test_a_mounted_server_is_checked_when_its_parent_starts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    child = Server("child")

    @child.completion(prompt="brief")
    def complete(argument: str, value: str) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return []

    parent = Server("parent")
    parent.mount(child, "kid")
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        async with parent.lifespan():
            pass
    warned = [r.getMessage() for r in caplog.records if r.name == "mcpkit.server"]
    assert any(
        m.startswith("@server.completion(prompt='brief') names prompt 'brief'") for m in warned
    )


def test_a_prompt_argument_meant_for_kwargs_is_refused() -> None:
    """Validation drops arguments that are not named parameters: ``**kwargs`` would
    never receive ``style``."""
    server = Server("s")

    def brief(topic: str, **extra: str) -> str:
        return topic + str(extra)

    with pytest.raises(TypeError, match=r"declared argument 'style' is not a parameter"):
        server.add_prompt(brief, arguments=[{"name": "topic", "required": True}, {"name": "style"}])
