"""The invariants the fuzz suite checks, and drivers that feed frames to a server.

Invariants (issue 7, JSON-RPC 2.0 §4-5, MCP ``basic/index``):
1. Every reply is a JSON-RPC response: ``jsonrpc: "2.0"``, exactly one of ``result`` /
   ``error``, an error has an integer code from the specs and a string message.
2. Every request with a valid id gets exactly one response with that id (with a
   spec code when it is an error); a request without a usable id, and every frame that
   is not a request, gets the error the oracle names with ``id: null``, or nothing.
3. Bytes that do not parse get exactly one -32700 each, ``id: null``.
4. The server never crashes or hangs: after the frames, a valid request is served
   normally and every expected answer arrived within :data:`LIVENESS_S` seconds.
5. Bad input is the client's error: the fuzz target never fails on its own, so a
   -32603 (internal error) can only mean a frame's params reached code that does not
   check them; it fails the test (and stdio/HTTP servers log no traceback).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from fuzz_frames import NULL_ID_CODES, SENTINEL_PREFIX, SPEC_CODES, Era, Frame, envelope, valid_id

JSON = dict[str, Any]
LIVENESS_S = 20.0
"""How long any expected reply may take before the server counts as hung (not a timing
assertion: a healthy server answers these in milliseconds)."""


def short(value: Any, limit: int = 300) -> str:
    """A repr cut to ``limit`` characters (fuzz frames can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...(+{len(text) - limit} chars)"


def _key(rid: Any) -> tuple[str, Any]:
    """Ids compare by JSON type too: 1 and "1" are different ids."""
    return (type(rid).__name__, rid) if valid_id(rid) else ("null", None)


def check_reply_shape(reply: Any) -> None:
    """Invariant 1."""
    assert isinstance(reply, dict), f"reply is not a JSON object: {reply!r}"
    assert reply.get("jsonrpc") == "2.0", f"reply without jsonrpc 2.0: {reply!r}"
    assert ("result" in reply) != ("error" in reply), f"reply needs one of result/error: {reply!r}"
    assert "id" in reply, f"reply without id: {reply!r}"
    if "error" in reply:
        err = reply["error"]
        assert isinstance(err, dict), reply
        assert type(err.get("code")) is int, reply
        assert err["code"] in SPEC_CODES, f"error code {err['code']} is not a spec code: {reply!r}"
        assert isinstance(err.get("message"), str), reply
    else:
        assert isinstance(reply["result"], dict), f"result is not an object: {reply!r}"


def expected_counts(frames: list[Frame]) -> tuple[Counter[Any], Counter[Any]]:
    """``(exact, maybe)``: replies each id key must get, and may additionally get."""
    exact: Counter[Any] = Counter()
    maybe: Counter[Any] = Counter()
    for f in frames:
        e = f.expect
        if e.kind in ("answer", "error"):
            exact[_key(e.id)] += 1
        elif e.kind == "maybe":
            maybe[_key(e.id)] += 1
    return exact, maybe


def judge(frames: list[Frame], replies: list[Any]) -> None:
    """Invariants 1-3 over every reply (responses only) to ``frames``."""
    for reply in replies:
        check_reply_shape(reply)
    exact, maybe = expected_counts(frames)
    got: Counter[Any] = Counter(_key(r["id"]) for r in replies)
    for key in set(exact) | set(got) | set(maybe):
        low, high = exact[key], exact[key] + maybe[key]
        assert low <= got[key] <= high, (
            f"id {short(key[1], 60)}: {got[key]} replies, expected {low}..{high}\n"
            f"frames: {short(frames, 3000)}\nreplies: {[short(r) for r in replies]}"
        )
    for reply in replies:  # invariant 5: bad input is the client's error, never ours
        if "error" in reply:
            assert reply["error"]["code"] != -32603, (
                f"internal error for client input: {short(reply)}"
            )
    nulls = [r for r in replies if _key(r["id"])[0] == "null"]
    for reply in nulls:
        assert reply["error"]["code"] in NULL_ID_CODES, f"id-null error with code {reply}"
    parse_frames = sum(1 for f in frames if f.expect.codes == frozenset({-32700}))
    parse_replies = sum(1 for r in replies if "error" in r and r["error"]["code"] == -32700)
    assert parse_replies == parse_frames, (
        f"{parse_replies} parse errors for {parse_frames} frames: {short(frames, 3000)}"
    )
    by_id: dict[Any, list[Frame]] = {}
    for f in frames:
        by_id.setdefault(_key(f.expect.id), []).append(f)
    for reply in replies:
        owners = by_id.get(_key(reply["id"]), [])
        if len(owners) == 1 and owners[0].expect.kind in ("error", "maybe"):
            assert "error" in reply, f"{owners[0]} was answered with a result: {short(reply)}"
            assert reply["error"]["code"] in owners[0].expect.codes, (
                f"{owners[0]} got {short(reply)}"
            )


def sentinel(era: Era, n: int) -> JSON:
    """A request that must always be served normally."""
    rid = f"{SENTINEL_PREFIX}{n}"
    if era == "legacy":
        return {"jsonrpc": "2.0", "id": rid, "method": "ping"}
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "server/discover",
        "params": {"_meta": envelope()},
    }


def initialize_message(version: str) -> list[JSON]:
    return [
        {
            "jsonrpc": "2.0",
            "id": f"{SENTINEL_PREFIX}init",
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


class LineServer:
    """A stdio server process spoken to with raw lines; a thread reads its stdout."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._errs = threading.Thread(target=self._read_err, daemon=True)
        self._errs.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for chunk in self.proc.stderr:
            self.stderr += chunk

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout_s: float = LIVENESS_S) -> Any:
        line = self.lines.get(timeout=timeout_s)
        assert line is not None, "the server closed stdout: " + self.stderr.decode(errors="replace")
        return json.loads(line)

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=LIVENESS_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the stdio server did not exit after stdin closed") from None


async def exchange_async(
    write: Callable[[bytes], Awaitable[None]],
    recv: Callable[[], Awaitable[Any]],
    frames: list[Frame],
    era: Era,
    counter: list[int],
) -> list[Any]:
    """Send ``frames`` then sentinels; the replies (responses only) to ``frames``.

    ``recv`` waits for the next message. Raises AssertionError when a sentinel or an
    expected answer does not arrive in time (invariant 4), or a sentinel is not served
    normally; the second sentinel catches late duplicates.
    """
    import anyio

    for f in frames:
        await write(f.data)
    exact, _ = expected_counts(frames)
    replies: list[Any] = []
    for round_ in range(2):
        counter[0] += 1
        probe = sentinel(era, counter[0])
        await write(json.dumps(probe).encode())
        seen_probe = False
        with anyio.fail_after(LIVENESS_S):
            while True:
                got = Counter(_key(r.get("id")) for r in replies if isinstance(r, dict))
                if seen_probe and (round_ == 1 or all(got[k] >= n for k, n in exact.items())):
                    break
                msg = await recv()
                if isinstance(msg, dict) and "method" in msg:
                    continue
                if isinstance(msg, dict) and msg.get("id") == probe["id"]:
                    assert "result" in msg, f"sentinel not served normally: {msg}"
                    seen_probe = True
                    continue
                replies.append(msg)
    return replies


def exchange_lines(
    server: LineServer, frames: list[Frame], era: Era, counter: list[int]
) -> list[Any]:
    """:func:`exchange_async` over a :class:`LineServer` (blocking pipes, in threads)."""
    import anyio
    import anyio.to_thread

    async def write(data: bytes) -> None:
        await anyio.to_thread.run_sync(server.write, data)

    async def recv() -> Any:
        return await anyio.to_thread.run_sync(server.recv)

    async def main() -> list[Any]:
        return await exchange_async(write, recv, frames, era, counter)

    return anyio.run(main)
