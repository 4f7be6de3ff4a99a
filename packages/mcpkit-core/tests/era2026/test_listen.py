"""subscriptions/listen on a connection transport (2026-07-28 basic/patterns/subscriptions)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from .conftest import RawPeer, envelope

pytestmark = pytest.mark.anyio

SUB = "io.modelcontextprotocol/subscriptionId"


async def _wait_for(peer: RawPeer, method: str) -> list[dict[str, Any] | None]:
    with anyio.fail_after(5):
        while not any(m == method for m, _ in peer.notifications):
            await anyio.sleep(0.01)
    return [p for m, p in peer.notifications if m == method]


async def test_listen_acknowledges_then_forwards_only_requested_kinds(peer: RawPeer) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            peer.call,
            "subscriptions/listen",
            {"_meta": envelope(), "notifications": {"promptsListChanged": True, "bogus": True}},
        )
        acks = await _wait_for(peer, "notifications/subscriptions/acknowledged")
        assert acks[0] is not None
        assert acks[0]["notifications"] == {"promptsListChanged": True}
        sub_id = acks[0]["_meta"][SUB]
        await peer.call(
            "tools/call", {"name": "test_trigger_tool_change", "arguments": {}, "_meta": envelope()}
        )
        await peer.call(
            "tools/call",
            {"name": "test_trigger_prompt_change", "arguments": {}, "_meta": envelope()},
        )
        changed = await _wait_for(peer, "notifications/prompts/list_changed")
        assert changed[0] is not None
        assert changed[0]["_meta"][SUB] == sub_id
        assert not [m for m, _ in peer.notifications if m == "notifications/tools/list_changed"]
        tg.cancel_scope.cancel()


async def test_resource_updates_only_for_listed_uris(peer: RawPeer, server: Any) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            peer.call,
            "subscriptions/listen",
            {
                "_meta": envelope(),
                "notifications": {"resourceSubscriptions": ["test://watched-resource"]},
            },
        )
        await _wait_for(peer, "notifications/subscriptions/acknowledged")
        server.notify_resource_updated("test://static-text")
        server.notify_resource_updated("test://watched-resource")
        updates = await _wait_for(peer, "notifications/resources/updated")
        assert [u["uri"] for u in updates if u] == ["test://watched-resource"]
        tg.cancel_scope.cancel()
