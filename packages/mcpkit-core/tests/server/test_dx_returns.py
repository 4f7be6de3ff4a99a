"""Return-value rules (issue 13 §1, ``tools`` rule 7, ``resources`` rule 3): what a tool
without a return annotation and a resource function send for each kind of value, on both
eras. Annotated tools keep their wrapping rules."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from dx_helpers import ERAS, Era, ask
from peer import connect
from pydantic import BaseModel

from mcpkit.core.types import ImageContent, TextContent, TextResourceContents
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
EMBEDDED = {"type": "resource", "resource": {"uri": "mem://a", "text": "hi"}}
LINK = {"type": "resource_link", "uri": "mem://a", "name": "a"}


class Fruit(BaseModel):
    name: str
    ripe: bool = True


@dataclasses.dataclass
class Crate:
    count: int
    label: str


def const(value: Any) -> Any:
    """A function without a return annotation that returns ``value``."""

    def returns():  # type: ignore[no-untyped-def]
        return value

    return returns


def text(value: Any) -> JSON:
    return {"type": "text", "text": value}


# value returned by an unannotated tool -> expected CallToolResult
TOOL_CASES: list[tuple[str, Any, JSON]] = [
    ("str", "plain", {"content": [text("plain")], "isError": False}),
    ("none", None, {"content": [], "isError": False}),
    (
        "dict that is not a block",
        {"type": "fruit", "name": "apple"},
        {
            "content": [text('{"type":"fruit","name":"apple"}')],
            "structuredContent": {"type": "fruit", "name": "apple"},
            "isError": False,
        },
    ),
    (
        "image-typed dict without data",
        {"type": "image", "mimeType": "image/png"},
        {
            "content": [text('{"type":"image","mimeType":"image/png"}')],
            "structuredContent": {"type": "image", "mimeType": "image/png"},
            "isError": False,
        },
    ),
    ("text block", {"type": "text", "text": "t"}, {"content": [text("t")], "isError": False}),
    ("image block", IMAGE, {"content": [IMAGE], "isError": False}),
    ("embedded resource", EMBEDDED, {"content": [EMBEDDED], "isError": False}),
    ("resource link", LINK, {"content": [LINK], "isError": False}),
    ("content model", TextContent(text="m"), {"content": [text("m")], "isError": False}),
    (
        "pydantic model",
        Fruit(name="pear"),
        {
            "content": [text('{"name":"pear","ripe":true}')],
            "structuredContent": {"name": "pear", "ripe": True},
            "isError": False,
        },
    ),
    (
        "dataclass",
        Crate(3, "figs"),
        {
            "content": [text('{"count":3,"label":"figs"}')],
            "structuredContent": {"count": 3, "label": "figs"},
            "isError": False,
        },
    ),
    ("int", 42, {"content": [text("42")], "isError": False}),
    ("float", 2.5, {"content": [text("2.5")], "isError": False}),
    ("bool", True, {"content": [text("true")], "isError": False}),
    ("list of numbers", [1, 2], {"content": [text("[1,2]")], "isError": False}),
    ("list of strings", ["a", "b"], {"content": [text('["a","b"]')], "isError": False}),
    (
        "list of dicts",
        [{"type": "fruit"}],
        {"content": [text('[{"type":"fruit"}]')], "isError": False},
    ),
    (
        "list of blocks and strings",
        ["Chart:", IMAGE, ImageContent(data="AA==", mime_type="image/gif")],
        {
            "content": [
                text("Chart:"),
                IMAGE,
                {"type": "image", "data": "AA==", "mimeType": "image/gif"},
            ],
            "isError": False,
        },
    ),
    (
        "list of text blocks",
        [text("a"), text("b")],
        {"content": [text("a"), text("b")], "isError": False},
    ),
    (
        "a CallToolResult",
        {"content": [text("as is")], "isError": False},
        {"content": [text("as is")], "isError": False},
    ),
]


def tool_server() -> Server:
    server = Server("s")
    for name, value, _ in TOOL_CASES:
        server.add_tool(const(value), name=name)
    return server


@pytest.mark.parametrize("era", ERAS)
async def test_unannotated_tool_returns_follow_the_documented_rules(era: Era) -> None:
    async with connect(tool_server()) as peer:
        for name, _, expected in TOOL_CASES:
            got = await ask(peer, era, "tools/call", name=name, arguments={})
            assert got == expected, name


async def test_a_non_finite_number_in_an_unannotated_mapping_is_a_tool_error() -> None:
    server = Server("s")

    @server.tool
    def ratio():  # type: ignore[no-untyped-def]
        return {"r": float("inf")}

    async with connect(server) as peer:
        result = await peer.call_tool("ratio")
    assert result["isError"] is True
    assert "r: not a finite number" in result["content"][0]["text"]


async def test_annotated_returns_keep_their_wrapping_rules() -> None:
    server = Server("s")

    @server.tool
    def names() -> list[str]:
        return ["a", "b"]

    @server.tool
    def fruit() -> dict[str, str]:
        return {"type": "fruit"}

    @server.tool
    def count() -> int:
        return 3

    async with connect(server) as peer:
        listed = await peer.call_tool("names")
        mapped = await peer.call_tool("fruit")
        counted = await peer.call_tool("count")
    assert listed["content"] == [text("a"), text("b")]
    assert "structuredContent" not in listed
    assert mapped["structuredContent"] == {"type": "fruit"}
    assert counted["structuredContent"] == {"result": 3}
    assert "outputSchema" in server.tools["count"].definition
    assert "outputSchema" not in server.tools["names"].definition


# -- resources ------------------------------------------------------------------------------

RESOURCE_CASES: list[tuple[str, Any, str | None, list[JSON]]] = [
    ("str", "hello", None, [{"uri": "mem://str", "text": "hello"}]),
    ("bytes", b"\x00\x01", None, [{"uri": "mem://bytes", "blob": "AAE="}]),
    (
        "dict",
        {"a": 1},
        None,
        [{"uri": "mem://dict", "mimeType": "application/json", "text": '{"a":1}'}],
    ),
    (
        "list",
        [1, "x"],
        None,
        [{"uri": "mem://list", "mimeType": "application/json", "text": '[1,"x"]'}],
    ),
    (
        "model",
        Fruit(name="kiwi", ripe=False),
        None,
        [
            {
                "uri": "mem://model",
                "mimeType": "application/json",
                "text": '{"name":"kiwi","ripe":false}',
            }
        ],
    ),
    (
        "dataclass",
        Crate(1, "x"),
        None,
        [
            {
                "uri": "mem://dataclass",
                "mimeType": "application/json",
                "text": '{"count":1,"label":"x"}',
            }
        ],
    ),
    (
        "registered-mime",
        {"a": 1},
        "application/vnd.example+json",
        [
            {
                "uri": "mem://registered-mime",
                "mimeType": "application/vnd.example+json",
                "text": '{"a":1}',
            }
        ],
    ),
    (
        "contents-entry",
        {"uri": "mem://elsewhere", "text": "t"},
        None,
        [{"uri": "mem://elsewhere", "text": "t"}],
    ),
    (
        "contents-list",
        [{"uri": "mem://1", "text": "a"}, {"uri": "mem://2", "blob": "AA=="}],
        None,
        [{"uri": "mem://1", "text": "a"}, {"uri": "mem://2", "blob": "AA=="}],
    ),
    (
        "contents-model",
        TextResourceContents(uri="mem://m", text="m"),
        None,
        [{"uri": "mem://m", "text": "m"}],
    ),
]


@pytest.mark.parametrize("era", ERAS)
async def test_resource_returns_follow_the_documented_rules(era: Era) -> None:
    server = Server("s")
    for name, value, mime, _ in RESOURCE_CASES:
        server.add_resource(const(value), f"mem://{name}", mime_type=mime)
    async with connect(server) as peer:
        for name, _, _, expected in RESOURCE_CASES:
            got = await ask(peer, era, "resources/read", uri=f"mem://{name}")
            assert got == {"contents": expected}, name
            for entry in got["contents"]:
                if entry.get("mimeType", "").endswith("json"):
                    json.loads(entry["text"])  # the text is JSON
