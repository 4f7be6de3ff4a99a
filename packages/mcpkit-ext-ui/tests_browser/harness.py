"""Loopback servers for the browser tests: each runs uvicorn in a thread of the test process.

Rules:
1. Every server binds 127.0.0.1 on a free port, is up before the block runs (bounded: 10 s)
   and is stopped when it ends.
2. Each role has its own origin (port): the host page with the bridge endpoint, the sandbox
   proxy, an asset server the apps declare in their CSP, one they do not declare, the MCP
   server. The browser therefore sees the double iframe on two origins, as the spec asks.
3. An asset server answers ``/pixel.png``, ``/data.json`` and ``/sdk/{file}`` (the npm App
   SDK's ``dist/src``, when ``MCPKIT_EXT_APPS_DIR`` names it) with
   ``Access-Control-Allow-Origin: *`` (a View has an opaque origin), and records every path
   it was asked for: a CSP test asserts that the blocked request never left the browser.
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CORS = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store"}


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Rule 1: serve ``app`` on loopback in a thread; yields ``http://127.0.0.1:PORT``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, ws="none"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"uvicorn did not start on {base}")
        time.sleep(0.01)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


class AssetServer:
    """Rule 3: static answers with CORS, and the list of paths requested."""

    def __init__(self, sdk_dir: Path | None) -> None:
        self.requested: list[str] = []
        self.sdk_dir = sdk_dir
        self.app = Starlette(
            routes=[
                Route("/pixel.png", self._pixel),
                Route("/data.json", self._data),
                Route("/sdk/{file}", self._sdk),
            ]
        )

    async def _pixel(self, request: Request) -> Response:
        self.requested.append(request.url.path)
        return Response(PIXEL_PNG, media_type="image/png", headers=CORS)

    async def _data(self, request: Request) -> Response:
        self.requested.append(request.url.path)
        return JSONResponse({"answer": 42}, headers=CORS)

    async def _sdk(self, request: Request) -> Response:
        self.requested.append(request.url.path)
        name = str(request.path_params["file"])
        if self.sdk_dir is None or "/" in name or not (self.sdk_dir / name).is_file():
            return PlainTextResponse("not found", status_code=404, headers=CORS)
        return FileResponse(self.sdk_dir / name, media_type="text/javascript", headers=CORS)


def sdk_dir() -> Path | None:
    """The npm App SDK's ``dist/src`` (set by the nox session), or None."""
    found = os.environ.get("MCPKIT_EXT_APPS_DIR")
    return Path(found) if found else None
