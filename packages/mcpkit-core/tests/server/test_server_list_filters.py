"""Per-request list filters (``Server.add_list_filter``, :mod:`mcpkit.server.visibility`):
what each caller sees in the four lists, on both eras, with correct paging, and that a
hidden item is unknown to that caller everywhere (issue 11 §9)."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from peer import connect

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND_LEGACY,
    JSONRPCError,
)
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
ERAS = ["legacy", "modern"]


def _server(page_size: int = 100) -> tuple[Server, list[tuple[Any, str, str, JSON]]]:
    """Tools t0..t9 (odd ones marked secret), a secret and a public prompt, resource
    and template; the filter shows secrets only to the principal ``root`` and records
    what it was asked."""
    server = Server("filters", page_size=page_size)
    seen: list[tuple[Any, str, str, JSON]] = []
    for i in range(10):
        server.add_tool(lambda i=i: f"ran {i}", name=f"t{i}", meta={"secret": i % 2 == 1})

    @server.prompt(meta={"secret": True})
    def hidden_prompt() -> str:
        return "hidden"

    @server.prompt()
    def open_prompt() -> str:
        return "open"

    @server.resource("mem://secret", meta={"secret": True})
    def secret_resource() -> str:
        return "s3cr3t"

    @server.resource("mem://public")
    def public_resource() -> str:
        return "hello"

    @server.resource("vault://{key}", meta={"secret": True})
    def vault(key: str) -> str:
        return f"vault {key}"

    @server.resource("files://{name}")
    def files(name: str) -> str:
        return f"file {name}"

    @server.completion(prompt="hidden_prompt")
    def complete_hidden(argument: str, value: str, context: Any) -> list[str]:
        return ["leak"]

    def visible(ctx: Context, kind: str, definition: Mapping[str, Any]) -> bool:
        subject = getattr(ctx.principal, "subject", None)
        seen.append((subject, ctx.era, kind, dict(definition)))
        return not (definition.get("_meta") or {}).get("secret") or subject == "root"

    server.add_list_filter(visible)
    return server, seen


ROOT = SimpleNamespace(subject="root")


@pytest.mark.parametrize("era", ERAS)
async def test_each_caller_sees_its_own_lists_on_both_eras(era: str) -> None:
    server, seen = _server()
    async with Client(server, mode=era) as anon:
        tools = [t.name for t in await anon.list_tools()]
        prompts = [p.name for p in await anon.list_prompts()]
        resources = [r.uri for r in await anon.list_resources()]
        templates = [t.uri_template for t in await anon.list_resource_templates()]
    assert tools == ["t0", "t2", "t4", "t6", "t8"]
    assert prompts == ["open_prompt"]
    assert resources == ["mem://public"]
    assert templates == ["files://{name}"]
    assert {kind for _, e, kind, _ in seen if e == era} == {
        "tools",
        "prompts",
        "resources",
        "resourceTemplates",
    }
    async with Client(MemoryTransport(server, principal=ROOT), mode=era) as root:
        assert len(await root.list_tools()) == 10
        assert len(await root.list_prompts()) == 2
        assert len(await root.list_resources()) == 2
        assert len(await root.list_resource_templates()) == 2
    assert ("root", era) in {(who, e) for who, e, _, _ in seen}


@pytest.mark.parametrize("era", ERAS)
async def test_pages_stay_full_and_cursors_walk_the_callers_own_view(era: str) -> None:
    server, _ = _server(page_size=2)
    async with Client(server, mode=era, cache=False) as anon:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            page = await anon.list_tools_page(cursor)
            pages.append([t.name for t in page.tools])
            cursor = page.next_cursor
            if cursor is None:
                break
    # five visible tools in pages of two: no short or empty page before the last
    assert pages == [["t0", "t2"], ["t4", "t6"], ["t8"]]


@pytest.mark.parametrize("era", ERAS)
async def test_a_hidden_item_is_unknown_to_that_caller(era: str) -> None:
    server, _ = _server()
    async with Client(server, mode=era) as anon:
        with pytest.raises(JSONRPCError) as tool:
            await anon.call_tool("t1", {})
        with pytest.raises(JSONRPCError) as prompt:
            await anon.get_prompt("hidden_prompt")
        with pytest.raises(JSONRPCError) as resource:
            await anon.read_resource("mem://secret")
        with pytest.raises(JSONRPCError) as template:
            await anon.read_resource("vault://k")
        with pytest.raises(JSONRPCError) as completion:
            await anon.complete({"type": "ref/prompt", "name": "hidden_prompt"}, "x", "")
        visible = await anon.call_tool("t0", {})
    assert visible.content[0].text == "ran 0"  # type: ignore[union-attr]
    assert tool.value.code == INVALID_PARAMS
    assert "unknown tool 't1'" in tool.value.message
    known = tool.value.message.split("known tools:")[1]
    assert "t0" in known
    assert "t1" not in known
    assert "t3" not in known
    assert prompt.value.code == INVALID_PARAMS
    assert "unknown prompt" in prompt.value.message
    assert "hidden_prompt" not in prompt.value.message.split("known prompts:")[1]
    not_found = RESOURCE_NOT_FOUND_LEGACY if era == "legacy" else INVALID_PARAMS
    assert resource.value.code == not_found
    assert template.value.code == not_found
    assert completion.value.code == INVALID_PARAMS
    async with Client(MemoryTransport(server, principal=ROOT), mode=era) as root:
        done = await root.call_tool("t1", {})
        read = await root.read_resource("vault://k")
    assert done.content[0].text == "ran 1"  # type: ignore[union-attr]
    assert read.contents[0].text == "vault k"  # type: ignore[union-attr]


async def test_every_filter_must_admit_an_item_and_a_failing_filter_fails_closed() -> None:
    server, _ = _server()
    server.add_list_filter(lambda ctx, kind, d: d.get("name") != "t0")
    async with connect(server) as peer:
        listed = await peer.request("tools/list")
        with pytest.raises(JSONRPCError) as gone:
            await peer.call_tool("t0")
    assert [t["name"] for t in listed["tools"]] == ["t2", "t4", "t6", "t8"]
    assert gone.value.code == INVALID_PARAMS

    def broken(ctx: Context, kind: str, definition: Mapping[str, Any]) -> bool:
        raise RuntimeError("policy backend down")

    server.add_list_filter(broken)
    async with connect(server) as peer:
        with pytest.raises(JSONRPCError) as failed:
            await peer.request("tools/list")
    assert failed.value.code == INTERNAL_ERROR


async def test_a_hidden_resource_cannot_be_subscribed_to_on_either_era() -> None:
    """``resources/subscribe`` and ``subscriptions/listen`` look URIs up through the
    filters too (rule 4): a hidden resource or template is unknown there, so subscribing
    does not reveal that it exists."""
    server, _ = _server()
    async with Client(server, mode="legacy") as anon:
        for uri in ("mem://secret", "vault://k"):
            with pytest.raises(JSONRPCError) as hidden:
                await anon.subscribe(uri)
            assert hidden.value.code == RESOURCE_NOT_FOUND_LEGACY
        await anon.subscribe("mem://public")
        await anon.subscribe("files://a")
    async with Client(MemoryTransport(server, principal=ROOT), mode="legacy") as root:
        await root.subscribe("mem://secret")
        await root.subscribe("vault://k")
    wanted = ["files://a", "mem://public", "mem://secret", "vault://k"]
    async with (
        Client(server, mode="modern") as anon,
        anon.listen(resource_uris=wanted) as sub,
    ):
        assert sub.acknowledged == {"resourceSubscriptions": ["files://a", "mem://public"]}
    async with (
        Client(MemoryTransport(server, principal=ROOT), mode="modern") as root,
        root.listen(resource_uris=wanted) as sub,
    ):
        assert sub.acknowledged == {"resourceSubscriptions": wanted}


async def test_filtered_results_are_never_marked_public_for_shared_caches() -> None:
    """methods rule 1: with a list filter, what a list or read shows depends on the
    caller, so a ``"public"`` cache hint (sharable between callers, SEP-2549) is sent as
    ``"private"``; without a filter the hint is sent as configured."""
    from mcpkit.server import CacheHint

    public = {
        m: CacheHint(60_000, "public")
        for m in ("server/discover", "tools/list", "resources/list", "resources/read")
    }
    for filtered in (False, True):
        server = Server("cached", cache_hints=public)
        server.add_tool(lambda: "x", name="t")

        @server.resource("mem://r")
        def r() -> str:
            return "r"

        if filtered:
            server.add_list_filter(lambda ctx, kind, definition: True)
        async with Client(server, mode="modern", cache=False) as client:
            scopes = {
                method: (await client.request(method, params))["cacheScope"]
                for method, params in (
                    ("tools/list", {}),
                    ("resources/list", {}),
                    ("resources/read", {"uri": "mem://r"}),
                    ("server/discover", {}),
                )
            }
        expected = "private" if filtered else "public"
        assert scopes == {
            "tools/list": expected,
            "resources/list": expected,
            "resources/read": expected,
            "server/discover": "public",
        }


async def test_subscribing_again_after_a_filter_hides_the_resource_is_not_found() -> None:
    server = Server("filters")
    hidden = {"now": False}

    @server.resource("mem://flip")
    def flip() -> str:
        return "x"

    server.add_list_filter(
        lambda ctx, kind, d: not (hidden["now"] and d.get("uri") == "mem://flip")
    )
    async with Client(server, mode="legacy") as client:
        await client.subscribe("mem://flip")
        hidden["now"] = True
        with pytest.raises(JSONRPCError) as gone:
            await client.subscribe("mem://flip")
    assert gone.value.code == RESOURCE_NOT_FOUND_LEGACY
