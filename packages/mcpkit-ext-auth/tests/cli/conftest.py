"""Fixtures for the ``mcpkit`` command tests of the auth extension: a real uvicorn on a
free 127.0.0.1 port in the test's event loop, and the real ``mcpkit`` command run as a
subprocess (the ``mcpkit.cli`` entry point of the installed distribution loads the plugin).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def serve(make_app: Callable[[str], Any]) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` with uvicorn on a free 127.0.0.1 port (the app learns
    its own URL first, as a protected server must); yields ``http://127.0.0.1:PORT``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = make_app(f"http://127.0.0.1:{port}")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``mcpkit`` subprocess: a private config dir under ``home``."""
    env = {**os.environ, "COLUMNS": "200", "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("MCPKIT_TOKEN_FILE", None)
    return {**env, **extra}


async def mcpkit(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``mcpkit`` console script of this environment (bounded: 120 s)."""
    script = Path(sys.executable).parent / "mcpkit"
    with anyio.fail_after(120):
        return await anyio.run_process(
            [str(script), *args], check=False, env=cli_env(home, **env)
        )


def mcpkit_sync(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "mcpkit"
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=cli_env(home, **env),
    )
