"""A hostile client against MRTR (SEP-2322) over real HTTP: tampered answers (issue 11).

A real uvicorn serves the endpoint on 127.0.0.1; httpx2 sends 2026-07-28 requests whose
``requestState`` is forged, modified, sealed by another server, expired or replayed, and
whose ``inputResponses`` carry keys never asked, wrong types and huge values. Every case
asserts the documented answer (``mcpkit.server.mrtr`` rules 2 and 4,
``mcpkit.server.answers``), an answer within :data:`DEADLINE_S` (5x :data:`BOUND_S`),
and for the huge value an error of bounded size and bounded memory (tracemalloc).
"""

from __future__ import annotations

import base64
import json
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcpkit.core.jsonrpc import INVALID_PARAMS
from mcpkit.server import Server
from mcpkit.server.context import Context
from mcpkit.server.mrtr import RequestStateSealer, request_digest

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))
from http_helpers import body_of, mcp_http, modern_headers, modern_meta

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
BOUND_S = 2.0
"""Each refused request is answered well within this (a parse, an HMAC, a check)."""
DEADLINE_S = 5 * BOUND_S
HUGE_CHARS = 3 * 1024 * 1024
NAME: JSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build(**options: Any) -> Server:
    server = Server("hostile-mrtr", **options)

    @server.tool()
    async def greet(ctx: Context, times: int = 1) -> str:
        first = await ctx.elicit("Name?", NAME, key="name")
        second = await ctx.elicit(
            "Colour?",
            {"type": "object", "properties": {"colour": {"type": "string"}}},
            key="colour",
        )
        return f"{first['content']['name']} likes {second.get('content', {}).get('colour')}" * times

    return server


class Hostile:
    def __init__(self, client: httpx2.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.next_id = 0

    async def call(self, **params: Any) -> JSON:
        """tools/call greet with ``params`` added; the JSON-RPC response, within the deadline."""
        self.next_id += 1
        full: JSON = {"name": "greet", "arguments": {}, "_meta": modern_meta(elicitation={})}
        full.update(params)
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": full}
        with anyio.fail_after(DEADLINE_S):
            r = await self.client.post(
                self.url, json=msg, headers=modern_headers("tools/call", "greet")
            )
        return body_of(r)

    async def refused(self, why: str, **params: Any) -> JSON:
        reply = await self.call(**params)
        assert "result" not in reply, reply
        assert reply["error"]["code"] == INVALID_PARAMS
        assert why in reply["error"]["message"], reply["error"]["message"]
        return reply["error"]

    async def first_state(self, **params: Any) -> str:
        reply = await self.call(**params)
        assert reply["result"]["resultType"] == "input_required"
        return reply["result"]["requestState"]


@pytest.fixture
async def peer() -> AsyncIterator[Hostile]:
    async with mcp_http(build(state_secret=b"k" * 32)) as (client, url, _):
        yield Hostile(client, url)


def accept(**content: Any) -> JSON:
    return {"action": "accept", "content": content}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_a_forged_request_state_is_refused(peer: Hostile) -> None:
    body = _b64(json.dumps({"v": 1, "m": "tools/call", "a": {"name": accept(name="x")}}).encode())
    for forged in ("", "garbage", "a.b.c", f"{body}.{_b64(b'x' * 32)}", "!!!.???", 12, None, []):
        await self_refused(peer, forged)


async def self_refused(peer: Hostile, state: Any) -> None:
    reply = await peer.call(requestState=state, inputResponses={"colour": accept(colour="red")})
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "requestState refused" in reply["error"]["message"]


async def test_a_modified_request_state_is_refused(peer: Hostile) -> None:
    state = await peer.first_state()
    raw_b64, mac_b64 = state.split(".")
    body = json.loads(_unb64(raw_b64))
    body["a"] = {"name": accept(name="mallory")}  # smuggle an answer in
    swapped = f"{_b64(json.dumps(body).encode())}.{mac_b64}"
    flipped = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    for bad in (swapped, flipped, state + "-TAMPERED"):
        await peer.refused("requestState refused", requestState=bad)


async def test_a_state_sealed_by_another_server_is_refused(peer: Hostile) -> None:
    params: JSON = {"name": "greet", "arguments": {}}
    other = RequestStateSealer(b"o" * 32).seal(
        method="tools/call",
        digest=request_digest("tools/call", params),
        principal=None,
        answers={"name": accept(name="mallory")},
    )
    await peer.refused("integrity check failed", requestState=other)


async def test_a_replayed_state_is_bound_to_its_request_and_expires() -> None:
    async with mcp_http(build(state_secret=b"k" * 32, state_ttl_s=0.3)) as (client, url, _):
        peer = Hostile(client, url)
        state = await peer.first_state(inputResponses={"name": accept(name="al")})
        # Same request, within the TTL: the documented stateless behaviour is to accept
        # it again (SEP-2322 bounds replay by principal, request and expiry only).
        for _ in range(2):
            again = await peer.call(
                requestState=state, inputResponses={"colour": accept(colour="red")}
            )
            assert again["result"]["content"][0]["text"] == "al likes red"
        await peer.refused("different request", requestState=state, arguments={"times": 2})
        await anyio.sleep(0.6)
        await peer.refused("expired", requestState=state)


async def test_answers_for_keys_never_asked_are_ignored_however_many(peer: Hostile) -> None:
    junk = {f"k{i}": {"action": "nonsense", "content": "x" * 10} for i in range(20_000)}
    reply = await peer.call(inputResponses={**junk, "name": accept(name="al")})
    assert reply["result"]["resultType"] == "input_required"
    assert list(reply["result"]["inputRequests"]) == ["colour"]
    # Nothing unasked is carried forward in the sealed state.
    assert len(reply["result"]["requestState"]) < 2_000


@pytest.mark.parametrize(
    ("responses", "why"),
    [
        ([], "inputResponses must map keys to result objects"),
        ("x", "inputResponses must map keys to result objects"),
        (None, "inputResponses must map keys to result objects"),
        ({"name": 5}, "inputResponses must map keys to result objects"),
        ({"name": [accept(name="al")]}, "inputResponses must map keys to result objects"),
        ({"name": accept(name=5)}, "content.name: 5 is not of type 'string'"),
        ({"name": accept(name={"nested": 1})}, "content.name"),
        ({"name": {"action": "accept", "content": "x"}}, "content"),
        ({"name": accept(bogus=1)}, "content: 'name' is a required property"),
        ({"name": {"roots": []}}, "action: required field is missing"),
    ],
)
async def test_wrong_types_are_invalid_params(peer: Hostile, responses: Any, why: str) -> None:
    error = await peer.refused(why, inputResponses=responses)
    assert "AttributeError" not in error["message"]
    assert "KeyError" not in error["message"]


async def test_a_huge_wrong_value_gets_a_small_error_in_bounded_memory(peer: Hostile) -> None:
    huge = "x" * HUGE_CHARS
    tracemalloc.start()
    try:
        error = await peer.refused(
            "content.name", inputResponses={"name": accept(name={"deep": huge})}
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(json.dumps(error)) < 8 * 1024  # the error does not echo the value back
    # Client and server share this process: the request is encoded, sent, buffered,
    # parsed and checked, a handful of copies of a 3 MiB value at most.
    assert peak < 16 * HUGE_CHARS


async def test_a_huge_valid_value_is_accepted_once_asked(peer: Hostile) -> None:
    # Size is the transport's business (max_message_bytes); a valid answer is an answer.
    big = "y" * (HUGE_CHARS // 4)
    reply = await peer.call(
        inputResponses={"name": accept(name=big), "colour": accept(colour="red")}
    )
    assert reply["result"]["content"][0]["text"] == f"{big} likes red"
