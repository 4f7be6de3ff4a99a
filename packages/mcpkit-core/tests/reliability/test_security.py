"""Security defaults, tested end to end (issue 7 §4; MCP ``basic/security_best_practices``,
``basic/transports`` §Security Warning, SEP-2322 for ``requestState``).

1. DNS-rebinding protection is on when a real ``mcpkit`` process binds loopback, with
   no configuration: a foreign ``Origin`` is 403, a foreign ``Host`` 421.
2. Session ids carry 256 random bits (at least 128 are required), never appear in
   event ids, and are invisible to any other principal on POST, GET (including
   ``Last-Event-ID`` resumption) and DELETE.
3. MRTR ``requestState``: tampered, replayed past expiry, replayed by another principal
   or sealed by another server is refused with -32602 and nothing in it is used.
4. Nothing resolves a network ``$ref``: neither the server validating a tool's
   arguments nor the client validating ``structuredContent``; a live listener on
   loopback proves no connection is even attempted.
5. Log output at DEBUG (mcpkit, uvicorn, httpx2) never contains a bearer token or a
   ``requestState``, on success and on every error path.
"""

from __future__ import annotations

import base64
import logging
import socket
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import pytest
from demo_process import demo_process
from http_helpers import (
    BOTH,
    INIT_PARAMS,
    LATEST,
    body_of,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
)

from mcpkit.client import Client, ToolOutputError
from mcpkit.core.jsonrpc import INVALID_PARAMS
from mcpkit.core.jsonschema import SchemaError
from mcpkit.server import Context, Server
from mcpkit.server.http.sessions import new_session_id
from mcpkit.server.mrtr import RequestStateSealer

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
TOKEN = "sk-live-7f3b9c1d2e4a5b6c8d9e0f1a2b3c4d5e"
SECRET_BEARER = f"Bearer {TOKEN}"


# -- 1. DNS rebinding ------------------------------------------------------------------------


async def test_a_real_loopback_server_refuses_foreign_origin_and_host_by_default() -> None:
    with demo_process() as demo:
        async with httpx2.AsyncClient(timeout=10) as client:
            body = request(1, "initialize", INIT_PARAMS)
            r = await client.post(
                demo.url, json=body, headers={**headers(), "origin": "http://attacker.test"}
            )
            assert r.status_code == 403
            assert r.json()["id"] is None
            assert r.json()["error"]["code"] == -32600
            r = await client.post(
                demo.url, json=body, headers={**headers(), "host": "attacker.test:80"}
            )
            assert r.status_code == 421
            local = "http://127.0.0.1:1"  # kind-ok: fixed-port an Origin value, never connected
            r = await client.post(demo.url, json=body, headers={**headers(), "origin": local})
            assert r.status_code == 200  # a local origin is fine


# -- 2. session ids -------------------------------------------------------------------------------


def test_session_ids_carry_256_random_bits_and_never_repeat() -> None:
    ids = [new_session_id() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    for sid in ids[:100]:
        raw = base64.urlsafe_b64decode(sid + "=" * (-len(sid) % 4))
        assert len(raw) * 8 >= 256
        assert all(0x21 <= ord(c) <= 0x7E for c in sid)
    # no structure: every position takes many values (a counter or clock would not)
    for position in range(0, 40, 8):
        assert len({sid[position] for sid in ids}) > 32


def principal_server() -> tuple[Server, Any]:
    server = Server("principals", "1.0.0")

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Streams, closes its connection (resumable), then answers."""
        await ctx.info("started")
        await ctx.close_stream(retry_ms=10)
        await anyio.sleep(0.05)
        return "done"

    def principal(scope: JSON) -> Any:
        who = dict(scope["headers"]).get(b"x-user")
        return SimpleNamespace(subject=who.decode()) if who else None

    return server, principal


async def test_a_session_is_invisible_to_every_other_principal_on_every_method() -> None:
    server, principal = principal_server()
    async with mcp_http(server, principal_from_scope=principal) as (client, url, endpoint):
        alice = {"x-user": "alice"}
        r = await client.post(
            url, json=request(1, "initialize", INIT_PARAMS), headers={**headers(), **alice}
        )
        sid = r.headers["mcp-session-id"]
        await client.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**headers(sid), **alice},
        )
        r = await client.post(
            url, json=request(2, "tools/call", {"name": "slow"}), headers={**headers(sid), **alice}
        )
        event_ids = [line[3:].strip() for line in r.text.splitlines() if line.startswith("id:")]
        assert event_ids
        assert all(sid not in eid for eid in event_ids)  # event ids reveal nothing of the session
        for who in ({"x-user": "mallory"}, {}):
            r = await client.post(
                url, json=request(3, "tools/list"), headers={**headers(sid), **who}
            )
            assert r.status_code == 404
            get = {
                **headers(sid, accept="text/event-stream"),
                **who,
                "last-event-id": event_ids[-1],
            }
            r = await client.get(url, headers=get)
            assert r.status_code == 404
            assert "done" not in r.text
            r = await client.delete(url, headers={**headers(sid), **who})
            assert r.status_code == 404
        assert len(endpoint.sessions) == 1
        r = await client.post(url, json=request(4, "tools/list"), headers={**headers(sid), **alice})
        assert r.status_code == 200


# -- 3. requestState -------------------------------------------------------------------------------


def mrtr_server(ttl_s: float = 600.0, secret: bytes | None = None) -> Server:
    server = Server("mrtr", "1.0.0", state_ttl_s=ttl_s, state_secret=secret or b"k" * 32)

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Asks the user to confirm."""
        answer = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"answered {answer['action']}"

    return server


CAPS = {"elicitation": {}}


def first_round() -> JSON:
    return request(
        1, "tools/call", {"name": "confirm", "arguments": {}, "_meta": modern_meta(**CAPS)}
    )


def retry(state: str, key: str) -> JSON:
    return request(
        2,
        "tools/call",
        {
            "name": "confirm",
            "arguments": {},
            "_meta": modern_meta(**CAPS),
            "requestState": state,
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        },
    )


async def round_one(
    client: httpx2.AsyncClient, url: str, extra: dict[str, str] | None = None
) -> tuple[str, str]:
    r = await client.post(
        url,
        json=first_round(),
        headers={**modern_headers("tools/call", "confirm"), **(extra or {})},
    )
    result = body_of(r)["result"]
    assert result["resultType"] == "input_required"
    return result["requestState"], next(iter(result["inputRequests"]))


def tamper(state: str) -> list[str]:
    body, mac = state.split(".")
    raw = bytearray(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    raw[len(raw) // 2] ^= 0x01
    flipped = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    return [
        f"{flipped}.{mac}",
        f"{body}.{mac[:-2]}AA",
        state + "x",
        "",
        "a.b.c",
        state.split(".")[0],
    ]


async def test_tampered_request_state_is_refused_and_the_untampered_one_works() -> None:
    async with mcp_http(mrtr_server()) as (client, url, _):
        state, key = await round_one(client, url)
        for bad in tamper(state):
            r = await client.post(
                url, json=retry(bad, key), headers=modern_headers("tools/call", "confirm")
            )
            reply = body_of(r)
            assert reply["error"]["code"] == INVALID_PARAMS, (bad, reply)
            assert "requestState refused" in reply["error"]["message"]
        r = await client.post(
            url, json=retry(state, key), headers=modern_headers("tools/call", "confirm")
        )
        assert body_of(r)["result"]["content"][0]["text"] == "answered accept"


async def test_request_state_replayed_past_its_expiry_is_refused() -> None:
    async with mcp_http(mrtr_server(ttl_s=0.2)) as (client, url, _):
        state, key = await round_one(client, url)
        await anyio.sleep(0.4)
        r = await client.post(
            url, json=retry(state, key), headers=modern_headers("tools/call", "confirm")
        )
        reply = body_of(r)
        assert reply["error"]["code"] == INVALID_PARAMS
        assert "expired" in reply["error"]["message"]


async def test_request_state_of_another_principal_or_server_is_refused() -> None:
    def principal(scope: JSON) -> Any:
        who = dict(scope["headers"]).get(b"x-user")
        return SimpleNamespace(subject=who.decode()) if who else None

    async with mcp_http(mrtr_server(), principal_from_scope=principal) as (client, url, _):
        state, key = await round_one(client, url, {"x-user": "alice"})
        r = await client.post(
            url,
            json=retry(state, key),
            headers={**modern_headers("tools/call", "confirm"), "x-user": "mallory"},
        )
        assert "different principal" in body_of(r)["error"]["message"]
    async with mcp_http(mrtr_server(secret=b"z" * 32)) as (client, url, _):
        r = await client.post(
            url, json=retry(state, key), headers=modern_headers("tools/call", "confirm")
        )
        assert "integrity check failed" in body_of(r)["error"]["message"]


def test_sealer_rejects_expired_state_even_when_the_mac_is_valid() -> None:
    sealer = RequestStateSealer(b"s" * 32, ttl_s=-1.0)
    token = sealer.seal(method="tools/call", digest="d", principal=None, answers={})
    with pytest.raises(Exception, match="expired"):
        sealer.open(token, method="tools/call", digest="d", principal=None)


# -- 4. no network $ref ------------------------------------------------------------------------


class Listener:
    """A loopback TCP listener that counts connection attempts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    with Listener() as found:
        yield found


async def test_the_server_never_fetches_a_network_ref_in_a_tool_schema(listener: Listener) -> None:
    """Refused when the tool is registered (it used to fail every call with -32603)."""
    server = Server("refs", "1.0.0")
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": f"http://127.0.0.1:{listener.port}/schema.json"}},
    }

    def takes(a: Any = None) -> str:
        return "ran"

    with pytest.raises(SchemaError, match="cannot be resolved"):
        server.add_tool(takes, name="takes", input_schema=schema)
    assert "takes" not in server.tools
    await anyio.sleep(0.2)
    assert listener.hits == 0


async def test_the_client_never_fetches_a_network_ref_in_an_output_schema(
    listener: Listener,
) -> None:
    server = Server("refs", "1.0.0")
    out = {
        "type": "object",
        "properties": {"v": {"$ref": f"http://127.0.0.1:{listener.port}/v.json"}},
    }

    def gives() -> dict[str, Any]:
        return {"v": 1}

    # An mcpkit server refuses such a schema at registration (issue 11 §5); advertise it
    # anyway, as another server might, to test the client.
    server.add_tool(gives, name="gives", output_schema={"type": "object"})
    server.tools["gives"].definition["outputSchema"] = out
    async with Client(server, mode="legacy") as client:
        with pytest.raises(ToolOutputError, match="outputSchema is unusable"):
            await client.call_tool("gives")
    await anyio.sleep(0.2)
    assert listener.hits == 0


# -- 5. secrets never logged ---------------------------------------------------------------------


def secret_server() -> Server:
    server = mrtr_server()

    @server.tool()
    def explode(token: str) -> str:
        """Fails with an unexpected exception (logged with its traceback)."""
        raise RuntimeError("boom")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """Reads the Authorization header (handlers may; logs must not show it)."""
        value = (ctx.transport or {}).get("headers", {}).get("authorization", "")
        return "authorized" if value else "anonymous"

    return server


async def test_logs_never_show_bearer_tokens_or_request_state(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("mcpkit", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx2", "httpcore"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    auth = {"authorization": SECRET_BEARER}
    states: list[str] = []
    try:
        async with mcp_http(secret_server()) as (client, url, _):
            sid = await initialize(client, url)
            legacy = {**headers(sid), **auth}
            await client.post(
                url, json=request(2, "tools/call", {"name": "whoami"}), headers=legacy
            )
            await client.post(
                url,
                json=request(3, "tools/call", {"name": "explode", "arguments": {"token": TOKEN}}),
                headers=legacy,
            )
            await client.post(url, content=b"{not json " + TOKEN.encode(), headers=legacy)
            await client.post(url, json=request(4, "nope/" + TOKEN), headers=legacy)
            await client.post(
                url, json=request(5, "tools/list"), headers={**headers("bogus-" + TOKEN), **auth}
            )
            await client.post(
                url, json=request(6, "tools/list"), headers={**legacy, "origin": "http://evil.test"}
            )
            state, key = await round_one(client, url, auth)
            states.append(state)
            for bad in tamper(state):
                await client.post(
                    url,
                    json=retry(bad, key),
                    headers={**modern_headers("tools/call", "confirm"), **auth},
                )
            await client.post(
                url,
                json=retry(state, key),
                headers={**modern_headers("tools/call", "confirm"), **auth},
            )
        from mcpkit.client import HttpTransport

        async with mcp_http(secret_server()) as (_, url, _):
            transport = HttpTransport(url, headers={"Authorization": SECRET_BEARER})
            async with Client(transport, mode="modern", elicitation=_yes) as client:
                await client.call_tool("confirm")
                await client.call_tool("whoami")
                with pytest.raises(Exception, match="nope"):
                    await client.request("nope/x")
    finally:
        for name in ("mcpkit", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx2", "httpcore"):
            logging.getLogger(name).setLevel(logging.NOTSET)
    text = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert caplog.records, "nothing was logged: the test would prove nothing"
    assert TOKEN not in text
    for state in states:
        assert state not in text
        assert state.split(".")[1] not in text  # not even the MAC


async def _yes(params: JSON) -> JSON:
    return {"action": "accept", "content": {"ok": True}}


_ = (BOTH, LATEST)
