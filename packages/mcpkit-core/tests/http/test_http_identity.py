"""Identities fail closed (issue 11 §1), behind Starlette's real ``AuthenticationMiddleware``.

The backend yields a *new* ``SimpleUser`` object on every request, as real backends do.
Principal keys come from documented fields (``identity``, then ``username``), so:

1. the same user keeps its session and its MRTR ``requestState`` across requests (with
   a ``str()`` fallback every request was a new owner);
2. another user sees none of it: the session (POST, GET with ``Last-Event-ID``, DELETE,
   its subscriptions) is 404 and the ``requestState`` is -32602, on both eras;
3. a user with no stable identity is refused with HTTP 500 and a JSON-RPC -32603 body on
   every HTTP method, and the log names the principal's type.
4. A list filter sees the Starlette user as ``ctx.principal`` on both eras.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from http_helpers import (
    INIT_PARAMS,
    LATEST,
    body_of,
    headers,
    modern_headers,
    modern_meta,
    request,
    serve,
    sse_events,
)
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    BaseUser,
    SimpleUser,
)
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app
from mcpkit.server.identity import UnidentifiedPrincipal, principal_key

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


class Faceless(BaseUser):
    """Authenticated, with a display name, but no identity and no username."""

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return "Someone"


class Flaky(SimpleUser):
    """A lazy user whose identity lookup fails (its backing store is down)."""

    @property
    def identity(self) -> str:
        raise RuntimeError("user store unreachable")


class Tokens(AuthenticationBackend):
    """``Authorization: Bearer <name>``: a fresh user object per request."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        auth = conn.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return None
        name = auth.removeprefix("Bearer ")
        user: BaseUser = (
            Faceless()
            if name == "faceless"
            else Flaky(name)
            if name == "flaky"
            else SimpleUser(name)
        )
        return AuthCredentials(["mcp"]), user


def as_user(name: str) -> dict[str, str]:
    return {"authorization": f"Bearer {name}"}


def build_server() -> Server:
    server = Server("identity", "1.0.0", state_secret=b"s" * 32)

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Asks the user to confirm (MRTR on 2026-07-28)."""
        answer = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"answered {answer['action']}"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Streams, closes its connection (resumable), then answers."""
        await ctx.info("started")
        await ctx.close_stream(retry_ms=10)
        return "done"

    @server.tool(meta={"com.example/owner": "alice"})
    async def alices_tool() -> str:
        return "for alice"

    @server.resource("mem://note")
    def note() -> str:
        return "note"

    def only_the_owner(ctx: Context, kind: str, definition: Mapping[str, Any]) -> bool:
        owner = (definition.get("_meta") or {}).get("com.example/owner")
        return owner is None or getattr(ctx.principal, "username", None) == owner

    server.add_list_filter(only_the_owner)
    return server


@asynccontextmanager
async def authenticated(server: Server) -> AsyncIterator[tuple[httpx2.AsyncClient, str]]:
    app = http_app(server)
    app.add_middleware(AuthenticationMiddleware, backend=Tokens())
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        yield client, base + "/mcp"


async def open_session(client: httpx2.AsyncClient, url: str, who: str) -> str:
    r = await client.post(
        url, json=request(1, "initialize", INIT_PARAMS), headers={**headers(), **as_user(who)}
    )
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = await client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**headers(sid, mcp_protocol_version=LATEST), **as_user(who)},
    )
    assert r.status_code == 202
    return sid


def legacy_headers(sid: str, who: str, **extra: str) -> dict[str, str]:
    return {**headers(sid, mcp_protocol_version=LATEST, **extra), **as_user(who)}


def test_keys_come_from_documented_fields_only() -> None:
    assert principal_key(SimpleUser("alice")) == "alice"
    assert principal_key(SimpleUser("alice")) == principal_key(SimpleUser("alice"))

    class WithIdentity(SimpleUser):
        @property
        def identity(self) -> str:
            return "sub-42"

    assert principal_key(WithIdentity("alice")) == "sub-42"  # identity before username

    class Own:
        def __init__(self, subject: Any = None, id: Any = None) -> None:
            self.subject, self.id = subject, id

    assert principal_key(Own(subject="s-1", id=7)) == "s-1"
    assert principal_key(Own(id=7)) == "7"
    assert principal_key(None) is None
    assert principal_key("sub-9") == "sub-9"  # a bare string principal is its own key
    for faceless in (Faceless(), Own(), Own(subject=""), Own(id=True), object(), "", 3):
        with pytest.raises(UnidentifiedPrincipal) as refused:
            principal_key(faceless)
        assert refused.value.code == INTERNAL_ERROR
        assert "0x" not in refused.value.message  # no repr, no address


async def test_a_user_keeps_its_session_and_no_other_user_sees_it() -> None:
    async with authenticated(build_server()) as (client, url):
        sid = await open_session(client, url, "alice")
        # alice again, through a new SimpleUser object: the same owner
        r = await client.post(
            url,
            json=request(2, "tools/call", {"name": "slow"}),
            headers=legacy_headers(sid, "alice"),
        )
        assert r.status_code == 200, r.text
        event_ids = [e["id"] for e in sse_events(r.text) if "id" in e]
        assert event_ids
        r = await client.post(
            url,
            json=request(3, "resources/subscribe", {"uri": "mem://note"}),
            headers=legacy_headers(sid, "alice"),
        )
        assert r.status_code == 200
        assert "error" not in body_of(r)
        for intruder in ("bob", "Alice", "alice2"):
            h = legacy_headers(sid, intruder)
            r = await client.post(url, json=request(4, "tools/list"), headers=h)
            assert r.status_code == 404, intruder
            r = await client.post(
                url, json=request(5, "resources/unsubscribe", {"uri": "mem://note"}), headers=h
            )
            assert r.status_code == 404, intruder
            get = legacy_headers(
                sid, intruder, accept="text/event-stream", last_event_id=event_ids[0]
            )
            r = await client.get(url, headers=get)
            assert r.status_code == 404, intruder
            r = await client.delete(url, headers=h)
            assert r.status_code == 404, intruder
        r = await client.post(
            url, json=request(6, "tools/list"), headers=legacy_headers(sid, "alice")
        )
        assert r.status_code == 200
        r = await client.delete(url, headers=legacy_headers(sid, "alice"))
        assert r.status_code == 204


def first_round() -> JSON:
    return request(
        1, "tools/call", {"name": "confirm", "arguments": {}, "_meta": modern_meta(elicitation={})}
    )


def retry(state: str, key: str) -> JSON:
    params = {
        "name": "confirm",
        "arguments": {},
        "_meta": modern_meta(elicitation={}),
        "requestState": state,
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
    }
    return request(2, "tools/call", params)


async def test_request_state_is_bound_to_the_user_across_requests() -> None:
    async with authenticated(build_server()) as (client, url):
        h = modern_headers("tools/call", "confirm")
        r = await client.post(url, json=first_round(), headers={**h, **as_user("alice")})
        first = body_of(r)["result"]
        assert first["resultType"] == "input_required"
        state, key = first["requestState"], next(iter(first["inputRequests"]))
        r = await client.post(url, json=retry(state, key), headers={**h, **as_user("bob")})
        refused = body_of(r)
        assert refused["error"]["code"] == INVALID_PARAMS
        assert "different principal" in refused["error"]["message"]
        r = await client.post(url, json=retry(state, key), headers={**h, **as_user("alice")})
        done = body_of(r)["result"]
        assert done["content"][0]["text"] == "answered accept"


def test_a_principal_whose_field_raises_fails_closed() -> None:
    # Rule 5: neither the raw exception nor the next field (username "flaky" would be a
    # key that depends on whether the store answered this time).
    class Lazy:
        @property
        def subject(self) -> str:
            raise KeyError("sub")

    for broken in (Flaky("flaky"), Lazy()):
        with pytest.raises(UnidentifiedPrincipal) as refused:
            principal_key(broken)
        assert refused.value.code == INTERNAL_ERROR


@pytest.mark.parametrize("who", ["faceless", "flaky"])
async def test_a_user_without_stable_identity_is_refused_on_every_method(
    caplog: pytest.LogCaptureFixture, who: str
) -> None:
    faceless = as_user(who)
    async with authenticated(build_server()) as (client, url):
        sid = await open_session(client, url, "alice")
        caplog.set_level(logging.ERROR, logger="mcpkit.server")
        answers = [
            await client.post(
                url, json=request(1, "initialize", INIT_PARAMS), headers={**headers(), **faceless}
            ),
            await client.post(url, json=request(2, "tools/list"), headers=legacy_headers(sid, who)),
            await client.post(
                url,
                json=request(3, "tools/list", {"_meta": modern_meta()}),
                headers={**modern_headers("tools/list"), **faceless},
            ),
            await client.get(url, headers=legacy_headers(sid, who, accept="text/event-stream")),
            await client.delete(url, headers=legacy_headers(sid, who)),
        ]
        for r in answers:
            assert r.status_code == 500, r.text
            assert r.headers["content-type"].startswith("application/json")
            body = r.json()
            assert body["jsonrpc"] == "2.0"
            assert body["error"]["code"] == INTERNAL_ERROR
            assert "Someone" not in r.text  # display_name is never an identity
        r = await client.post(
            url, json=request(4, "tools/list"), headers=legacy_headers(sid, "alice")
        )
        assert r.status_code == 200  # alice's session was not touched
    logged = [rec.getMessage() for rec in caplog.records if rec.name == "mcpkit.server"]
    assert logged
    assert all(f"test_http_identity.{who.title()}" in line for line in logged)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_list_filter_sees_the_starlette_user(era: str) -> None:
    async with authenticated(build_server()) as (client, url):
        names: dict[str, list[str]] = {}
        for who in ("alice", "bob"):
            if era == "legacy":
                sid = await open_session(client, url, who)
                r = await client.post(
                    url, json=request(2, "tools/list"), headers=legacy_headers(sid, who)
                )
            else:
                r = await client.post(
                    url,
                    json=request(2, "tools/list", {"_meta": modern_meta()}),
                    headers={**modern_headers("tools/list"), **as_user(who)},
                )
            names[who] = [t["name"] for t in body_of(r)["result"]["tools"]]
    assert "alices_tool" in names["alice"]
    assert "alices_tool" not in names["bob"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_other_transports_refuse_a_principal_without_identity_too(era: str) -> None:
    server = build_server()
    with pytest.raises(JSONRPCError) as refused:
        async with Client(MemoryTransport(server, principal=Faceless()), mode=era):
            pass
    assert refused.value.code == INTERNAL_ERROR
    async with Client(MemoryTransport(server, principal=SimpleUser("alice")), mode=era) as ok:
        assert "alices_tool" in [t.name for t in await ok.list_tools()]


class TokenRejected(Exception):
    """What a real verifier raises for a token it cannot verify."""


def verifying(scope: Mapping[str, Any]) -> Any:
    """A ``principal_from_scope`` whose verifier raises for a bad token."""
    auth = dict(scope["headers"]).get(b"authorization", b"").decode()
    if auth == "Bearer forged":
        raise TokenRejected("signature mismatch")
    return auth.removeprefix("Bearer ") or None


async def test_a_principal_from_scope_that_raises_refuses_the_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Endpoint rule 5: the caller is unknown, so nothing is served: 500 with a JSON-RPC
    -32603 body on every method (not a bare crash of the ASGI app), and a log line."""
    app = http_app(build_server(), principal_from_scope=verifying)
    forged = as_user("forged")
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        sid = await open_session(client, url, "alice")
        caplog.set_level(logging.ERROR, logger="mcpkit.server.http")
        answers = [
            await client.post(
                url, json=request(1, "initialize", INIT_PARAMS), headers={**headers(), **forged}
            ),
            await client.post(
                url,
                json=request(3, "tools/list", {"_meta": modern_meta()}),
                headers={**modern_headers("tools/list"), **forged},
            ),
            await client.get(
                url, headers=legacy_headers(sid, "forged", accept="text/event-stream")
            ),
            await client.delete(url, headers=legacy_headers(sid, "forged")),
        ]
        for r in answers:
            assert r.status_code == 500, r.text
            assert r.headers["content-type"].startswith("application/json")
            assert r.json()["error"]["code"] == INTERNAL_ERROR
            assert "signature mismatch" not in r.text
        r = await client.post(
            url, json=request(4, "tools/list"), headers=legacy_headers(sid, "alice")
        )
        assert r.status_code == 200  # alice's session was not touched
    logged = [rec.getMessage() for rec in caplog.records if rec.name == "mcpkit.server.http"]
    assert any("TokenRejected" in line for line in logged)
