"""Wire cases J1, P1, P2 and the stdio process rules, against a spawned ``mcpkit`` process.

The server under test is ``tests/fixtures/stdio_server.py`` served by
``python -m mcpkit.cli.main run ... --transport stdio`` (or run directly, for a small line
limit). The test speaks raw newline-delimited JSON to its stdin and reads its stdout.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from stdio_process import FIXTURE_SERVER, clean_env, mcpkit_argv, spawn, tool_call

pytestmark = pytest.mark.anyio

RUN_FIXTURE = mcpkit_argv("run", f"{FIXTURE_SERVER}:server", "--transport", "stdio")
UNICODE = "naïve 東京 🚀"


# -- J1 ----------------------------------------------------------------------------------------


async def test_J1_malformed_stdio_lines_get_answers_and_serving_continues() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        await proc.write(b"{not json\n")
        parse_error = await proc.recv()
        await proc.write(b'{"id":5,"method":"ping"}\n')
        invalid = await proc.recv()
        await proc.write(b'{"jsonrpc":"2.0","id":6,"method":"ping"}\n')
        pong = await proc.recv()
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert parse_error["jsonrpc"] == "2.0"
    assert parse_error["id"] is None
    assert parse_error["error"]["code"] == -32700
    assert invalid["id"] == 5
    assert invalid["error"]["code"] == -32600
    assert pong == {"jsonrpc": "2.0", "id": 6, "result": {}}


async def test_J1_other_bad_lines_are_answered_and_tolerated_framing_is_accepted() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        await proc.write(b"\xff\xfe not utf-8\n")
        bad_utf8 = await proc.recv()
        await proc.write(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
        batch = await proc.recv()
        await proc.write(b"\n   \n")  # blank lines are skipped
        await proc.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')  # CRLF
        crlf = await proc.recv()
        await proc.write(b'{"jsonrpc":"2.0","id":3,')  # a message split across writes
        await proc.write(b'"method":"ping"}\n')
        split = await proc.recv()
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert bad_utf8["error"]["code"] == -32700
    assert batch["id"] is None
    assert batch["error"]["code"] == -32600
    assert crlf == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert split == {"jsonrpc": "2.0", "id": 3, "result": {}}


# -- P1 ----------------------------------------------------------------------------------------


async def test_P1_text_a_tool_prints_goes_to_stderr_and_stdout_stays_valid() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        init = await proc.initialize()
        await proc.send(tool_call(1, "chatty", {"text": "hello"}))
        await proc.close_stdin()
        lines = await proc.remaining_lines()
        assert await proc.wait_exit() == 0
    assert init["result"]["serverInfo"]["name"] == "stdio-fixture"
    messages = [json.loads(line) for line in lines]  # every stdout line is JSON-RPC
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    result = next(m for m in messages if m.get("id") == 1)
    assert result["result"]["content"] == [{"type": "text", "text": "HELLO"}]
    stderr = proc.stderr.decode("utf-8", "replace")
    for printed in (
        "banner printed at import time",
        "print: hello",
        "print without newline",
        "sys.stdout.write",
        "os.write to fd 1",
    ):
        assert printed in stderr


# -- P2 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "locale_env",
    [
        {"LANG": "C"},
        {"LANG": "C", "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
    ],
    ids=["LANG=C", "C-locale-no-coercion"],
)
async def test_P2_utf8_round_trips_byte_for_byte_whatever_the_locale(
    locale_env: dict[str, str],
) -> None:
    env = clean_env(locale_env, drop=("LC_ALL", "LC_CTYPE", "PYTHONUTF8", "LANG"))
    request = tool_call(1, "echo", {"text": UNICODE})
    async with spawn(RUN_FIXTURE, env=env) as proc:
        await proc.initialize()
        await proc.send(request)
        line = await proc.read_line()
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert UNICODE.encode("utf-8") in line  # raw UTF-8 on the wire, not \u escapes
    reply = json.loads(line.decode("utf-8"))
    assert reply["result"]["content"] == [{"type": "text", "text": UNICODE}]


# -- end of input ------------------------------------------------------------------------------


async def test_stdin_eof_finishes_quick_in_flight_work_and_exits_cleanly() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "sleep", {"seconds": 0.2}))
        await proc.close_stdin()
        lines = await proc.remaining_lines()
        code = await proc.wait_exit()
    assert code == 0
    replies = [json.loads(line) for line in lines]
    assert [r["result"]["content"][0]["text"] for r in replies if r.get("id") == 1] == ["slept 0.2"]
    assert b"Traceback" not in proc.stderr


async def test_stdin_eof_abandons_stuck_work_within_a_bounded_time() -> None:
    argv = [sys.executable, str(FIXTURE_SERVER), str(32 * 1024 * 1024), "0.2"]
    async with spawn(argv) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "stuck", {}))
        assert (await proc.call(2, "ping"))["result"] == {}  # the stuck call is in flight
        await proc.close_stdin()
        lines = await proc.remaining_lines()
        code = await proc.wait_exit(timeout_s=20)
    assert code == 0
    assert [json.loads(line).get("id") for line in lines] == []  # abandoned: no answer
    assert b"Traceback" not in proc.stderr


async def test_server_exits_cleanly_when_the_client_vanishes_mid_request() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "sleep", {"seconds": 0.3}))
        assert proc.process.stdout is not None
        await proc.process.stdout.aclose()  # nobody reads the answer
        await proc.close_stdin()
        code = await proc.wait_exit()
    assert code == 0
    assert b"Traceback" not in proc.stderr


async def test_server_exits_when_the_client_closes_stdin_but_never_reads_stdout() -> None:
    # Regression: a reply larger than the pipe's buffer blocked on a client that did not
    # read; at end of input the blocked reply was never cancelled and closing stdout
    # waited for the client to drain it, so the server never exited.
    text = "y" * (2 * 1024 * 1024)
    async with spawn(RUN_FIXTURE) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "echo", {"text": text}))
        await anyio.sleep(0.5)  # the echo is written into a pipe nobody reads
        await proc.close_stdin()
        code = await proc.wait_exit(timeout_s=30)
    assert code == 0
    assert b"Traceback" not in proc.stderr


# -- line sizes --------------------------------------------------------------------------------


async def test_a_line_of_several_mebibytes_is_accepted() -> None:
    text = "x" * (6 * 1024 * 1024) + UNICODE
    async with spawn(RUN_FIXTURE) as proc:
        await proc.initialize()
        reply = await proc.call(1, "tools/call", {"name": "echo", "arguments": {"text": text}})
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert reply["result"]["content"][0]["text"] == text


async def test_an_over_limit_line_is_answered_and_serving_continues() -> None:
    limit = 64 * 1024
    argv = [sys.executable, str(FIXTURE_SERVER), str(limit), "2"]
    async with spawn(argv) as proc:
        await proc.initialize()
        huge = json.dumps(tool_call(1, "length", {"text": "y" * (limit * 4)})).encode()
        await proc.write(huge + b"\n")
        refused = await proc.recv()
        fits = await proc.call(
            2, "tools/call", {"name": "length", "arguments": {"text": "y" * (limit // 2)}}
        )
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert refused["id"] is None
    assert refused["error"]["code"] == -32700
    assert str(limit) in refused["error"]["message"]
    assert fits["result"]["structuredContent"] == {"result": limit // 2}


async def test_many_requests_written_at_once_are_all_answered() -> None:
    async with spawn(RUN_FIXTURE) as proc:
        await proc.initialize()
        burst = b"".join(
            json.dumps(tool_call(i, "echo", {"text": f"m{i}"})).encode() + b"\n" for i in range(200)
        )
        await proc.write(burst)
        replies = [await proc.recv() for _ in range(200)]
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    got = {r["id"]: r["result"]["content"][0]["text"] for r in replies}
    assert got == {i: f"m{i}" for i in range(200)}


async def test_demo_answers_a_hand_typed_initialize_list_call_sequence() -> None:
    async with spawn(mcpkit_argv("demo", "--transport", "stdio")) as proc:
        lines = [
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",'
            '"arguments":{"text":"hi"}}}',
        ]
        for line in lines:
            await proc.write(line.encode() + b"\n")
        with anyio.fail_after(30):
            init, listed, called = (
                await proc.response(1),
                await proc.response(2),
                await proc.response(3),
            )
        await proc.close_stdin()
        assert await proc.wait_exit() == 0
    assert init["result"]["serverInfo"]["name"] == "mcpkit-demo"
    names = {t["name"] for t in listed["result"]["tools"]}
    assert {"echo", "sleep", "test_simple_text"} <= names
    assert called["result"]["content"] == [{"type": "text", "text": "hi"}]
