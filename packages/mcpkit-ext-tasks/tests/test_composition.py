"""Issue 25 §4: task ownership × composition.

Mounted, a task made by a mounted tasks server belongs to the caller of the parent
(its principal reaches the mounted server). Proxied in memory, the proxied server sees
only the proxy's connection: a proxy that authenticates its callers would make all
their tasks share one owner, so it refuses to start; an anonymous proxy changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import connect

from mcpkit.ext.tasks import InMemoryTaskStore
from mcpkit.ext.tasks.demo import build_server
from mcpkit.ext.tasks.protection import TASK_OWNERSHIP
from mcpkit.proxy import proxy
from mcpkit.server import Server
from mcpkit.server.guards import GuardedRequest
from mcpkit.server.protections import ProtectionError

pytestmark = pytest.mark.anyio
ARGS: dict[str, Any] = {"name": "work_slow_compute", "arguments": {"seconds": 0, "label": "x"}}


async def test_task_ownership_travels_with_a_mount() -> None:
    store = InMemoryTaskStore()
    child = build_server(store)
    assert TASK_OWNERSHIP in child.protections
    app = Server("gateway")
    app.mount(child, namespace="work")
    async with connect(app, principal="alice") as alice, connect(app, principal="bob") as bob:
        made = await alice.session.request("tools/call", ARGS)
        other = await bob.session.request("tools/call", ARGS)
    mine = await store.get(made["taskId"])
    theirs = await store.get(other["taskId"])
    assert mine is not None
    assert theirs is not None
    assert mine.owner == "principal:alice"
    assert theirs.owner == "principal:bob"


async def test_an_authenticating_proxy_of_a_tasks_server_refuses_to_start() -> None:
    async def authenticated_only(request: GuardedRequest) -> None:
        return None

    front = proxy(build_server())
    front.add_request_guard(authenticated_only)  # the proxy identifies its callers
    with pytest.raises(ProtectionError) as refused:
        async with front.lifespan():
            pass
    assert "task ownership" in str(refused.value)
    assert "mount the tasks server" in str(refused.value)


async def test_an_anonymous_proxy_of_a_tasks_server_keeps_ownership_as_it_was() -> None:
    front = proxy(build_server())
    async with front.lifespan():
        pass  # allowed: its callers are as anonymous as the upstream sees them
