"""The path one ``tools/call`` takes through mcpkit's modules, over HTTP, on both eras
(issue 27: "a request path that runs straight").

Usage: ``python tools/request_path.py`` prints, per era, the modules the request enters
in order and the figures below; ``--markdown`` prints the block ``docs/architecture.md``
shows (a test checks that the page holds exactly that block).

Rules:
1. The server is a :class:`~mcpkit.server.Server` with one tool, ``echo``, served by its
   Streamable HTTP app, driven with raw ASGI messages in this process (no socket, no
   HTTP client), so every frame recorded is mcpkit's own or a library's.
2. A session (handshake era) or a first call (2026-07-28) warms everything up; then one
   ``tools/call`` is traced with :func:`sys.setprofile`. Only frames of mcpkit's source
   modules count; a run of consecutive frames in one module is one *stay*.
3. A *stay* starts when a function of one module is called from another module (or
   from the event loop); returning to the caller and resuming a coroutine are not new
   stays. Figures: ``modules`` (distinct modules entered), ``stays``, ``returns`` (stays
   in a module the request had entered before: stays - modules) and ``climbs`` (a call
   from a module on a lower floor into one on a higher floor, floors from
   ``tools/layers.py``: a callback running up the layers).
4. The coarse clock's timer callback (``CoarseClock._tick``, every ``tick_s``) is not the
   request's path: on a loaded machine it can fire while the traced call waits for its
   thread, so frames under it are left out and the figures do not depend on the load.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layers import floor_of, source_files

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (LEGACY, MODERN)
Message = dict[str, Any]


def _server(tracer: Any = None) -> Any:
    from mcpkit.server import Server

    server = Server("path")
    if tracer is not None:
        server.set_tracer(tracer)

    @server.tool()
    def echo(text: str) -> str:
        """Echo ``text``."""
        return text

    return server


async def _post(app: Any, body: Message, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    raw = json.dumps(body).encode()
    sent = False
    status = 0
    out_headers: dict[str, str] = {}
    done = anyio.Event()

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            out_headers.update({k.decode(): v.decode() for k, v in message["headers"]})
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    base = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": "127.0.0.1",
    }
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in {**base, **headers}.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    await app(scope, receive, send)
    return status, out_headers


class PathTracer:
    def __init__(self) -> None:
        self.modules = {str(p): m for m, p in source_files().items()}
        self.stays: list[str] = []
        self.climbs: list[tuple[str, str]] = []
        self._seen: set[FrameType] = set()

    def from_tick(self, frame: FrameType | None) -> bool:
        """Rule 4: ``frame`` runs inside the coarse clock's timer callback."""
        while frame is not None:
            code = frame.f_code
            if code.co_qualname == "CoarseClock._tick" and self.modules.get(code.co_filename) == (
                "mcpkit.server.http.clock"
            ):
                return True
            frame = frame.f_back
        return False

    def module_of(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            found = self.modules.get(frame.f_code.co_filename)
            if found is not None:
                return found
            frame = frame.f_back
        return None

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or frame in self._seen:
            return  # a resumed coroutine is not a new entry
        self._seen.add(frame)
        here = self.modules.get(frame.f_code.co_filename)
        if here is None or self.from_tick(frame):
            return
        caller = self.module_of(frame.f_back)
        if caller == here or (self.stays and self.stays[-1] == here):
            return
        if caller is not None and floor_of(here)[1] > floor_of(caller)[1]:
            self.climbs.append((caller, here))
        self.stays.append(here)


async def trace(era: str, tracer: Any = None) -> PathTracer:
    """One traced ``tools/call`` on ``era`` (rules 1-2); ``tracer``: a
    :class:`~mcpkit.core.tracing.Tracer` to install on the server (the documented path
    has none)."""
    from mcpkit.server.http.app import http_app

    app = http_app(_server(tracer))
    call: Message = {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}
    call["params"] = {"name": "echo", "arguments": {"text": "hi"}}
    lifespan_done = anyio.Event()
    started = anyio.Event()

    async def lifespan_receive() -> Message:
        if not started.is_set():
            return {"type": "lifespan.startup"}
        await lifespan_done.wait()
        return {"type": "lifespan.shutdown"}

    async def lifespan_send(message: Message) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(
            app, {"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan_receive, lifespan_send
        )
        await started.wait()
        headers, run = await _prepare(app, era, call)
        await run(headers)  # warm-up
        tracer = PathTracer()
        sys.setprofile(tracer)
        try:
            await run(headers)
        finally:
            sys.setprofile(None)
        lifespan_done.set()
    return tracer


async def _prepare(
    app: Any, era: str, call: Message
) -> tuple[dict[str, str], Callable[[dict[str, str]], Awaitable[object]]]:
    if era == MODERN:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "path", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {**call, "params": {**call["params"], "_meta": meta}}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
    else:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "path", "version": "1"},
            },
        }
        _, got = await _post(app, init, {})
        sid = got["mcp-session-id"]
        headers = {"mcp-protocol-version": LEGACY, "mcp-session-id": sid}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await _post(app, note, headers)
        body = call

    async def run(headers: dict[str, str]) -> object:
        status, _ = await _post(app, body, headers)
        assert status == 200, status
        return status

    return headers, run


def figures(tracer: PathTracer) -> dict[str, int]:
    """The rule-3 figures of one traced request."""
    distinct = len(set(tracer.stays))
    return {
        "modules": distinct,
        "stays": len(tracer.stays),
        "returns": len(tracer.stays) - distinct,
        "climbs": len(tracer.climbs),
    }


def _short(module: str) -> str:
    return module.removeprefix("mcpkit.")


def markdown(traced: dict[str, PathTracer]) -> str:
    """The block docs/architecture.md shows: per era, the figures and the stays."""
    lines: list[str] = []
    for era, tracer in traced.items():
        f = figures(tracer)
        lines.append(
            f"{era}: {f['modules']} modules, {f['stays']} stays, "
            f"{f['returns']} returns, {f['climbs']} climbs"
        )
        lines.append("  " + " > ".join(_short(m) for m in tracer.stays))
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    traced = {era: anyio.run(trace, era) for era in ERAS}
    if "--markdown" in argv:
        print(markdown(traced), end="")
        return 0
    for era, tracer in traced.items():
        print(era, figures(tracer))
        for stay in tracer.stays:
            print("  ", stay)
        for caller, callee in tracer.climbs:
            print("   climb:", caller, "->", callee)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
