"""Fuzzing the mcpkit client with a malicious server, over memory, stdio and HTTP.

The server (:mod:`evil`) connects properly, then answers one request with junk first:
bytes that are not JSON, random JSON, responses to nothing, responses of the wrong
shape or with the probe's id as a string, server requests for capabilities the client
never declared, odd notifications, megabyte lines; then the right answer, an error,
a malformed answer, or nothing. Invariants:

1. The client never crashes or hangs: the request ends within its timeout, with its
   result or a clean error (:class:`JSONRPCError`, a :class:`ClientError`, or a
   timeout), and leaving the client completes.
2. Junk does not change the answer: when the right answer comes, it is returned.
3. The client keeps working where the spec allows: the next request is served.
4. Every server request gets exactly one reply: ``ping`` a result, every capability
   the client did not declare (sampling, elicitation, roots, anything unknown) an error.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ThreadedHTTP, examples
from evil import PROBE, TOOLS_RESULT, EvilCore, Script
from evil_scripts import scripts
from hypothesis import given

from mcpkit.client import Client, ClientError
from mcpkit.client.pipe import PipeStream
from mcpkit.client.stdio import StdioTransport
from mcpkit.client.transport import ClientStream, TransportKind
from mcpkit.core.engine import InvalidResponseError, Malformed, RequestTimeoutError
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.core.memory import memory_pair

JSON = dict[str, Any]
HERE = Path(__file__).parent
CLEAN = (JSONRPCError, ClientError, RequestTimeoutError, InvalidResponseError)
CALL_TIMEOUT_S = 1.0
"""Per-request timeout; only scripts that never answer wait for it."""


class EvilMemory:
    """A client transport whose peer, in this process, is the evil server."""

    kind: TransportKind = "memory"

    def __init__(self, core: EvilCore) -> None:
        self.core = core

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[ClientStream]:
        client_end, server_end = memory_pair(serialize=True)
        raw_send = server_end._send  # pyright: ignore[reportPrivateUsage] - raw lines out

        async def serve() -> None:
            while True:
                try:
                    msg = await server_end.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                for line in self.core.handle(None if isinstance(msg, Malformed) else msg):
                    await raw_send.send(line.encode("utf-8", "surrogatepass"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield PipeStream(client_end, "memory")
            finally:
                await client_end.aclose()
                tg.cancel_scope.cancel()


def check_outcome(script: Script, outcome: tuple[str, Any], transport: str) -> None:
    """Invariants 1 and 2 for the probe's outcome."""
    kind, value = outcome
    exact = transport != "http" or script.http in ("sse", "json")
    if script.final == "ok" and exact:
        assert kind == "result", f"{script}: the right answer was lost: {value!r}"
        assert value == TOOLS_RESULT, f"{script}: junk replaced the answer: {value!r}"
    elif script.final == "error" and exact:
        assert kind == "error", f"{script}: {value!r}"
        assert isinstance(value, JSONRPCError), f"{script}: {value!r}"
        assert value.code == -32000, f"{script}: {value!r}"
    elif kind == "result":
        raise AssertionError(f"{script}: a result from a script that sends none: {value!r}")


def check_replies(core: EvilCore | JSON, script: Script) -> None:
    """Invariant 4."""
    if isinstance(core, EvilCore):
        replies, asked = core.client_replies, core.server_request_ids
    else:
        replies, asked = core["client_replies"], core["server_request_ids"]
    by_id: dict[Any, list[JSON]] = {}
    for reply in replies:
        by_id.setdefault(reply.get("id"), []).append(reply)
    methods: dict[Any, set[str]] = {}
    for kind, value in script.junk:
        if kind == "msg" and isinstance(value, dict) and "method" in value and "id" in value:
            methods.setdefault(value["id"], set()).add(value["method"])
    for rid in set(asked):
        got = by_id.get(rid, [])
        assert len(got) == asked.count(rid), f"server request {rid}: {len(got)} replies: {got}"
        for reply in got:
            # a result only for ping; an error for every undeclared capability or unknown
            # method, and -32600 for an id that is still in flight (engine rule 2)
            if "result" in reply:
                assert "ping" in methods.get(rid, set()), got
                assert reply["result"] == {}, got
            else:
                assert reply["error"]["code"] in (-32600, -32601, -32602, -32603), got


async def drive(target: Any, script: Script, transport: str) -> None:
    """Connect, probe, check, ping, leave; all bounded in time."""
    logs: list[JSON] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async def on_list_changed(kind: str) -> None:
        return None

    with anyio.fail_after(30):
        async with Client(
            target,
            mode="legacy",
            timeout_s=CALL_TIMEOUT_S,
            on_log=on_log,
            on_list_changed=on_list_changed,
        ) as client:
            try:
                outcome: tuple[str, Any] = ("result", await client.request(PROBE, use_cache=False))
            except CLEAN as exc:
                outcome = ("error", exc)
            check_outcome(script, outcome, transport)
            await client.ping()


@examples(80)
@given(script=scripts)
def test_client_survives_an_evil_server_in_memory(script: Script) -> None:
    core = EvilCore(script)

    async def main() -> None:
        await drive(EvilMemory(core), script, "memory")
        with anyio.fail_after(5):
            while len(core.client_replies) < len(core.server_request_ids):
                await anyio.sleep(0.01)

    anyio.run(main)
    check_replies(core, script)


def evil_stdio(script: Script, tmp: Path, **options: Any) -> tuple[StdioTransport, Path]:
    """A transport spawning the evil stdio server for ``script``, and the file it
    writes the client's replies to when it exits."""
    script_file, out_file = tmp / "script.json", tmp / "out.json"
    script_file.write_text(script.to_json())
    argv = [str(HERE / "evil_stdio_server.py"), str(script_file), str(out_file)]
    return StdioTransport(sys.executable, argv, **options), out_file


@examples(25)
@given(script=scripts)
def test_client_survives_an_evil_server_over_stdio(script: Script) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        transport, out_file = evil_stdio(script, Path(tmp), stderr="capture")
        anyio.run(drive, transport, script, "stdio")
        assert transport.returncode == 0, transport.stderr_text
        check_replies(json.loads(out_file.read_text()), script)


# -- HTTP ------------------------------------------------------------------------------------


class EvilHTTP:
    """The evil server as an ASGI app: handshake-era sessions, the probe answered per
    ``script.http``; a GET stream is not offered (405); DELETE ends the session."""

    def __init__(self) -> None:
        self.core = EvilCore(Script())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] != "POST":
            status = 204 if scope["method"] == "DELETE" else 405
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        lines = self.core.handle(msg)
        is_request = isinstance(msg, dict) and "method" in msg and "id" in msg
        if not is_request:
            await self._respond(send, 202, b"", b"application/json")
            return
        if msg["method"] != PROBE:  # type: ignore[index]
            await self._respond(send, 200, lines[0].encode(), b"application/json", session=True)
            return
        mode = self.core.script.http
        final = lines[len(lines) - (0 if self.core.script.final == "none" else 1) :]
        if mode == "sse":
            events = b"".join(
                b"data: " + line.encode("utf-8", "surrogatepass") + b"\n\n" for line in lines
            )
            await self._respond(send, 200, events, b"text/event-stream")
        elif mode == "json":
            await self._respond(send, 200, final[0].encode() if final else b"", b"application/json")
        else:
            junk = final[0].encode() if final else b"<html>evil</html>"
            await self._respond(send, int(mode), junk, b"application/json")

    @staticmethod
    async def _respond(
        send: Any, status: int, body: bytes, ctype: bytes, *, session: bool = False
    ) -> None:
        headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]
        if session:
            headers.append((b"mcp-session-id", b"evil-session"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def evil_http() -> Iterator[tuple[str, EvilHTTP]]:
    app = EvilHTTP()
    with ThreadedHTTP(app) as served:
        yield f"http://127.0.0.1:{served.port}/mcp", app


@examples(50)
@given(script=scripts)
def test_client_survives_an_evil_server_over_http(
    evil_http: tuple[str, EvilHTTP], script: Script
) -> None:
    url, app = evil_http
    app.core = core = EvilCore(script)

    async def main() -> None:
        await drive(url, script, "http")
        with anyio.fail_after(5):
            while len(core.client_replies) < len(core.server_request_ids) and script.http == "sse":
                await anyio.sleep(0.01)

    anyio.run(main)
    if script.http == "sse":
        check_replies(core, script)


# -- explicit regressions (faults found, limits) -----------------------------------------------


def test_a_malformed_answer_fails_the_request_at_once_instead_of_timing_out() -> None:
    """Engine rule 7: ``result`` that is not an object, for the request's own id."""
    core = EvilCore(Script(final="bad"))

    async def main() -> None:
        async with Client(EvilMemory(core), mode="legacy", timeout_s=None) as client:
            with anyio.fail_after(10), pytest.raises(InvalidResponseError, match="malformed"):
                await client.request(PROBE, use_cache=False)
            await client.ping()

    anyio.run(main)


def test_a_line_over_the_clients_limit_is_dropped_and_the_answer_still_arrives() -> None:
    huge = (
        "msg",
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "z" * 300_000}},
    )
    script = Script(junk=[huge], final="ok")
    with tempfile.TemporaryDirectory() as tmp:
        transport, _ = evil_stdio(script, Path(tmp), max_message_bytes=100_000)

        async def main() -> None:
            async with Client(transport, mode="legacy", timeout_s=10) as client:
                assert await client.request(PROBE, use_cache=False) == TOOLS_RESULT

        anyio.run(main)


def test_an_http_body_over_the_clients_limit_is_refused_without_buffering_it(
    evil_http: tuple[str, EvilHTTP],
) -> None:
    """The ``initialize`` answer (about 140 bytes) against a 40-byte limit."""
    from mcpkit.client import HTTPStatusError, HttpTransport

    url, app = evil_http
    app.core = EvilCore(Script())
    transport = HttpTransport(url, max_message_bytes=40, standalone_stream=False)

    async def main() -> None:
        with anyio.fail_after(20):
            async with Client(transport, mode="legacy", timeout_s=10):
                raise AssertionError("connected through an over-limit answer")

    with pytest.raises(HTTPStatusError, match="larger than 40 bytes"):
        anyio.run(main)
