"""The generated module served: in process (async and sync servicers) and over real gRPC on
loopback (``grpc.aio`` and sync channels), on both protocol eras, driven by mcpkit's
client: tools/list schemas are 2020-12, every field type round-trips, status errors,
streaming progress, timeouts, resources, prompts, completions, elicitation, sampling."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from test_schema import FULL

from mcpkit.client import Client
from mcpkit.server import Server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]
ERAS = ["legacy", "modern"]


@pytest.fixture(scope="module")
def mods(generated: Path) -> Any:
    import servicer
    from library.v1 import library_mcp, library_pb2, library_pb2_grpc

    class M:
        mcp = library_mcp
        pb = library_pb2
        grpc = library_pb2_grpc
        lib = servicer

    return M


@asynccontextmanager
async def grpc_backed(mods: Any, servicer: Any, sync: bool = False) -> AsyncIterator[Server]:
    """A grpc.aio server on 127.0.0.1 port 0 and an MCP server forwarding to it."""
    import grpc
    import grpc.aio

    grpc_server = grpc.aio.server()
    mods.grpc.add_LibraryServicer_to_server(servicer, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    server = Server("library")
    try:
        if sync:
            channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            mods.mcp.forward_library(server, channel, completer=mods.lib.Completer())
            try:
                yield server
            finally:
                channel.close()
        else:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                mods.mcp.forward_library(server, channel, completer=mods.lib.Completer())
                yield server
    finally:
        await grpc_server.stop(None)


@asynccontextmanager
async def in_process(mods: Any, servicer: Any) -> AsyncIterator[Server]:
    server = Server("library")
    mods.mcp.register_library(server, servicer, completer=mods.lib.Completer())
    yield server


BACKENDS = ["in-process", "grpc-aio", "grpc-sync"]


def backend(mods: Any, which: str, servicer: Any = None) -> Any:
    servicer = servicer or mods.lib.Library()
    if which == "in-process":
        return in_process(mods, servicer)
    return grpc_backed(mods, servicer, sync=which == "grpc-sync")


@pytest.mark.parametrize("which", BACKENDS)
@pytest.mark.parametrize("era", ERAS)
async def test_tools_list_schemas_are_2020_12_and_every_field_round_trips(
    mods: Any, which: str, era: str
) -> None:
    async with backend(mods, which) as server, Client(server, mode=era) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in await client.list_tools()}
        assert sorted(tools) == [
            "library_borrow",
            "library_count",
            "library_echo",
            "library_search_books",
        ]
        for tool in tools.values():
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            if tool.output_schema is not None:
                jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tools["library_search_books"].description == (
            "Find books whose title contains the query."
        )
        echo = tools["library_echo"]
        jsonschema.Draft202012Validator(echo.input_schema).validate(FULL)
        result = await client.call_tool("library_echo", FULL)
        assert not result.is_error
        back = result.structured_content
        assert back is not None
        for field, value in FULL.items():
            assert back[field] == value, field
        # the servicer saw the same proto value the arguments describe
        sent = mods.pb.Everything()
        from mcpkit.experimental.protogen.schema import to_message

        assert to_message(mods.pb.Everything, back) == to_message(mods.pb.Everything, FULL) != sent
        assert base64.b64decode(back["f_bytes"]) == b"\x00\x01\x02\xff"


@pytest.mark.parametrize("which", BACKENDS)
async def test_summary_structured_content_and_status_errors(mods: Any, which: str) -> None:
    async with backend(mods, which) as server, Client(server) as client:
        found = await client.call_tool("library_search_books", {"query": "dune", "limit": 1})
        assert found.content[0].text == "Found 1 books for dune"  # type: ignore[union-attr]
        assert found.structured_content == {
            "books": [{"id": "b1", "title": "Dune", "genre": "GENRE_FICTION", "year": 1965}],
            "total": 1,
            "query": "dune",
        }
        missing = await client.call_tool("library_borrow", {"book_id": "zz"})
        assert missing.is_error
        assert missing.structured_content == {
            "code": "NOT_FOUND",
            "message": "no book 'zz'",
            "details": [],
        }
        bad = await client.call_tool("library_search_books", {"query": 3})
        assert bad.is_error
        assert "query" in bad.content[0].text


@pytest.mark.parametrize("which", BACKENDS)
async def test_server_streaming_reports_progress_and_returns_the_last(
    mods: Any, which: str
) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with backend(mods, which) as server, Client(server, mode="legacy") as client:
        result = await client.call_tool("library_count", {"n": 3}, on_progress=on_progress)
        assert result.content[0].text == "3"  # type: ignore[union-attr]
        assert seen == [(1, "1"), (2, "2")]
        empty = await client.call_tool("library_count", {"n": 0})
        assert empty.is_error
        assert "without a message" in empty.content[0].text


@pytest.mark.parametrize("which", ["grpc-aio", "grpc-sync"])
async def test_a_cancelled_streaming_tool_cancels_its_grpc_call(mods: Any, which: str) -> None:
    """The MCP call is cancelled after the first streamed message: the gRPC call ends too
    (the server sees it done) instead of running on, or holding a worker thread, until the
    service's stream ends."""
    import asyncio
    import threading

    ended = threading.Event()

    class Endless(mods.lib.Library):
        async def Count(self, request: Any, context: Any) -> Any:  # type: ignore[override]
            context.add_done_callback(lambda _: ended.set())
            yield mods.pb.CountReply(n=1)
            yield mods.pb.CountReply(n=2)  # the first is reported as progress when this comes
            await asyncio.Event().wait()  # never set: only a cancellation ends the stream

    async with backend(mods, which, Endless()) as server, Client(server) as client:
        async with anyio.create_task_group() as tg:

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                tg.cancel_scope.cancel()

            tg.start_soon(
                lambda: client.call_tool("library_count", {"n": 2}, on_progress=on_progress)
            )
        with anyio.fail_after(30):  # a bound on a hang, not a timing assumption
            await anyio.to_thread.run_sync(ended.wait)


@pytest.mark.parametrize("which", ["grpc-aio", "grpc-sync"])
async def test_a_cancelled_unary_tool_cancels_its_grpc_call(mods: Any, which: str) -> None:
    """As above for a unary call (no timeout on the method): cancelled while the service
    works, the gRPC call ends and no worker thread is left waiting on it."""
    import asyncio
    import threading

    entered = asyncio.Event()
    ended = threading.Event()

    class Stuck(mods.lib.Library):
        async def SearchBooks(self, request: Any, context: Any) -> Any:  # type: ignore[override]
            context.add_done_callback(lambda _: ended.set())
            entered.set()
            await asyncio.Event().wait()  # never set: only a cancellation ends the call

    async with backend(mods, which, Stuck()) as server, Client(server) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: client.call_tool("library_search_books", {"query": "x"}))
            await entered.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(30):  # a bound on a hang, not a timing assumption
            await anyio.to_thread.run_sync(ended.wait)


@pytest.mark.parametrize("which", BACKENDS)
@pytest.mark.parametrize("era", ERAS)
async def test_resources_prompts_and_completions(mods: Any, which: str, era: str) -> None:
    async with backend(mods, which) as server, Client(server, mode=era) as client:  # type: ignore[arg-type]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["library://books/{book_id}"]
        statics = await client.list_resources()
        assert [(r.uri, r.mime_type) for r in statics] == [("library://hours", "application/json")]
        book = await client.read_resource("library://books/b1")
        assert book.contents[0].text == (  # type: ignore[union-attr]
            '{"id":"b1","title":"Dune","genre":"GENRE_FICTION","year":1965}'
        )
        hours = await client.read_resource("library://hours")
        text = hours.contents[0].text  # type: ignore[union-attr]
        assert json.loads(text) == {"hours": {"mon": "9-17", "sat": "10-14"}}
        prompts = await client.list_prompts()
        assert [(a.name, a.required) for a in prompts[0].arguments or []] == [
            ("genre", True),
            ("count", False),
        ]
        got = await client.get_prompt("library_recommend", {"genre": "science", "count": "2"})
        assert got.messages[0].content.text == "Recommend 2 science book(s)."  # type: ignore[union-attr]
        ref = {"type": "ref/resource", "uri": "library://books/{book_id}"}
        done = await client.complete(ref, "book_id", "b")
        assert done.completion.values == ["b1", "b2", "b3"]
        prompt_ref = {"type": "ref/prompt", "name": "library_recommend"}
        done = await client.complete(prompt_ref, "genre", "sc")
        assert done.completion.values == ["science"]


@pytest.mark.parametrize(
    "arguments", [{"genre": "x", "count": "two"}, {"genre": "x", "count": "1.5"}]
)
async def test_a_prompt_argument_that_is_not_its_field_is_invalid_params(
    mods: Any, arguments: dict[str, str]
) -> None:
    from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError

    async with backend(mods, "in-process") as server, Client(server) as client:
        with pytest.raises(JSONRPCError) as caught:
            await client.get_prompt("library_recommend", arguments)
        assert caught.value.code == INVALID_PARAMS
        assert "count" in caught.value.message


@pytest.mark.parametrize(
    "packed",
    [
        {"@type": "type.googleapis.com/google.protobuf.Any"},
        {
            "@type": "type.googleapis.com/google.protobuf.Any",
            "value": {"@type": "type.googleapis.com/google.protobuf.Any"},
        },
    ],
)
async def test_an_any_protobuf_cannot_parse_is_invalid_arguments(mods: Any, packed: Any) -> None:
    async with backend(mods, "in-process") as server, Client(server) as client:
        got = await client.call_tool("library_echo", {**FULL, "f_any": packed})
        assert got.is_error
        assert got.content[0].text.startswith("Invalid arguments: ")  # type: ignore[union-attr]


def sync_library(mods: Any) -> Any:
    """Plain methods (run in worker threads) and a plain generator."""
    pb = mods.pb

    class SyncLibrary(mods.lib.Library):
        def SearchBooks(self, request: Any, context: Any) -> Any:  # type: ignore[override]
            context.set_code("PERMISSION_DENIED")
            context.set_details("closed today")
            return pb.SearchResponse()

        def Count(self, request: Any, context: Any) -> Iterator[Any]:  # type: ignore[override]
            for n in range(1, request.n + 1):
                yield pb.CountReply(n=n)

        def Borrow(self, request: Any, context: Any) -> Any:  # type: ignore[override]
            context.abort("FAILED_PRECONDITION", "on loan")

    return SyncLibrary()


async def test_a_sync_servicer_in_process(mods: Any) -> None:
    server = Server("library")
    mods.mcp.register_library(server, sync_library(mods), completer=mods.lib.Completer())
    async with Client(server) as client:
        denied = await client.call_tool("library_search_books", {"query": "x"})
        assert denied.structured_content == {
            "code": "PERMISSION_DENIED",
            "message": "closed today",
            "details": [],
        }
        counted = await client.call_tool("library_count", {"n": 2})
        assert counted.content[0].text == "2"  # type: ignore[union-attr]
        loaned = await client.call_tool("library_borrow", {"book_id": "b1"})
        assert loaned.structured_content["code"] == "FAILED_PRECONDITION"  # type: ignore[index]


def slow_library(mods: Any) -> Any:
    class SlowLibrary(mods.lib.Library):
        async def Borrow(self, request: Any, context: Any) -> Any:
            await anyio.sleep_forever()

    return SlowLibrary()


@pytest.mark.parametrize("which", ["in-process", "grpc-aio"])
async def test_the_tools_timeout_applies(mods: Any, which: str) -> None:
    """A tool's timeout (the generated ``timeout: "30s"`` on Borrow, shortened here so the
    test waits 0.2 s): the tool answers an error instead of waiting for the servicer."""
    import dataclasses

    import grpc
    import grpc.aio

    from mcpkit.experimental.protogen import runtime as rt
    from mcpkit.experimental.protogen.grpc_forward import GrpcChannel
    from mcpkit.experimental.protogen.inprocess import InProcess

    (borrow,) = [t for t in mods.mcp.LIBRARY_SPEC.tools if t.method == "Borrow"]
    assert borrow.timeout_s == 30.0
    spec = rt.ServiceSpec(
        name=mods.mcp.LIBRARY_SPEC.name, tools=(dataclasses.replace(borrow, timeout_s=0.2),)
    )
    slow = slow_library(mods)
    server = Server("library")
    grpc_server = grpc.aio.server()
    try:
        if which == "in-process":
            rt.register(server, spec, InProcess(slow))
            expected = "timed out after 0.2 s"
            channel = None
        else:
            mods.grpc.add_LibraryServicer_to_server(slow, grpc_server)
            port = grpc_server.add_insecure_port("127.0.0.1:0")
            await grpc_server.start()
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
            rt.register(server, spec, GrpcChannel(channel))
            expected = "DEADLINE_EXCEEDED"
        async with Client(server) as client:
            result = await client.call_tool("library_borrow", {"book_id": "b1"})
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert expected in text, text
        if channel is not None:
            await channel.close()
    finally:
        await grpc_server.stop(None)


async def test_status_details_travel_as_proto_json(mods: Any) -> None:
    """A rich status (grpc-status-details-bin) over real gRPC: its Any details come back."""
    import grpc

    from mcpkit.experimental.protogen.grpc_forward import _status_class

    pb = mods.pb

    class Detailed(mods.lib.Library):
        async def Borrow(self, request: Any, context: Any) -> Any:
            from google.protobuf import any_pb2

            detail = any_pb2.Any()
            detail.Pack(pb.Book(id="b9", title="Held"))
            status = _status_class()(code=9, message="held")
            status.details.add().ParseFromString(detail.SerializeToString())  # type: ignore[attr-defined] - a dynamic message class
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "held",
                trailing_metadata=(("grpc-status-details-bin", status.SerializeToString()),),
            )

    async with grpc_backed(mods, Detailed()) as server, Client(server) as client:
        result = await client.call_tool("library_borrow", {"book_id": "b9"})
    assert result.structured_content == {
        "code": "FAILED_PRECONDITION",
        "message": "held",
        "details": [
            {
                "@type": "type.googleapis.com/library.v1.Book",
                "id": "b9",
                "title": "Held",
                "genre": "GENRE_UNSPECIFIED",
                "year": 0,
            }
        ],
    }


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("confirmed", [True, False])
async def test_the_typed_elicitation_helper_on_both_eras(
    mods: Any, era: str, confirmed: bool
) -> None:
    asked: list[dict[str, Any]] = []

    async def answer(params: Any) -> dict[str, Any]:
        asked.append(json.loads(params.model_dump_json(by_alias=True, exclude_none=True)))
        return {"action": "accept", "content": {"confirmed": confirmed, "note": "ok"}}

    server = Server("library")
    mods.mcp.register_library(server, mods.lib.Library(), completer=mods.lib.Completer())
    async with Client(server, mode=era, elicitation=answer) as client:  # type: ignore[arg-type]
        result = await client.call_tool("library_borrow", {"book_id": "b1"})
    assert asked
    assert asked[0]["requestedSchema"]["properties"] == {
        "confirmed": {"type": "boolean"},
        "note": {"type": "string"},
    }
    if confirmed:
        assert not result.is_error
        assert '"title":"Dune"' in result.content[0].text  # type: ignore[union-attr]
    else:
        assert result.structured_content == {
            "code": "ABORTED",
            "message": "the loan was not confirmed",
            "details": [],
        }


@pytest.mark.parametrize("era", ERAS)
async def test_the_sampling_helper_sends_the_annotations_parameters(mods: Any, era: str) -> None:
    sent: list[Any] = []

    async def sample(params: Any) -> dict[str, Any]:
        sent.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "Read Dune"}, "model": "m"}

    server = Server("library")

    @server.tool()
    async def recommend(ctx: Any) -> str:
        result = await mods.mcp.sample_for_borrow(ctx, "a book please")
        return str(result.text)

    from mcpkit.server import Context

    recommend.__annotations__["ctx"] = Context
    server.remove_tool("recommend")
    server.add_tool(recommend, name="recommend")
    async with Client(server, mode=era, sampling=sample) as client:  # type: ignore[arg-type]
        result = await client.call_tool("recommend")
    assert result.content[0].text == "Read Dune"  # type: ignore[union-attr]
    params = sent[0]
    assert params.system_prompt == "You recommend books."
    assert params.max_tokens == 200
    assert params.model_preferences.intelligence_priority == 0.5


class Partial:
    async def SearchBooks(self, request: Any, context: Any) -> Any:
        raise AssertionError("never called")


def test_a_servicer_without_a_method_is_refused_at_registration(mods: Any) -> None:
    server = Server("library")
    with pytest.raises(TypeError, match="has no method Borrow, Count, Echo, GetBook, Hours"):
        mods.mcp.register_library(server, Partial(), completer=None)
    assert not server.tools  # nothing half-registered


def test_a_servicer_whose_methods_cannot_take_request_and_context_is_refused(mods: Any) -> None:
    with pytest.raises(TypeError, match=r"pass an instance \(Library\(\)\), not the class"):
        mods.mcp.register_library(Server("x"), mods.lib.Library, completer=mods.lib.Completer())

    class OneArgument(mods.lib.Library):
        def Hours(self, request: Any) -> Any:  # type: ignore[override]
            return mods.pb.HoursReply()

    with pytest.raises(TypeError, match="Hours cannot be called as"):
        mods.mcp.register_library(Server("x"), OneArgument(), completer=mods.lib.Completer())


def test_a_completer_without_a_method_is_refused_at_registration(mods: Any) -> None:
    class NoGenres:
        def complete_get_book_book_id(self, value: str, context: Any) -> list[str]:
            return []

    server = Server("library")
    with pytest.raises(TypeError, match="complete_recommend_genre"):
        mods.mcp.register_library(server, mods.lib.Library(), completer=NoGenres())
    assert not server.tools


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ([("Authorization", "Bearer x")], ValueError),
        ({"authorization": "x"}, TypeError),
        ([("authorization",)], TypeError),
        ([("x-bin", "text")], TypeError),
        ([("ok", "line\nbreak")], ValueError),
        ([("grpc-timeout", "1S")], ValueError),
    ],
)
async def test_metadata_grpc_would_refuse_is_refused_at_forwarding(
    mods: Any, metadata: Any, error: type[Exception]
) -> None:
    import grpc.aio

    async with grpc.aio.insecure_channel("unix:/nonexistent") as channel:  # never used
        with pytest.raises(error, match="metadata"):
            mods.mcp.forward_library(Server("x"), channel, metadata, completer=None)


def test_forwarding_needs_a_grpc_channel(mods: Any) -> None:
    with pytest.raises(TypeError, match=r"grpc.Channel or grpc.aio.Channel, not str"):
        mods.mcp.forward_library(Server("library"), "127.0.0.1:50051", completer=None)


def test_the_completer_argument_must_be_given(mods: Any) -> None:
    """Completable fields and no completer: said explicitly (None), never by omission."""
    with pytest.raises(TypeError, match="completer"):
        mods.mcp.register_library(Server("library"), mods.lib.Library())  # type: ignore[call-arg]


def test_a_name_the_server_already_has_is_refused(mods: Any) -> None:
    """Two services (or one twice) would silently replace each other's tools."""
    server = Server("library")
    mods.mcp.register_library(server, mods.lib.Library(), completer=None)
    before = dict(server.tools)
    with pytest.raises(
        TypeError, match=r"library_search_books, library_echo, .* already registered"
    ):
        mods.mcp.register_library(server, mods.lib.Library(), completer=None)
    assert server.tools == before
