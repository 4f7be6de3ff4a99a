"""Prompts, resources and resource templates; subscriptions and list_changed at runtime."""

from __future__ import annotations

import base64
from typing import Annotated, Any

import anyio
import pytest
from peer import connect
from pydantic import Field

from mcpkit.core.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, JSONRPCError
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def library() -> Server:
    server = Server("library")

    @server.prompt(title="Review code")
    def review(code: Annotated[str, Field(description="The code")], language: str = "python"):
        """Ask for a code review."""
        return f"Review this {language}:\n{code}"

    @server.prompt()
    def conversation() -> list[JSON]:
        return [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": {"type": "text", "text": "Hello!"}},
        ]

    @server.resource("file:///readme.md", mime_type="text/markdown", title="Readme")
    def readme() -> str:
        """The readme."""
        return "# Readme"

    @server.resource("file:///logo.png", mime_type="image/png", size=4)
    def logo() -> bytes:
        return b"\x89PNG"

    @server.resource("users://{user_id}/profile", mime_type="application/json")
    def profile(user_id: str) -> str:
        """A user's profile."""
        return f'{{"id": "{user_id}"}}'

    @server.resource("search://docs{?q,limit}")
    def search(q: str = "", limit: str = "10") -> str:
        return f"q={q} limit={limit}"

    return server


# -- prompts ---------------------------------------------------------------------------------


async def test_prompts_are_listed_with_arguments_derived_from_the_signature() -> None:
    async with connect(library()) as peer:
        prompts = {p["name"]: p for p in (await peer.request("prompts/list"))["prompts"]}
    assert prompts["review"] == {
        "name": "review",
        "title": "Review code",
        "description": "Ask for a code review.",
        "arguments": [
            {"name": "code", "description": "The code", "required": True},
            {"name": "language", "required": False},
        ],
    }
    assert "arguments" not in prompts["conversation"]


async def test_prompts_get_renders_messages() -> None:
    async with connect(library()) as peer:
        review = await peer.request(
            "prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}
        )
        conversation = await peer.request("prompts/get", {"name": "conversation"})
    assert review["description"] == "Ask for a code review."
    assert review["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this python:\nx = 1"}}
    ]
    assert conversation["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hi"}},
        {"role": "assistant", "content": {"type": "text", "text": "Hello!"}},
    ]


async def test_prompts_get_with_unknown_name_or_missing_argument_is_invalid_params() -> None:
    async with connect(library()) as peer:
        with pytest.raises(JSONRPCError) as unknown:
            await peer.request("prompts/get", {"name": "nope"})
        with pytest.raises(JSONRPCError) as missing:
            await peer.request("prompts/get", {"name": "review", "arguments": {}})
    assert unknown.value.code == INVALID_PARAMS
    assert "review" in unknown.value.message  # names the known prompts
    assert missing.value.code == INVALID_PARAMS
    assert "code" in missing.value.message


# -- resources ---------------------------------------------------------------------------------


async def test_resources_and_templates_are_listed() -> None:
    async with connect(library()) as peer:
        resources = (await peer.request("resources/list"))["resources"]
        templates = (await peer.request("resources/templates/list"))["resourceTemplates"]
    assert resources == [
        {
            "uri": "file:///readme.md",
            "name": "readme",
            "title": "Readme",
            "description": "The readme.",
            "mimeType": "text/markdown",
        },
        {"uri": "file:///logo.png", "name": "logo", "mimeType": "image/png", "size": 4},
    ]
    assert templates == [
        {
            "uriTemplate": "users://{user_id}/profile",
            "name": "profile",
            "description": "A user's profile.",
            "mimeType": "application/json",
        },
        {"uriTemplate": "search://docs{?q,limit}", "name": "search"},
    ]


async def test_reading_static_text_and_binary_resources() -> None:
    async with connect(library()) as peer:
        text = await peer.request("resources/read", {"uri": "file:///readme.md"})
        blob = await peer.request("resources/read", {"uri": "file:///logo.png"})
    assert text == {
        "contents": [{"uri": "file:///readme.md", "mimeType": "text/markdown", "text": "# Readme"}]
    }
    content = blob["contents"][0]
    assert content["mimeType"] == "image/png"
    assert base64.b64decode(content["blob"]) == b"\x89PNG"


async def test_reading_through_templates_passes_the_matched_variables() -> None:
    async with connect(library()) as peer:
        profile = await peer.request("resources/read", {"uri": "users://ada%20l/profile"})
        searched = await peer.request("resources/read", {"uri": "search://docs?limit=5&q=mcp"})
        bare = await peer.request("resources/read", {"uri": "search://docs"})
    assert profile["contents"] == [
        {
            "uri": "users://ada%20l/profile",
            "mimeType": "application/json",
            "text": '{"id": "ada l"}',
        }
    ]
    assert searched["contents"][0]["text"] == "q=mcp limit=5"
    assert bare["contents"][0]["text"] == "q= limit=10"


async def test_unknown_resource_is_minus_32002_in_the_handshake_era() -> None:
    async with connect(library()) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.request("resources/read", {"uri": "file:///missing.txt"})
        with pytest.raises(JSONRPCError) as no_uri:
            await peer.request("resources/read", {})
    assert info.value.code == RESOURCE_NOT_FOUND_LEGACY
    assert info.value.data == {"uri": "file:///missing.txt"}
    assert "file:///missing.txt" in info.value.message
    assert no_uri.value.code == INVALID_PARAMS


# -- subscriptions -------------------------------------------------------------------------------


async def test_subscribers_get_resource_updated_and_unsubscribing_stops_it() -> None:
    server = library()
    async with connect(server) as peer:
        assert peer.init_result["capabilities"]["resources"]["subscribe"] is True
        assert await peer.request("resources/subscribe", {"uri": "file:///readme.md"}) == {}
        server.notify_resource_updated("file:///logo.png")  # not subscribed
        server.notify_resource_updated("file:///readme.md")
        updated = await peer.wait_for("notifications/resources/updated")
        assert updated == [{"uri": "file:///readme.md"}]
        assert await peer.request("resources/unsubscribe", {"uri": "file:///readme.md"}) == {}
        server.notify_resource_updated("file:///readme.md")
        # a later marker notification proves the earlier one was not sent
        server.remove_prompt("conversation")
        await peer.wait_for("notifications/prompts/list_changed")
    assert peer.received("notifications/resources/updated") == [{"uri": "file:///readme.md"}]


async def test_updates_reach_only_the_sessions_that_subscribed() -> None:
    server = library()
    async with connect(server) as alice, connect(server) as bob:
        await alice.request("resources/subscribe", {"uri": "file:///readme.md"})
        server.notify_resource_updated("file:///readme.md")
        await alice.wait_for("notifications/resources/updated")
        server.remove_prompt("conversation")
        await bob.wait_for("notifications/prompts/list_changed")
    assert bob.received("notifications/resources/updated") == []


# -- list_changed ----------------------------------------------------------------------------------


async def test_registry_changes_at_runtime_send_list_changed() -> None:
    server = Server("dynamic")

    @server.tool()
    def first() -> str:
        return "1"

    @server.prompt()
    def greeting() -> str:
        return "hi"

    @server.resource("mem://a")
    def a() -> str:
        return "a"

    async with connect(server) as peer:
        caps = peer.init_result["capabilities"]
        assert caps["tools"] == {"listChanged": True}
        assert caps["prompts"] == {"listChanged": True}
        assert caps["resources"]["listChanged"] is True

        @server.tool()
        def second() -> str:
            return "2"

        await peer.wait_for("notifications/tools/list_changed")
        names = [t["name"] for t in (await peer.request("tools/list"))["tools"]]
        assert names == ["first", "second"]

        server.remove_tool("first")
        await peer.wait_for("notifications/tools/list_changed", count=2)
        names = [t["name"] for t in (await peer.request("tools/list"))["tools"]]
        assert names == ["second"]

        server.remove_prompt("greeting")
        await peer.wait_for("notifications/prompts/list_changed")

        @server.resource("mem://{key}")
        def keyed(key: str) -> str:
            return key

        await peer.wait_for("notifications/resources/list_changed")
        assert (await peer.request("resources/read", {"uri": "mem://zz"}))["contents"][0][
            "text"
        ] == "zz"
        server.remove_resource("mem://a")
        await peer.wait_for("notifications/resources/list_changed", count=2)
        with anyio.fail_after(10):
            listed = await peer.request("resources/list")
        assert listed["resources"] == []
