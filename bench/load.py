"""mcpload: an MCP load generator that speaks the protocol on the wire (no SDK), so that
every server is measured by the same client.

Targets (exactly one):
- ``--url http://127.0.0.1:PORT/mcp``: streamable HTTP over a minimal asyncio HTTP/1.1
  keep-alive client (one connection per worker; ``Content-Length`` and chunked bodies,
  which covers JSON responses and the finite SSE stream of a POST). A general HTTP client
  costs several times more CPU per request and would saturate before a fast server does.
- ``--stdio 'CMD ARGS'``: spawns the server and pipelines newline-delimited JSON-RPC on
  its stdin/stdout, up to ``--concurrency`` requests outstanding.

Eras (``--era``):
- ``handshake`` (2025-11-25): ``initialize`` then ``notifications/initialized``; over
  HTTP every later request carries ``Mcp-Session-Id`` (when issued) and
  ``MCP-Protocol-Version``.
- ``modern`` (2026-07-28): no handshake; every request carries ``params._meta`` with
  ``io.modelcontextprotocol/protocolVersion``, ``.../clientCapabilities`` and
  ``.../clientInfo``; over HTTP also ``MCP-Protocol-Version``, ``Mcp-Method`` and
  ``Mcp-Name``.

Modes:
- load (default): ``tools/call echo {"text": <payload>}`` from ``--concurrency`` workers,
  ``--warmup`` s unrecorded, then ``--duration`` s recorded; every result is checked to
  echo the payload. Reports req/s, latency percentiles (ms), errors by kind, client CPU,
  server CPU % and µs per request (``--server-pid``; automatic for stdio) and
  ``foreign_cpu_pct``: host CPU used by neither client nor server, in % of one core.
  stdio also reports cold start: spawn → ``initialize`` result, spawn → first
  ``tools/call`` result (``--duration 0`` measures only that).
- ``--sessions K`` (HTTP, handshake era): opens K sessions and reads the server's VmRSS,
  then DELETEs them; ``--cycles N`` repeats open/close N times and reports VmRSS after
  every step, so that memory which is never given back shows as growth.

Bounds: every request times out (``--timeout``) and the whole run is capped
(``--max-time``). Only point it at servers you run yourself on loopback.
Exit status: 0 no errors, 1 some requests failed, 2 setup failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from procstat import TICKS_PER_S, context_switches, cpu_seconds, host_ticks, percentile, status_kib

try:
    import orjson

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

    loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # the generator also runs on a bare interpreter

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

    loads = json.loads

JSON = dict[str, Any]
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "mcpkit-bench", "version": "1"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
INIT_PARAMS: JSON = {
    "protocolVersion": HANDSHAKE_VERSION,
    "capabilities": {},
    "clientInfo": CLIENT_INFO,
}
ID_MARK = 8_675_309_123


class LoadError(Exception):
    """A failed request; ``kind`` is the bucket it is counted in."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


def payload_text(size: int) -> str:
    """``size`` bytes of printable ASCII that JSON carries unescaped."""
    alphabet = "The quick brown fox jumps over the lazy dog 0123456789 "
    return (alphabet * (size // len(alphabet) + 1))[:size]


def call_template(text: str, era: str) -> tuple[bytes, bytes]:
    """A ``tools/call`` body split around its id, so a request costs one concatenation."""
    params: JSON = {"name": "echo", "arguments": {"text": text}}
    if era == "modern":
        params["_meta"] = MODERN_META
    body = dumps({"jsonrpc": "2.0", "id": ID_MARK, "method": "tools/call", "params": params})
    head, tail = body.split(str(ID_MARK).encode(), 1)
    return head, tail


def as_object(value: Any) -> JSON | None:
    """``value`` if it is a JSON object, else ``None``."""
    return cast(JSON, value) if isinstance(value, dict) else None


def check_echo(message: JSON | None, want: str) -> None:
    """Raise unless ``message`` is a result whose first text content is ``want``."""
    if message is None:
        raise LoadError("bad_message", "not a JSON object")
    if "error" in message:
        raise LoadError("jsonrpc_error", json.dumps(message["error"])[:200])
    result = as_object(message.get("result")) or {}
    try:
        text: Any = result["content"][0]["text"]
    except (KeyError, IndexError, TypeError):
        raise LoadError("bad_result", repr(result)[:200]) from None
    if result.get("isError") or text != want:
        raise LoadError("echo_mismatch", f"{len(text)} chars back, {len(want)} sent")


# -- HTTP ---------------------------------------------------------------------------------
class HttpConnection:
    """One HTTP/1.1 keep-alive connection; reconnects after a failure."""

    def __init__(self, host: str, port: int, path: str, timeout_s: float) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.request_line = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()
        self.delete_line = f"DELETE {path} HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def exchange(self, head: bytes, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Send ``head`` (request line and headers, without Content-Length) and ``body``;
        return ``(status, lower-cased headers, body)``."""
        try:
            return await asyncio.wait_for(self._exchange(head, body), self.timeout_s)
        except TimeoutError:
            self.close()
            raise LoadError("timeout", f"no response in {self.timeout_s} s") from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
            self.close()
            raise LoadError("connection", f"{type(e).__name__}: {e}") from None

    async def _exchange(self, head: bytes, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                self.host, self.port, limit=1 << 24
            )
        reader, writer = self.reader, self.writer
        assert reader is not None
        writer.write(b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body))
        lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        if "content-length" in headers:
            data = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            data = await self._chunks(reader)
        elif status in (204, 304) or status < 200:
            data = b""
        else:
            data = await reader.read()
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, data

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                    pass
                return b"".join(parts)
            parts.append((await reader.readexactly(size + 2))[:-2])


def response_message(status: int, headers: dict[str, str], body: bytes, rid: int) -> JSON | None:
    """The JSON-RPC response with id ``rid`` from a JSON or SSE HTTP response."""
    if status >= 400:
        raise LoadError(f"http_{status}", body[:200].decode("utf-8", "replace"))
    ctype = headers.get("content-type", "")
    if ctype.startswith("application/json"):
        found: Any = loads(body)
        if isinstance(found, list):
            return next((m for m in map(as_object, cast(list[Any], found)) if m), None)
        return as_object(found)
    if not ctype.startswith("text/event-stream"):
        raise LoadError("bad_content_type", f"{status} {ctype!r}")
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(
            line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
        )
        if data.strip():
            message = as_object(loads(data))
            if message is not None and message.get("id") == rid:
                return message
    raise LoadError("no_response", f"SSE stream without a response to id {rid}")


class HttpClient:
    """One MCP client over one connection: a session (handshake era) or a sequence of
    self-contained requests (2026-07-28)."""

    def __init__(self, conn: HttpConnection, era: str, headers: Sequence[str] = ()) -> None:
        self.conn, self.era = conn, era
        self.session_id: str | None = None
        self.next_id = 1
        self.extra = b"Accept: application/json, text/event-stream\r\n"
        self.extra += b"Content-Type: application/json\r\n"
        for header in headers:  # --header "Name: value" (e.g. Authorization)
            self.extra += header.strip().encode("latin-1") + b"\r\n"
        if era == "modern":
            self.extra += f"MCP-Protocol-Version: {MODERN_VERSION}\r\n".encode()

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    async def _post(self, body: bytes, extra: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        return await self.conn.exchange(self.conn.request_line + self.extra + extra, body)

    async def open(self) -> None:
        if self.era == "modern":
            return
        rid = self._id()
        body = dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": INIT_PARAMS})
        status, headers, data = await self._post(body)
        message = response_message(status, headers, data, rid)
        result = as_object((message or {}).get("result"))
        if result is None:
            raise LoadError("initialize_failed", repr(message)[:200])
        version = str(result.get("protocolVersion", HANDSHAKE_VERSION))
        self.session_id = headers.get("mcp-session-id")
        if self.session_id:
            self.extra += f"Mcp-Session-Id: {self.session_id}\r\n".encode()
        self.extra += f"MCP-Protocol-Version: {version}\r\n".encode()
        note = dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        status, _, data = await self._post(note)
        if status not in (200, 202, 204):
            raise LoadError(f"http_{status}", "notifications/initialized refused")

    def prepare(self, text: str) -> tuple[bytes, bytes, bytes]:
        head, tail = call_template(text, self.era)
        extra = b"Mcp-Method: tools/call\r\nMcp-Name: echo\r\n" if self.era == "modern" else b""
        return head, tail, extra

    async def call(self, prepared: tuple[bytes, bytes, bytes], want: str) -> None:
        head, tail, extra = prepared
        rid = self._id()
        status, headers, data = await self._post(b"%s%d%s" % (head, rid, tail), extra)
        check_echo(response_message(status, headers, data, rid), want)

    async def close(self) -> int | None:
        """DELETE the session (if one was issued); the HTTP status, -1 on failure."""
        if not self.session_id:
            return None
        try:
            status, _, _ = await self.conn.exchange(self.conn.delete_line + self.extra, b"")
        except LoadError:
            return -1
        return status


# -- the measured window ------------------------------------------------------------------
class Window:
    """Latencies and errors of the requests that start inside the recorded window, and
    the CPU readings around it."""

    def __init__(self) -> None:
        self.start = float("inf")
        self.end = float("inf")
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.samples: list[str] = []
        self.last_done = 0.0

    def ok(self, t0: float, t1: float) -> None:
        if t0 >= self.start:
            self.latencies.append(t1 - t0)
            self.last_done = max(self.last_done, t1)

    def failed(self, t0: float, t1: float, error: LoadError) -> None:
        if t0 >= self.start:
            self.errors[error.kind] += 1
            if len(self.samples) < 5:
                self.samples.append(str(error)[:300])
            self.last_done = max(self.last_done, t1)

    async def run(
        self,
        workers: Sequence[Awaitable[None]],
        warmup_s: float,
        duration_s: float,
        pid: int | None,
    ) -> JSON:
        tasks = [asyncio.ensure_future(w) for w in workers]
        await asyncio.sleep(warmup_s)
        client0, server0, host0 = time.process_time(), cpu_seconds(pid) if pid else None, None
        switches0 = context_switches(pid) if pid else None
        host0 = host_ticks()
        self.start = time.perf_counter()
        self.end = self.start + duration_s
        await asyncio.gather(*tasks)
        wall = max(time.perf_counter() - self.start, 1e-9)
        client1, server1 = time.process_time(), cpu_seconds(pid) if pid else None
        switches1 = context_switches(pid) if pid else None
        host1 = host_ticks()
        lat = sorted(self.latencies)
        done = len(lat) + sum(self.errors.values())
        span = max(self.last_done - self.start, 1e-9)
        ms: Callable[[float], float] = lambda s: round(s * 1000.0, 3)  # noqa: E731
        out: JSON = {
            "requests_ok": len(lat),
            "errors": sum(self.errors.values()),
            "error_kinds": dict(self.errors),
            "error_samples": self.samples,
            "elapsed_s": round(span, 3),
            "rps": round(len(lat) / span, 1),
            "latency_ms": {
                "p50": ms(percentile(lat, 50)) if lat else None,
                "p90": ms(percentile(lat, 90)) if lat else None,
                "p99": ms(percentile(lat, 99)) if lat else None,
                "max": ms(lat[-1]) if lat else None,
            },
            "client_cpu_pct": round(100.0 * (client1 - client0) / wall, 1),
            "client_cpu_us_per_req": round(1e6 * (client1 - client0) / done, 1) if done else None,
        }
        if server0 is not None and server1 is not None:
            out["server_cpu_pct"] = round(100.0 * (server1 - server0) / wall, 1)
            out["server_cpu_us_per_req"] = (
                round(1e6 * (server1 - server0) / done, 2) if done else None
            )
        if switches0 is not None and switches1 is not None and done:
            out["server_voluntary_switches_per_req"] = round(
                (switches1[0] - switches0[0]) / done, 3
            )
            out["server_involuntary_switches_per_req"] = round(
                (switches1[1] - switches0[1]) / done, 3
            )
        busy = 100.0 * (host1[0] - host0[0]) / TICKS_PER_S / wall
        out["host_busy_pct"] = round(busy, 1)
        out["host_steal_pct"] = round(100.0 * (host1[1] - host0[1]) / TICKS_PER_S / wall, 1)
        out["foreign_cpu_pct"] = round(
            busy - out["client_cpu_pct"] - out.get("server_cpu_pct", 0.0), 1
        )
        return out


def split_url(url: str) -> tuple[str, int, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"--url {url!r}: only plain http:// on a loopback address")
    return parts.hostname, parts.port or 80, parts.path or "/"


async def http_load(args: argparse.Namespace) -> JSON:
    host, port, path = split_url(args.url)
    text = payload_text(args.payload_bytes)
    clients = [
        HttpClient(HttpConnection(host, port, path, args.timeout), args.era, args.header)
        for _ in range(args.concurrency)
    ]
    t0 = time.perf_counter()
    await asyncio.gather(*(c.open() for c in clients))
    info: JSON = {"open_ms": round(1000 * (time.perf_counter() - t0), 2)}
    info["session_issued"] = clients[0].session_id is not None
    prepared = [c.prepare(text) for c in clients]
    await clients[0].call(prepared[0], text)  # the tool works before any load is applied
    window = Window()

    async def worker(client: HttpClient, request: tuple[bytes, bytes, bytes]) -> None:
        while (t0 := time.perf_counter()) < window.end:
            try:
                await client.call(request, text)
            except LoadError as e:
                window.failed(t0, time.perf_counter(), e)
                if e.kind == "connection":
                    await asyncio.sleep(0.01)
                continue
            window.ok(t0, time.perf_counter())

    workers = [worker(c, p) for c, p in zip(clients, prepared, strict=True)]
    out = await window.run(workers, args.warmup, args.duration, args.server_pid)
    statuses = await asyncio.gather(*(c.close() for c in clients))
    for c in clients:
        c.conn.close()
    return {**info, **out, "delete_statuses": dict(Counter(map(str, statuses)))}


async def http_sessions(args: argparse.Namespace) -> JSON:
    """Memory per idle session and whether it is given back (see the module docstring)."""
    host, port, path = split_url(args.url)
    pid = args.server_pid
    if pid is None:
        raise SystemExit("--sessions needs --server-pid")
    conns = [HttpConnection(host, port, path, args.timeout) for _ in range(args.concurrency)]
    errors: Counter[str] = Counter()

    async def open_many(count: int) -> list[HttpClient]:
        opened: list[HttpClient] = []
        todo = iter(range(count))

        async def opener(conn: HttpConnection) -> None:
            for _ in todo:
                client = HttpClient(conn, "handshake")
                try:
                    await client.open()
                except LoadError as e:
                    errors[e.kind] += 1
                    continue
                opened.append(client)

        await asyncio.gather(*(opener(c) for c in conns))
        return opened

    async def close_many(clients: list[HttpClient]) -> Counter[str]:
        queue = iter(clients)
        statuses: Counter[str] = Counter()

        async def closer(conn: HttpConnection) -> None:
            for client in queue:
                client.conn = conn
                statuses[str(await client.close())] += 1

        await asyncio.gather(*(closer(c) for c in conns))
        return statuses

    # Warm-up sessions pay for lazy imports and caches, which are not per-session costs.
    await close_many(await open_many(args.warm_sessions))
    await asyncio.sleep(args.settle)
    rss_start = status_kib(pid)
    cycles: list[JSON] = []
    for _ in range(args.cycles):
        t0 = time.perf_counter()
        clients = await open_many(args.sessions)
        open_s = time.perf_counter() - t0
        await asyncio.sleep(args.settle)
        rss_open = status_kib(pid)
        statuses = await close_many(clients)
        await asyncio.sleep(args.settle)
        cycles.append(
            {
                "opened": len(clients),
                "sessions_per_s": round(len(clients) / open_s, 1) if open_s else None,
                "distinct_ids": len({c.session_id for c in clients if c.session_id}),
                "rss_kib_open": rss_open,
                "rss_kib_closed": status_kib(pid),
                "delete_statuses": dict(statuses),
            }
        )
    for c in conns:
        c.close()
    first = cycles[0]
    per_session = None
    if rss_start is not None and first["rss_kib_open"] is not None and first["opened"]:
        per_session = round((first["rss_kib_open"] - rss_start) / first["opened"], 2)
    return {
        "rss_kib_start": rss_start,
        "rss_per_session_kib": per_session,
        "cycles": cycles,
        "errors": sum(errors.values()),
        "error_kinds": dict(errors),
    }


# -- stdio --------------------------------------------------------------------------------
async def stdio_load(args: argparse.Namespace) -> JSON:
    text = payload_text(args.payload_bytes)
    head, tail = call_template(text, args.era)
    pending: dict[Any, asyncio.Future[tuple[float, JSON]]] = {}
    next_id = [1]
    stderr = open(args.stdio_stderr, "ab") if args.stdio_stderr else asyncio.subprocess.DEVNULL  # noqa: ASYNC230, SIM115
    spawned = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *shlex.split(args.stdio),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        limit=1 << 24,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    loop = asyncio.get_running_loop()

    async def read_responses() -> None:
        while line := await stdout.readline():
            arrived = time.perf_counter()
            try:
                message = as_object(loads(line))
            except ValueError:
                continue  # a stray non-JSON line; the server's problem, not a response
            if message is None:
                continue
            if "method" in message:  # a server request: ping answered, the rest refused
                if "id" in message:
                    reply: JSON = {"jsonrpc": "2.0", "id": message["id"]}
                    if message["method"] == "ping":
                        reply["result"] = {}
                    else:
                        reply["error"] = {"code": -32601, "message": "not offered by the bench"}
                    stdin.write(dumps(reply) + b"\n")
                continue
            future = pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result((arrived, message))
        for future in pending.values():
            if not future.done():
                future.set_exception(LoadError("eof", "the server closed its stdout"))

    async def request(make: Callable[[int], bytes]) -> tuple[float, float, JSON]:
        rid = next_id[0]
        next_id[0] += 1
        future: asyncio.Future[tuple[float, JSON]] = loop.create_future()
        pending[rid] = future
        sent = time.perf_counter()
        stdin.write(make(rid) + b"\n")
        await stdin.drain()
        try:
            arrived, message = await asyncio.wait_for(future, args.timeout)
        except TimeoutError:
            pending.pop(rid, None)
            raise LoadError("timeout", f"no response in {args.timeout} s") from None
        return sent, arrived, message

    def call_body(rid: int) -> bytes:
        return b"%s%d%s" % (head, rid, tail)

    reader = asyncio.create_task(read_responses())
    out: JSON = {"server_pid": proc.pid}
    try:
        if args.era == "handshake":
            _, arrived, message = await request(
                lambda rid: dumps(
                    {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": INIT_PARAMS}
                )
            )
            if "result" not in message:
                raise LoadError("initialize_failed", repr(message)[:200])
            out["spawn_to_initialize_ms"] = round(1000 * (arrived - spawned), 2)
            stdin.write(dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"\n")
        _, arrived, message = await request(call_body)
        check_echo(message, text)
        out["spawn_to_first_result_ms"] = round(1000 * (arrived - spawned), 2)
        if args.duration <= 0:
            return out
        window = Window()

        async def worker() -> None:
            while (t0 := time.perf_counter()) < window.end:
                try:
                    sent, arrived, message = await request(call_body)
                    check_echo(message, text)
                except LoadError as e:
                    window.failed(t0, time.perf_counter(), e)
                    if e.kind == "eof":
                        return
                    continue
                window.ok(sent, arrived)

        workers = [worker() for _ in range(args.concurrency)]
        out.update(await window.run(workers, args.warmup, args.duration, proc.pid))
        return out
    finally:
        stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        out["exit_code"] = proc.returncode
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        if not isinstance(stderr, int):
            stderr.close()


# -- command line -------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcpload", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="streamable HTTP endpoint on loopback")
    target.add_argument("--stdio", help="command that starts a stdio server")
    p.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    p.add_argument("-c", "--concurrency", type=int, default=1)
    p.add_argument("-d", "--duration", type=float, default=5.0, help="recorded seconds")
    p.add_argument("-w", "--warmup", type=float, default=1.0, help="unrecorded seconds first")
    p.add_argument("--payload-bytes", type=int, default=100)
    p.add_argument("--timeout", type=float, default=30.0, help="per request, seconds")
    p.add_argument("--server-pid", type=int, help="HTTP: server process for CPU and memory")
    p.add_argument("--sessions", type=int, default=0, help="memory mode: sessions per cycle")
    p.add_argument("--cycles", type=int, default=1, help="memory mode: open/close cycles")
    p.add_argument("--warm-sessions", type=int, default=20)
    p.add_argument("--settle", type=float, default=1.0, help="seconds before reading VmRSS")
    p.add_argument("--stdio-stderr", help="append the stdio server's stderr to this file")
    p.add_argument("--max-time", type=float, default=0.0, help="cap on the whole run, seconds")
    p.add_argument("--json", help="write the result here ('-' for stdout)")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME: VALUE",
        help="HTTP: an extra header on every request (repeatable; e.g. Authorization)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.concurrency < 1:
        raise SystemExit("--concurrency must be at least 1")
    if args.sessions and not args.url:
        raise SystemExit("--sessions needs --url")
    max_time = args.max_time or (args.warmup + args.duration + 120.0)
    meta: JSON = {
        "target": args.url or args.stdio,
        "era": args.era,
        "concurrency": args.concurrency,
        "payload_bytes": args.payload_bytes,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "json_library": "orjson" if "orjson" in sys.modules else "json",
        "client_cpus": sorted(os.sched_getaffinity(0)),
    }
    if args.sessions:
        job = http_sessions(args)
    elif args.url:
        job = http_load(args)
    else:
        job = stdio_load(args)
    status = 0
    try:
        result = asyncio.run(asyncio.wait_for(job, max_time))
    except TimeoutError:
        result, status = {"fatal": f"the run exceeded --max-time {max_time} s"}, 2
    except (LoadError, OSError, asyncio.IncompleteReadError) as e:
        result, status = {"fatal": f"{type(e).__name__}: {e}"}, 2
    result = {**meta, **result}
    if status == 0 and result.get("errors"):
        status = 1
    blob = json.dumps(result, indent=1)
    if args.json == "-" or not args.json:
        print(blob)
    else:
        with open(args.json, "w") as f:
            f.write(blob + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
