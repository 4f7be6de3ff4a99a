"""A handshake-era upstream may list per client capability (server-everything lists
``trigger-sampling-request`` only to clients that can sample; found by the interop
suite through the proxy). Its lists reach each downstream client as the upstream would
show that client: fetched with the client's own capabilities and cached per capability
set (proxy lists rule 1), in both downstream eras."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from proxy_helpers import answer_sampling

from mcpkit.client import Client
from mcpkit.proxy import proxy
from mcpkit.proxy.core import MAX_MIRRORED_CAPABILITIES, MAX_MIRRORED_NAME_BYTES, Proxy
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


def sampling_aware_server() -> Server:
    server = Server("aware")

    @server.tool
    def plain() -> str:
        return "plain"

    @server.tool
    async def summarize(ctx: Context) -> str:
        answer = await ctx.sample("Summarize", max_tokens=10)
        return answer.text or ""

    def visible(ctx: Any, kind: str, definition: Mapping[str, Any]) -> bool:
        if kind == "tools" and definition.get("name") == "summarize":
            return "sampling" in ctx.client_capabilities
        return True

    server.add_list_filter(visible)
    return server


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_each_client_sees_the_list_its_capabilities_get(down: str) -> None:
    front = proxy(sampling_aware_server(), mode="legacy")
    async with Client(front, mode=down) as plain_client:  # type: ignore[arg-type]
        plain = sorted(t.name for t in await plain_client.list_tools())
    async with Client(front, mode=down, sampling=answer_sampling) as sampler:  # type: ignore[arg-type]
        sampled = sorted(t.name for t in await sampler.list_tools())
        result = await sampler.call_tool("summarize")
    async with Client(front, mode=down) as plain_again:  # type: ignore[arg-type]
        plain_later = sorted(t.name for t in await plain_again.list_tools())
    assert plain == ["plain"]
    assert sampled == ["plain", "summarize"]
    assert plain_later == ["plain"]  # the sampler's cached page is not served to others
    assert result.is_error is False


async def test_the_capability_names_an_upstream_chooses_are_mirrored_within_a_bound() -> None:
    # Issue 25 §3 (strings a peer chooses): the proxy kept every top-level capability
    # name its upstream ever sent, in ``mirrored`` and as one capability entry each,
    # never dropped, and answered them to every downstream client. An upstream (a peer)
    # sending 2,000 names of 1 KB each pinned 2 MB per connection, more per reconnect.
    upstream = Server("many-caps")
    for i in range(2000):
        upstream.add_capability(f"c{i:04d}" + "x" * 1000, {})
    upstream.add_capability("tasks", {"list": {}})  # an era's own: still mirrored

    @upstream.tool()
    def hello() -> str:  # pyright: ignore[reportUnusedFunction]
        return "hi"

    front = proxy(upstream, mode="legacy")
    async with Client(front, mode="legacy") as client:
        await client.call_tool("hello")
    state: Proxy = getattr(front, "proxy")  # noqa: B009
    assert len(state.mirrored) <= MAX_MIRRORED_CAPABILITIES
    assert all(len(name.encode()) <= MAX_MIRRORED_NAME_BYTES for name in state.mirrored)
    assert "tasks" in state.mirrored
    async with Client(front, mode="legacy") as client:
        caps = client.server_capabilities
    assert "tasks" in caps
    assert not any(name.startswith("c0") for name in caps)


async def test_a_whole_upstream_listing_the_proxy_keeps_is_bounded_by_bytes() -> None:
    # Lists rule 5: a proxy with list filters (and the 2026-07-28 header check) keeps a
    # whole upstream listing; the upstream chooses its size (up to 1,000 pages). Before,
    # it was kept whatever its size: here 300 tools of 4 KB descriptions, 1.2 MB held
    # for a limit of 256 KB.
    from mcpkit.core.jsonrpc import JSONRPCError, dumps
    from mcpkit.proxy import ProxyLimits

    upstream = Server("big")
    for i in range(300):
        upstream.add_tool(lambda: "x", name=f"t{i:03d}", description="d" * 4000)
    limits = ProxyLimits(max_cached_page_bytes=256 * 1024)
    front = proxy(upstream, mode="legacy", proxy_limits=limits)
    front.add_list_filter(lambda ctx, kind, item: True)
    async with Client(front, mode="legacy") as client:
        with pytest.raises(JSONRPCError) as refused:
            await client.call_tool("t000")
    assert "max_cached_page_bytes" in refused.value.message
    state: Proxy = getattr(front, "proxy")  # noqa: B009
    assert len(dumps(state.lists.listings)) <= limits.max_cached_page_bytes
