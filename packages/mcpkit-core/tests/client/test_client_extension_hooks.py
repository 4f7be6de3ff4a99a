"""Client hooks for extensions. Result-type handlers (the tasks extension's
``resultType: "task"`` is one): registered types are handed to their handler,
``accept_result_types`` returns them as they come, unknown ones are refused. Name params:
an extension method's ``Mcp-Name`` field (SEP-2243), e.g. ``tasks/get`` -> ``taskId``."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mcpkit.client import Client, ProtocolViolationError
from mcpkit.client.headers import NAME_PARAMS, routing_headers
from mcpkit.server import Server
from mcpkit.server.app import MethodHandler
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


def deferring_server() -> Server:
    """A server whose ``tools/call`` answers ``resultType: "deferred"`` with a ticket that
    ``tickets/redeem`` turns into the real result (a stand-in for any extension)."""
    server = Server("deferred")
    results: dict[str, JSON] = {}
    tickets = itertools.count()

    @server.tool()
    def double(n: int) -> int:
        return 2 * n

    async def defer(ctx: Context, call_next: MethodHandler) -> JSON:
        if ctx.method != "tools/call" or ctx.era != "modern":
            return await call_next(ctx)
        ticket = f"t{next(tickets)}"
        results[ticket] = await call_next(ctx)
        return {"resultType": "deferred", "ticket": ticket}

    async def redeem(ctx: Context) -> JSON:
        return results.pop(ctx.params["ticket"])

    server.add_middleware(defer)
    server.add_method("tickets/redeem", redeem, eras=("modern",))
    return server


async def test_a_registered_result_type_is_resolved_by_its_handler() -> None:
    async with Client(deferring_server(), mode="modern") as client:
        seen: list[tuple[str, JSON]] = []

        async def resolve(method: str, params: JSON | None, result: JSON) -> JSON:
            seen.append((method, result))
            return await client.request("tickets/redeem", {"ticket": result["ticket"]})

        client.add_result_handler("deferred", resolve)
        typed = await client.call_tool("double", {"n": 21})
        raw = await client.request(
            "tools/call",
            {"name": "double", "arguments": {"n": 1}},
            accept_result_types=("deferred",),
        )
    assert typed.structured_content == {"result": 42}
    assert [m for m, _ in seen] == ["tools/call"]
    assert raw["resultType"] == "deferred"
    assert raw["ticket"] == "t1"


async def test_an_unregistered_result_type_is_a_protocol_violation() -> None:
    async with Client(deferring_server(), mode="modern") as client:
        with pytest.raises(ProtocolViolationError, match="deferred"):
            await client.call_tool("double", {"n": 1})


def test_name_params_decide_which_field_mcp_name_mirrors() -> None:
    message = {"method": "jobs/get", "params": {"jobId": "j-1", "name": "ignored"}}
    assert routing_headers(message, {}) == {"Mcp-Method": "jobs/get"}
    with_param = routing_headers(message, {}, {**NAME_PARAMS, "jobs/get": "jobId"})
    assert with_param == {"Mcp-Method": "jobs/get", "Mcp-Name": "j-1"}


async def test_add_name_param_reaches_the_open_stream() -> None:
    async with Client(deferring_server(), mode="modern") as client:
        client.add_name_param("tickets/redeem", "ticket")
        config = client.session.stream.config
    assert config.name_params["tickets/redeem"] == "ticket"
    assert config.name_params["tools/call"] == "name"
