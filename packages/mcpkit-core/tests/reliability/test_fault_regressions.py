"""Regression tests for the faults the fuzz suite found, one per kind of fault, each on
the transports it reached (see ``docs/reliability.md``, "Faults found").

1. ``NaN``/``Infinity`` were accepted as JSON on input, and written on output (a strict
   peer cannot parse them): now -32700 on input, ``null`` on output.
2. A handler result that cannot be encoded as JSON crashed the whole connection: now
   that request is answered -32603 and serving goes on.
3. A serialised in-memory frame that did not parse crashed the connection: now -32700.
4. ``logging/setLevel`` (and the 2026-07-28 ``logLevel`` key) with an unhashable value
   was an internal error (-32603): now -32602 naming the value.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from http_helpers import (
    body_of,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
)
from peer import raw
from stdio_process import spawn

from mcpkit.core.jsonrpc import dumps, loads
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
HERE = Path(__file__).parent


def strict(data: bytes | str) -> Any:
    """Parse as RFC 8259 JSON: NaN and Infinity are refused."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(data, parse_constant=refuse)


def odd_server() -> Server:
    server = Server("odd", "1.0.0")

    async def unencodable(ctx: Any) -> JSON:
        return {"value": object()}

    async def non_finite(ctx: Any) -> JSON:
        return {"values": [float("nan"), float("inf"), 1.5]}

    server.add_method("x/unencodable", unencodable)
    server.add_method("x/nonFinite", non_finite)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


# -- 1. strict JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["NaN", "[Infinity]", '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}'],
)
def test_non_finite_numbers_are_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="at line 1 column"):
        loads(text)


def test_non_finite_floats_are_written_as_null() -> None:
    assert (
        dumps({"a": float("nan"), "b": [float("inf"), float("-inf")]})
        == b'{"a":null,"b":[null,null]}'
    )


async def test_nan_in_a_request_is_a_parse_error_in_memory_and_serving_continues() -> None:
    async with raw(odd_server()) as wire:
        await wire.initialize()
        await wire.stream._send.send(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}')  # type: ignore[attr-defined]
        reply = await wire.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert "result" in await wire.call(2, "ping")


async def test_nan_in_a_post_is_400_parse_error() -> None:
    async with mcp_http(odd_server()) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            content=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
            headers=headers(sid),
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32700


async def test_a_non_finite_result_reaches_the_peer_as_valid_json_over_stdio() -> None:
    argv = [sys.executable, str(HERE / "limits_server.py"), "{}"]
    async with spawn(argv) as server:
        await server.initialize()
        await server.send(request(1, "tools/call", {"name": "infinite"}))
        line = await server.read_line()
        reply = strict(line)
        assert reply["id"] == 1
        assert "Infinity" not in line.decode()
        # and the tool's outputSchema is not broken by a null (issue 11 §5)
        assert reply["result"]["isError"] is True
        assert "result: not a finite number" in reply["result"]["content"][0]["text"]


async def test_a_non_finite_result_reaches_the_peer_as_valid_json_over_http() -> None:
    async with mcp_http(odd_server()) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(url, json=request(1, "x/nonFinite"), headers=headers(sid))
        assert strict(r.text)["result"]["values"] == [None, None, 1.5]


# -- 2. unencodable results ----------------------------------------------------------------------


async def test_an_unencodable_result_is_answered_internal_error_and_the_connection_lives() -> None:
    async with raw(odd_server()) as wire:
        await wire.initialize()
        reply = await wire.call(1, "x/unencodable")
        assert reply["error"]["code"] == -32603
        assert "could not be encoded as JSON" in reply["error"]["message"]
        assert "result" in await wire.call(2, "ping")


async def test_an_unencodable_result_in_a_2025_03_26_batch_spoils_only_its_own_reply() -> None:
    async with raw(odd_server()) as wire:
        await wire.initialize("2025-03-26")
        await wire.send([request(1, "x/unencodable"), request(2, "ping")])
        replies = await wire.recv()
        by_id = {r["id"]: r for r in replies}
        assert by_id[1]["error"]["code"] == -32603
        assert by_id[2]["result"] == {}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_unencodable_result_over_http_is_internal_error_on_both_eras(era: str) -> None:
    async with mcp_http(odd_server()) as (client, url, _):
        if era == "legacy":
            sid = await initialize(client, url)
            r = await client.post(url, json=request(1, "x/unencodable"), headers=headers(sid))
        else:
            r = await client.post(
                url,
                json=request(1, "x/unencodable", {"_meta": modern_meta()}),
                headers=modern_headers("x/unencodable"),
            )
        assert body_of(r)["error"]["code"] == -32603


# -- 3. garbage on a serialised in-memory stream -------------------------------------------------


@pytest.mark.parametrize("frame", [b"\xff\xfe", b"{not json", b'"\\ud800"'])
async def test_a_frame_that_does_not_parse_in_memory_is_a_parse_error(frame: bytes) -> None:
    async with raw(odd_server()) as wire:
        await wire.stream._send.send(frame)  # type: ignore[attr-defined]
        reply = await wire.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert "result" in await wire.call(1, "ping")


# -- 4. unhashable values where a name was expected ----------------------------------------------


@pytest.mark.parametrize("level", [{"a": 1}, ["debug"], 3, None])
async def test_set_level_with_a_non_string_is_invalid_params(level: Any) -> None:
    async with raw(odd_server()) as wire:
        await wire.initialize()
        reply = await wire.call(1, "logging/setLevel", {"level": level})
        assert reply["error"]["code"] == -32602


async def test_modern_log_level_that_is_not_a_string_is_invalid_params() -> None:
    meta = {**modern_meta(), "io.modelcontextprotocol/logLevel": {"x": 1}}
    async with raw(odd_server()) as wire:
        reply = await wire.call(1, "tools/list", {"_meta": meta})
        assert reply["error"]["code"] == -32602
    async with mcp_http(odd_server()) as (client, url, _):
        r = await client.post(
            url,
            json=request(1, "tools/list", {"_meta": meta}),
            headers=modern_headers("tools/list"),
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32602
