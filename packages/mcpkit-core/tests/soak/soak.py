"""Load and fault soak of the streamable HTTP server: a real ``mcpkit`` process on
127.0.0.1, driven by concurrent clients for a bounded time.

Usage (full run, as recorded in ``docs/reliability.md``)::

    uv run python packages/mcpkit-core/tests/soak/soak.py --duration-s 600 --clients 16 \\
        --sigterm --json soak.json

The smoke variant (``test_soak_smoke.py``, in the default test run) is the same code
for a few seconds. Every loop is bounded in count and time; nothing listens beyond
loopback.

Each client loops over scenarios, chosen at random (seeded) with fixed weights:

- ``calls``: a handshake-era session over raw HTTP, echo calls (JSON and SSE), DELETE;
- ``client``: the mcpkit ``Client`` (handshake era or 2026-07-28), echo calls and a
  call with progress;
- ``modern``: stateless 2026-07-28 POSTs, JSON and SSE;
- ``cancel``: a streaming call cancelled with ``notifications/cancelled`` mid-stream;
- ``disconnect``: a streaming call whose connection the client drops mid-stream;
- ``resume``: a call whose stream the server closes early; the client resumes it with
  ``GET`` + ``Last-Event-ID`` and gets the answer there;
- ``slow``: a streaming call read slowly, line by line;
- ``abandon``: a session opened, used once and left (the server's idle expiry reaps it).

Reported: requests expected to be answered (every one the client did not cancel or
abandon), lost (expected but unanswered: must be 0), duplicated (a second response
for one id: must be 0), server RSS samples (start = after warm-up, middle, end),
asyncio tasks, file descriptors, sessions and live Python objects (after a full
garbage collection) of the server at the end against its baseline, p50/p99 latency
of the answered requests. ``--sigterm`` then opens streams and keeps quick calls
coming, sends SIGTERM and checks that every stream and every response that began ends
complete (the running calls answered within the grace period), the process exits in
time and leaves no process of its group behind. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

HERE = Path(__file__).parent
URL_PREFIX = "mcpkit: serving streamable HTTP at "
BOTH = "application/json, text/event-stream"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
SCENARIOS = {
    "calls": 5,
    "client": 2,
    "modern": 3,
    "cancel": 1,
    "disconnect": 1,
    "resume": 1,
    "slow": 1,
    "abandon": 1,
}
JSON = dict[str, Any]


def modern_meta() -> JSON:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    }


@dataclass
class Tally:
    """What the clients saw."""

    expected: int = 0
    answered: int = 0
    lost: int = 0
    duplicated: int = 0
    cancelled: int = 0
    abandoned: int = 0
    scenarios: Counter[str] = field(default_factory=Counter)  # pyright: ignore[reportUnknownVariableType]
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # pyright: ignore[reportUnknownVariableType]
    """By kind: ``quick`` (echo, ping: answered at once) and ``stream`` (calls that
    stream progress for a while, resumptions, slow readers)."""
    problems: list[str] = field(default_factory=list)  # pyright: ignore[reportUnknownVariableType]

    def answer(
        self, started: float, replies: list[JSON], rid: Any, what: str, kind: str = "quick"
    ) -> JSON | None:
        """Account one expected request from the replies that carried its id."""
        self.expected += 1
        mine = [r for r in replies if r.get("id") == rid and "method" not in r]
        if not mine:
            self.lost += 1
            self.problem(f"lost: {what} (id {rid!r})")
            return None
        if len(mine) > 1:
            self.duplicated += len(mine) - 1
            self.problem(f"duplicated: {what} (id {rid!r}) x{len(mine)}")
        self.answered_at(started, kind)
        return mine[0]

    def answered_at(self, started: float, kind: str) -> None:
        self.answered += 1
        self.latencies_ms.setdefault(kind, []).append((time.monotonic() - started) * 1000)

    def problem(self, text: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(text)


# -- the server process ----------------------------------------------------------------------


class ServerProcess:
    """``soak_server.py`` in its own process group; reads its URL from stderr."""

    def __init__(self, idle_timeout_s: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "soak_server.py"), "--idle-timeout-s", str(idle_timeout_s)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.url = ""
        self.log: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                if line.startswith(URL_PREFIX):
                    self.url = line[len(URL_PREFIX) :].strip()
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not ready.wait(30) or not self.url:
            self.kill()
            raise RuntimeError("soak server did not start: " + "".join(self.log))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def group_members(self) -> list[int]:
        """Live processes in the server's process group (its pgid is its pid)."""
        found: list[int] = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            fields = raw[raw.rindex(b")") + 2 :].split()
            if int(fields[2]) == self.pid and fields[0] != b"Z":
                found.append(int(entry))
        return found

    def stderr_text(self) -> str:
        self._reader.join(timeout=5)
        return "".join(self.log)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.proc.wait(10)


# -- raw HTTP helpers --------------------------------------------------------------------------


def headers(
    sid: str | None = None, *, accept: str = BOTH, modern: str | None = None
) -> dict[str, str]:
    h = {"content-type": "application/json", "accept": accept}
    if modern is not None:
        h["mcp-protocol-version"] = MODERN
        h["mcp-method"] = modern
    else:
        h["mcp-protocol-version"] = LEGACY
    if sid is not None:
        h["mcp-session-id"] = sid
    return h


def call(
    rid: Any, name: str, arguments: JSON, *, progress: bool = False, modern: bool = False
) -> JSON:
    params: JSON = {"name": name, "arguments": arguments}
    meta: JSON = modern_meta() if modern else {}
    if progress:
        meta["progressToken"] = f"p-{rid}"
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


class SSE:
    """Incremental SSE reader over ``aiter_lines``: yields ``(event id, data)``."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self.last_id: str | None = None

    async def events(self) -> AsyncIterator[tuple[str | None, str]]:
        data: list[str] = []
        event_id: str | None = None
        async for line in self.response.aiter_lines():
            if line == "":
                if data:
                    yield event_id, "\n".join(data)
                data, event_id = [], None
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "id":
                event_id = self.last_id = value
        if data:
            yield event_id, "\n".join(data)


async def read_messages(response: httpx2.Response) -> list[JSON]:
    """Every JSON-RPC message of a complete JSON or SSE response."""
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        out: list[JSON] = []
        async for _, data in SSE(response).events():
            if data:
                out.append(json.loads(data))
        return out
    body = await response.aread()
    if not body:
        return []
    value = json.loads(body)
    return value if isinstance(value, list) else [value]


async def post(
    client: httpx2.AsyncClient, url: str, message: JSON, h: dict[str, str]
) -> tuple[int, dict[str, str], list[JSON]]:
    async with client.stream("POST", url, json=message, headers=h) as r:
        return r.status_code, dict(r.headers), await read_messages(r)


async def open_session(client: httpx2.AsyncClient, url: str, rid: str) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"},
        },
    }
    status, h, _ = await post(client, url, init, headers())
    if status != 200:
        raise RuntimeError(f"initialize: HTTP {status}")
    sid = h["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post(url, json=note, headers=headers(sid))
    return sid


# -- scenarios ----------------------------------------------------------------------------------


class Worker:
    def __init__(self, n: int, url: str, tally: Tally, seed: int) -> None:
        self.n = n
        self.url = url
        self.tally = tally
        self.rng = random.Random(seed * 1000 + n)
        self.seq = 0

    def rid(self) -> str:
        self.seq += 1
        return f"w{self.n}-{self.seq}"

    async def run(self, deadline: float) -> None:
        names = list(SCENARIOS)
        weights = [SCENARIOS[k] for k in names]
        limits = httpx2.Limits(max_connections=8, max_keepalive_connections=4)
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), limits=limits) as client:
            while time.monotonic() < deadline:
                name = self.rng.choices(names, weights)[0]
                self.tally.scenarios[name] += 1
                try:
                    with anyio.fail_after(60):
                        await getattr(self, "s_" + name)(client)
                except Exception as exc:  # accounted below; the soak goes on
                    self.tally.problem(f"{name}: {type(exc).__name__}: {exc}"[:300])

    async def echo(
        self, client: httpx2.AsyncClient, sid: str | None, *, modern: bool = False
    ) -> None:
        rid = self.rid()
        text = f"{rid}:" + "x" * self.rng.randrange(0, 2000)
        accept = self.rng.choice([BOTH, "application/json", "text/event-stream"])
        h = headers(sid, accept=accept, modern="tools/call" if modern else None)
        if modern:
            h["mcp-name"] = "echo"
        started = time.monotonic()
        status, _, msgs = await post(
            client, self.url, call(rid, "echo", {"text": text}, modern=modern), h
        )
        reply = self.tally.answer(started, msgs, rid, f"echo HTTP {status}")
        if (
            reply is not None
            and reply.get("result", {}).get("content", [{}])[0].get("text") != text
        ):
            self.tally.problem(f"wrong answer for {rid}: {str(reply)[:200]}")

    async def s_calls(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        for _ in range(self.rng.randrange(1, 6)):
            await self.echo(client, sid)
        await client.request("DELETE", self.url, headers=headers(sid))

    async def s_modern(self, client: httpx2.AsyncClient) -> None:
        for _ in range(self.rng.randrange(1, 4)):
            await self.echo(client, None, modern=True)
        rid = self.rid()
        h = headers(modern="tools/call")
        h["mcp-name"] = "work"
        started = time.monotonic()
        _, _, msgs = await post(
            client,
            self.url,
            call(rid, "work", {"ms": 30, "steps": 3}, progress=True, modern=True),
            h,
        )
        self.tally.answer(started, msgs, rid, "modern work", "stream")

    async def s_client(self, client: httpx2.AsyncClient) -> None:
        from mcpkit.client import Client

        mode = self.rng.choice(["legacy", "modern"])
        progress: list[Any] = []

        async def on_progress(params: JSON) -> None:
            progress.append(params)

        async with Client(self.url, mode=mode, timeout_s=30) as mcp:  # type: ignore[arg-type]
            for _ in range(self.rng.randrange(1, 4)):
                text = f"client-{self.rid()}"
                started = time.monotonic()
                result = await mcp.call_tool("echo", {"text": text})
                self.tally.expected += 1
                self.tally.answered_at(started, "quick")
                if result.content[0].text != text:  # type: ignore[union-attr]
                    self.tally.problem(f"client: wrong echo {result}")
            started = time.monotonic()
            await mcp.call_tool("work", {"ms": 30, "steps": 3}, on_progress=on_progress)
            self.tally.expected += 1
            self.tally.answered_at(started, "stream")

    async def _start_work(
        self, client: httpx2.AsyncClient, sid: str, ms: int, steps: int
    ) -> tuple[str, contextlib.AbstractAsyncContextManager[httpx2.Response]]:
        rid = self.rid()
        msg = call(rid, "work", {"ms": ms, "steps": steps}, progress=True)
        return rid, client.stream(
            "POST", self.url, json=msg, headers=headers(sid, accept="text/event-stream")
        )

    async def s_cancel(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        rid, stream = await self._start_work(client, sid, 3000, 30)
        async with stream as r:
            sse = SSE(r).events()
            async for _, data in sse:
                if data and "progress" in data:
                    break
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "soak"},
            }
            await client.post(self.url, json=cancel, headers=headers(sid))
            self.tally.cancelled += 1
            async for _, data in sse:  # the stream must end, without a response
                if data and f'"id":"{rid}"' in data.replace(" ", "") and '"method"' not in data:
                    self.tally.problem(f"cancelled {rid} was answered anyway (a race is allowed)")
        await self.ping(client, sid)
        await client.request("DELETE", self.url, headers=headers(sid))

    async def s_disconnect(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        _, stream = await self._start_work(client, sid, 1000, 10)
        async with stream as r:
            async for _, data in SSE(r).events():
                if data:
                    break  # leave: the connection is dropped mid-stream
        self.tally.abandoned += 1
        await self.ping(client, sid)
        await client.request("DELETE", self.url, headers=headers(sid))

    async def s_resume(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        rid = self.rid()
        started = time.monotonic()
        msgs: list[JSON] = []
        last: str | None = None
        async with client.stream(
            "POST",
            self.url,
            json=call(rid, "polling", {}),
            headers=headers(sid, accept="text/event-stream"),
        ) as r:
            sse = SSE(r)
            async for _, data in sse.events():
                if data:
                    msgs.append(json.loads(data))
            last = sse.last_id
        for _ in range(5):  # the stream was closed early: resume until the answer arrives
            if any(m.get("id") == rid and "method" not in m for m in msgs) or last is None:
                break
            await anyio.sleep(0.02)
            h = headers(sid, accept="text/event-stream")
            h["last-event-id"] = last
            h.pop("content-type")
            async with client.stream("GET", self.url, headers=h) as r:
                sse = SSE(r)
                async for _, data in sse.events():
                    if data:
                        msgs.append(json.loads(data))
                        if '"result"' in data:
                            break
                last = sse.last_id or last
        self.tally.answer(started, msgs, rid, "resumed polling", "stream")
        await client.request("DELETE", self.url, headers=headers(sid))

    async def s_slow(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        rid, stream = await self._start_work(client, sid, 200, 20)
        started = time.monotonic()
        msgs: list[JSON] = []
        async with stream as r:
            async for _, data in SSE(r).events():
                await anyio.sleep(0.02)  # a slow reader
                if data:
                    msgs.append(json.loads(data))
        self.tally.answer(started, msgs, rid, "slow reader", "stream")
        await client.request("DELETE", self.url, headers=headers(sid))

    async def s_abandon(self, client: httpx2.AsyncClient) -> None:
        sid = await open_session(client, self.url, self.rid())
        await self.echo(client, sid)
        self.tally.abandoned += 1  # the session, not a request: left for idle expiry

    async def ping(self, client: httpx2.AsyncClient, sid: str) -> None:
        rid = self.rid()
        started = time.monotonic()
        _, _, msgs = await post(
            client, self.url, {"jsonrpc": "2.0", "id": rid, "method": "ping"}, headers(sid)
        )
        self.tally.answer(started, msgs, rid, "ping")


# -- the run -------------------------------------------------------------------------------


async def stats(url: str, *, collect: bool = False) -> JSON:
    params: JSON = {"_meta": modern_meta(), "gc": collect}
    msg = {"jsonrpc": "2.0", "id": "stats", "method": "soak/stats", "params": params}
    async with httpx2.AsyncClient(timeout=30) as client:
        _, _, msgs = await post(client, url, msg, headers(modern="soak/stats"))
    return msgs[0]["result"]


async def settle(server: ServerProcess, idle_timeout_s: float) -> JSON:
    """Wait for idle sessions to expire, make the server sweep, and read its stats."""
    await anyio.sleep(idle_timeout_s + 1.5)
    async with httpx2.AsyncClient(timeout=30) as client:
        # a lookup of any session id runs the lazy sweep of expired sessions
        await client.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=headers("no-such-session"),
        )
    await anyio.sleep(0.5)
    return await stats(server.url, collect=True)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def sigterm_phase(server: ServerProcess) -> JSON:
    """Open streams, keep quick calls coming, SIGTERM in the middle; check every stream
    and every response that started ends complete and the group is gone."""
    url = server.url
    outcome: JSON = {"streams": 0, "complete": 0, "answered": 0, "truncated": 0}
    traffic: Counter[str] = Counter()
    stop = anyio.Event()
    async with httpx2.AsyncClient(timeout=30) as client:
        sid = await open_session(client, url, "term-init")
        started = anyio.Event()
        opened = 0

        async def work_stream(i: int) -> None:
            nonlocal opened
            msg = call(f"term-{i}", "work", {"ms": 1500, "steps": 15}, progress=True)
            try:
                async with client.stream(
                    "POST", url, json=msg, headers=headers(sid, accept="text/event-stream")
                ) as r:
                    outcome["streams"] += 1
                    got_answer = False
                    async for _, data in SSE(r).events():
                        opened += 1
                        if opened >= 4:
                            started.set()
                        if data and f"term-{i}" in data and '"result"' in data:
                            got_answer = True
                    outcome["complete"] += 1
                    outcome["answered"] += int(got_answer)
            except httpx2.HTTPError:
                outcome["truncated"] += 1

        async def standalone() -> None:
            h = headers(sid, accept="text/event-stream")
            h.pop("content-type")
            try:
                async with client.stream("GET", url, headers=h) as r:
                    outcome["streams"] += 1
                    async for _ in r.aiter_lines():
                        pass
                    outcome["complete"] += 1
            except httpx2.HTTPError:
                outcome["truncated"] += 1

        async def quick(n: int) -> None:
            """Echo calls on a session until the server is gone: each response that
            begins must complete (answered, or 503 while shutting down); requests that
            get no response at all (refused connections, keep-alive connections the
            server closes as it stops) are counted apart."""
            seq = 0
            with contextlib.suppress(httpx2.ConnectError):
                while not stop.is_set():
                    seq += 1
                    rid = f"q{n}-{seq}"
                    began = False  # response headers received: from then on, a cut is a truncation
                    try:
                        async with client.stream(
                            "POST", url, json=call(rid, "echo", {"text": rid}), headers=headers(sid)
                        ) as r:
                            began = True
                            status, msgs = r.status_code, await read_messages(r)
                    except httpx2.HTTPError as exc:
                        if began:
                            traffic["truncated"] += 1
                            traffic[f"truncated: {type(exc).__name__}: {exc}"[:120]] += 1
                        else:  # refused, or the connection closed before any response byte
                            traffic["no response begun"] += 1
                            await anyio.sleep(0.01)
                        continue
                    if status == 200 and any(m.get("id") == rid for m in msgs):
                        traffic["answered"] += 1
                    elif status == 503:
                        traffic["refused 503"] += 1
                    else:
                        traffic[f"HTTP {status}"] += 1

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(work_stream, i)
            tg.start_soon(standalone)
            for n in range(4):
                tg.start_soon(quick, n)
            with anyio.fail_after(15):
                await started.wait()
            t0 = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(lambda: server.proc.wait(20))
            stop.set()
    outcome["quick_calls"] = dict(traffic)
    outcome["exit_code"] = code
    outcome["exit_s"] = round(time.monotonic() - t0, 2)
    await anyio.sleep(0.2)
    outcome["orphans"] = server.group_members()
    log = server.stderr_text()
    outcome["asgi_errors"] = log.count(
        "ASGI callable returned without completing response"
    ) + log.count("Traceback")
    return outcome


async def soak(args: argparse.Namespace) -> JSON:
    server = ServerProcess(args.idle_timeout_s)
    tally = Tally()
    samples: list[tuple[float, int, int]] = []
    try:
        url = server.url
        idle = await stats(url)
        warm_deadline = time.monotonic() + args.warmup_s
        workers = [Worker(i, url, tally, args.seed) for i in range(args.clients)]
        async with anyio.create_task_group() as tg:
            for w in workers:
                tg.start_soon(w.run, warm_deadline)
        baseline = await settle(server, args.idle_timeout_s)
        t0 = time.monotonic()
        deadline = t0 + args.duration_s
        done = anyio.Event()

        async def sampler() -> None:
            while not done.is_set():
                samples.append((round(time.monotonic() - t0, 1), server.rss_kib(), server.fds()))
                with anyio.move_on_after(args.sample_s):
                    await done.wait()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sampler)
            async with anyio.create_task_group() as load:
                for w in workers:
                    load.start_soon(w.run, deadline)
            samples.append((round(time.monotonic() - t0, 1), server.rss_kib(), server.fds()))
            done.set()
        load_s = time.monotonic() - t0
        end = await settle(server, args.idle_timeout_s)
        end_rss = server.rss_kib()
        report: JSON = {
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "duration_s": round(load_s, 1),
            "clients": args.clients,
            "scenarios": dict(tally.scenarios),
            "expected": tally.expected,
            "answered": tally.answered,
            "lost": tally.lost,
            "duplicated": tally.duplicated,
            "cancelled": tally.cancelled,
            "abandoned": tally.abandoned,
            "throughput_rps": round(tally.answered / load_s, 1) if load_s else 0,
            "latency_ms": {
                kind: {
                    "count": len(values),
                    "p50": round(percentile(values, 0.50), 2),
                    "p99": round(percentile(values, 0.99), 2),
                    "mean": round(statistics.fmean(values), 2),
                }
                for kind, values in sorted(tally.latencies_ms.items())
            },
            "rss_kib": {
                "idle": idle["rss_kib"],
                "start": samples[0][1] if samples else None,
                "middle": samples[len(samples) // 2][1] if samples else None,
                "end": samples[-1][1] if samples else None,
                "settled": end_rss,
                "max": max(s[1] for s in samples) if samples else None,
            },
            "rss_samples": samples[:: max(1, len(samples) // 12)],
            "baseline": baseline,
            "end": end,
            "problems": tally.problems,
        }
        if args.sigterm:
            report["sigterm"] = await sigterm_phase(server)
        return report
    finally:
        server.kill()


def verdict(report: JSON, rss_bound_kib: int) -> list[str]:
    """The checks; an empty list when the soak passed."""
    failures: list[str] = []
    if report["lost"]:
        failures.append(f"{report['lost']} lost responses")
    if report["duplicated"]:
        failures.append(f"{report['duplicated']} duplicated responses")
    if report["expected"] == 0:
        failures.append("no request was made")
    base, end = report["baseline"], report["end"]
    for key in ("tasks", "fds"):
        if end[key] > base[key]:
            failures.append(f"{key} {end[key]} at the end, {base[key]} at the baseline")
    objects, objects_base = end.get("objects"), base.get("objects")
    if objects is not None and objects_base is not None and objects > objects_base * 1.02 + 500:
        failures.append(f"{objects} live Python objects at the end, {objects_base} at the baseline")
    if end["sessions"] != 0 or end["posts"] != 1:  # the stats request itself is a POST
        failures.append(f"sessions {end['sessions']} / posts {end['posts']} left at the end")
    rss = report["rss_kib"]
    if rss["start"] is not None and rss["end"] - rss["start"] > rss_bound_kib:
        failures.append(
            f"RSS grew {rss['end'] - rss['start']} KiB once warm (bound {rss_bound_kib})"
        )
    term = report.get("sigterm")
    if term is not None:
        if (
            term["truncated"]
            or term["complete"] != term["streams"]
            or term["quick_calls"].get("truncated")
        ):
            failures.append(f"SIGTERM left truncated streams: {term}")
        if term["answered"] != 4:
            failures.append(
                f"SIGTERM: {term['answered']} of 4 running calls answered in the grace period"
            )
        if term["orphans"] or term["exit_code"] not in (0, -signal.SIGTERM):
            failures.append(f"SIGTERM: exit {term['exit_code']}, processes left {term['orphans']}")
        if term["asgi_errors"]:
            failures.append("SIGTERM: ASGI errors or tracebacks in the server log")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration-s", type=float, default=60.0, help="load phase, seconds")
    parser.add_argument(
        "--warmup-s", type=float, default=10.0, help="warm-up load before the baseline"
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument(
        "--idle-timeout-s", type=float, default=3.0, help="server session idle expiry"
    )
    parser.add_argument("--sample-s", type=float, default=5.0, help="RSS sampling period")
    parser.add_argument(
        "--rss-bound-mib", type=float, default=16.0, help="allowed RSS growth once warm"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sigterm", action="store_true", help="end with the SIGTERM check")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args(argv)
    report = anyio.run(soak, args)
    failures = verdict(report, int(args.rss_bound_mib * 1024))
    report["failures"] = failures
    text = json.dumps(report, indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)
    print("SOAK " + ("FAILED: " + "; ".join(failures) if failures else "PASSED"), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
