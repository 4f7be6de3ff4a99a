"""Task owners are stable identities (issue 11 §1), on both stores and both eras.

Real Starlette ``AuthenticationMiddleware`` in front of the tasks demo under uvicorn on
127.0.0.1; the backend yields a *new* ``SimpleUser`` per request. The owner of a task is
the user's ``username`` (no ``identity``), so:

1. alice reaches her task from any later request (and, on the handshake era, from another
   of her sessions): with the old ``str(user)`` key each request was a new owner;
2. bob can neither get, list, wait for the result of, nor cancel it (-32602, or an empty
   list), with the in-memory store and with a real ``redis-server``;
3. a user without a stable identity is refused (HTTP 500, -32603) and no task is made.
"""

from __future__ import annotations

import contextlib
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from helpers import connect, poll
from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser, SimpleUser
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection

from mcpkit.client import Client
from mcpkit.client.http import HttpTransport
from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.ext.tasks import (
    TASKS_EXTENSION,
    InMemoryTaskStore,
    RedisTaskStore,
    Tasks,
    TaskStore,
)
from mcpkit.ext.tasks.demo import build_server
from mcpkit.server import Context, Server
from mcpkit.server.identity import caller_key

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


class Faceless(BaseUser):
    """Authenticated, with a display name, but neither identity nor username."""

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return "Someone"


class Tokens(AuthenticationBackend):
    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        auth = conn.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return None
        name = auth.removeprefix("Bearer ")
        return AuthCredentials(["mcp"]), Faceless() if name == "faceless" else SimpleUser(name)


@contextlib.asynccontextmanager
async def serve(store: TaskStore) -> AsyncIterator[str]:
    app = build_server(store).http_app()
    app.add_middleware(AuthenticationMiddleware, backend=Tokens())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


def as_user(url: str, who: str, era: str) -> Client:
    transport = HttpTransport(url, headers={"authorization": f"Bearer {who}"})
    client = Client(transport, mode=era, extensions=[TASKS_EXTENSION])  # type: ignore[arg-type]
    for method in ("tasks/get", "tasks/update", "tasks/cancel", "tasks/result"):
        client.add_name_param(method, "taskId")  # the Mcp-Name header on 2026-07-28
    return client


@contextlib.asynccontextmanager
async def store_of(kind: str, request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    if kind == "memory":
        yield InMemoryTaskStore()
        return
    url = request.getfixturevalue("redis_url")
    yield RedisTaskStore(url, namespace=f"identity:{uuid.uuid4().hex}")


async def refused(call: Callable[[], Awaitable[Any]]) -> int:
    with pytest.raises(JSONRPCError) as info:
        await call()
    return info.value.code


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_2026_tasks_belong_to_the_user_not_to_a_request(
    kind: str, request: pytest.FixtureRequest
) -> None:
    args = {"name": "slow_compute", "arguments": {"seconds": 30, "label": "x"}}
    async with store_of(kind, request) as store, serve(store) as url:
        async with as_user(url, "alice", "modern") as alice, as_user(url, "bob", "modern") as bob:
            created = await alice.session.request("tools/call", args)
            tid = created["taskId"]
            for method in ("tasks/get", "tasks/update", "tasks/cancel"):
                params = {"taskId": tid, "inputResponses": {}}
                code = await refused(lambda m=method, p=params: bob.session.request(m, p))
                assert code == INVALID_PARAMS, method
            task = await alice.session.request("tasks/get", {"taskId": tid})
            assert task["status"] == "working"
            await alice.session.request("tasks/cancel", {"taskId": tid})
            task = await alice.session.request("tasks/get", {"taskId": tid})
        assert task["status"] == "cancelled"


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_2025_tasks_belong_to_the_user_across_sessions(
    kind: str, request: pytest.FixtureRequest
) -> None:
    args = {"name": "slow_compute", "arguments": {"seconds": 30, "label": "x"}, "task": {}}
    async with store_of(kind, request) as store, serve(store) as url:
        async with (
            as_user(url, "alice", "legacy") as alice,
            as_user(url, "alice", "legacy") as alice_again,
            as_user(url, "bob", "legacy") as bob,
        ):
            tid = (await alice.session.request("tools/call", args))["task"]["taskId"]
            mine = await alice_again.session.request("tasks/list", {})
            assert [t["taskId"] for t in mine["tasks"]] == [tid]
            assert (await bob.session.request("tasks/list", {}))["tasks"] == []
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                code = await refused(lambda m=method: bob.session.request(m, {"taskId": tid}))
                assert code == INVALID_PARAMS, method
            cancelled = await alice_again.session.request("tasks/cancel", {"taskId": tid})
        assert cancelled["status"] == "cancelled"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_user_without_stable_identity_gets_no_task(era: str) -> None:
    store = InMemoryTaskStore()
    async with serve(store) as url:
        with pytest.raises(JSONRPCError) as info:
            async with as_user(url, "faceless", era):
                pass
        async with httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
                headers={
                    "authorization": "Bearer faceless",
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
            )
    assert info.value.code == INTERNAL_ERROR
    assert r.status_code == 500
    assert r.json()["error"]["code"] == INTERNAL_ERROR
    assert await store.list_tasks(None, cursor=None, limit=10) == ([], None)


async def test_a_principal_named_like_a_session_scope_cannot_reach_anonymous_tasks() -> None:
    """Anonymous handshake-era tasks are scoped to their session (``session:<id>``); a
    principal whose key is that same text gets its own scope (``principal:...``), so it
    neither lists nor reads them."""
    args = {"name": "slow_compute", "arguments": {"seconds": 30, "label": "x"}, "task": {}}
    async with serve(InMemoryTaskStore()) as url:
        anonymous = Client(HttpTransport(url), mode="legacy", extensions=[TASKS_EXTENSION])  # type: ignore[arg-type]
        async with anonymous:
            tid = (await anonymous.session.request("tools/call", args))["task"]["taskId"]
            sid = anonymous.session.connection.stream.session_id  # type: ignore[attr-defined]
            assert sid
            async with as_user(url, f"session:{sid}", "legacy") as impostor:
                listed = await impostor.session.request("tasks/list", {})
                code = await refused(lambda: impostor.session.request("tasks/get", {"taskId": tid}))
            mine = await anonymous.session.request("tasks/list", {})
    assert listed["tasks"] == []
    assert code == INVALID_PARAMS
    assert [t["taskId"] for t in mine["tasks"]] == [tid]


async def test_an_anonymous_sessions_tasks_stay_its_own_after_it_ends() -> None:
    """Issue 25 §1: an anonymous handshake-era session's scope is core's caller key (a
    hash of its ``Mcp-Session-Id``): a later session never lists or reads the first
    one's task, also after the first ended (DELETE), and the stored owner does not
    hold the session id (a credential)."""
    args = {"name": "slow_compute", "arguments": {"seconds": 30, "label": "x"}, "task": {}}
    store = InMemoryTaskStore()
    async with serve(store) as url:
        first = Client(HttpTransport(url), mode="legacy", extensions=[TASKS_EXTENSION])  # type: ignore[arg-type]
        async with first:
            tid = (await first.session.request("tools/call", args))["task"]["taskId"]
            sid = first.session.connection.stream.session_id  # type: ignore[attr-defined]
            assert sid
        record = await store.get(tid)
        assert record is not None
        assert record.owner is not None
        assert record.owner.startswith("session:s:")
        assert sid not in record.owner
        for _ in range(3):
            later = Client(HttpTransport(url), mode="legacy", extensions=[TASKS_EXTENSION])  # type: ignore[arg-type]
            async with later:
                listed = await later.session.request("tasks/list", {})
                code = await refused(lambda: later.session.request("tasks/get", {"taskId": tid}))  # noqa: B023
            assert listed["tasks"] == []
            assert code == INVALID_PARAMS


@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_a_task_runs_as_the_caller_that_created_it(mode: str) -> None:
    """Issue 25 §1: inside a task, core's ``caller_key`` names the caller whose request
    created it (an in-memory connection's token, both eras), as the request itself did;
    another connection is another caller."""
    server = Server("who")
    runtime = Tasks()
    runtime.install(server)

    @runtime.tool(task_support="optional")
    async def who(ctx: Context) -> str:
        return caller_key(ctx) or "nobody"

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The same answer, never as a task."""
        return caller_key(ctx) or "nobody"

    async def as_task(client: Client) -> str:
        s = client.session
        if mode == "modern":
            created = await s.request("tools/call", {"name": "who", "arguments": {}})
            task = await poll(s, created["taskId"])
            return task["result"]["content"][0]["text"]
        created = await s.request("tools/call", {"name": "who", "arguments": {}, "task": {}})
        tid = created["task"]["taskId"]
        result = await s.request("tasks/result", {"taskId": tid})
        return result["content"][0]["text"]

    async with connect(server, mode=mode) as one, connect(server, mode=mode) as two:
        direct = (await one.call_tool("whoami")).content[0].text  # type: ignore[union-attr]
        assert direct.startswith("c:")
        assert await as_task(one) == direct
        assert await as_task(two) not in (direct, "nobody")
