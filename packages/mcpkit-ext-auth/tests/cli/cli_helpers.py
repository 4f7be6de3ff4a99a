"""Helpers for the tests of the auth extension's command line, docs and interop: a real
uvicorn on a free 127.0.0.1 port in the test's event loop, the real ``mcpkit`` command
run as a subprocess (the ``mcpkit.cli`` entry point of the installed distribution loads
the plugin), and a stand-in browser for ``--auth``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from loopback import serve_at

from mcpkit.ext.auth.server import AuthSettings, principal, protect
from mcpkit.server import Context, Server


@contextlib.asynccontextmanager
async def serve(make_app: Callable[[str], Any]) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` with uvicorn on a free 127.0.0.1 port (the app learns
    its own URL first, as a protected server must); yields ``http://127.0.0.1:PORT``."""
    async with serve_at(make_app) as base:
        yield base


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``mcpkit`` subprocess: a private config dir under ``home``."""
    env = {**os.environ, "COLUMNS": "200", "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("MCPKIT_TOKEN_FILE", None)
    return {**env, **extra}


async def mcpkit(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``mcpkit`` console script of this environment (bounded: 120 s)."""
    script = Path(sys.executable).parent / "mcpkit"
    with anyio.fail_after(120):
        return await anyio.run_process([str(script), *args], check=False, env=cli_env(home, **env))


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


BROWSER_SCRIPT = '''
"""A stand-in browser: detaches, then follows the authorization URL's redirects (the
development authorization server consents at once) until the redirect receiver answers."""
import os
import subprocess
import sys

if sys.argv[1] != "--child":
    if os.environ.get("FAKE_BROWSER_LOG"):
        with open(os.environ["FAKE_BROWSER_LOG"], "a") as log:
            log.write(sys.argv[1] + "\\n")
    subprocess.Popen(
        [sys.executable, __file__, "--child", sys.argv[1]],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sys.exit(0)
import time

import httpx2

time.sleep(float(os.environ.get("FAKE_BROWSER_DELAY_S", "0")))  # a person reading the page
httpx2.get(sys.argv[2], follow_redirects=True, timeout=30)
'''


def browser_env(tmp: Path) -> str:
    """A ``$BROWSER`` value that runs :data:`BROWSER_SCRIPT` (``webbrowser`` honours it)."""
    script = tmp / "browser.py"
    script.write_text(BROWSER_SCRIPT)
    return f"{sys.executable} {script} %s"


def follow_in_thread(url: str) -> bool:
    """An in-process stand-in for ``webbrowser.open``: GET ``url`` and follow its
    redirects in a thread (the event loop is serving the redirect receiver meanwhile)."""
    import threading

    import httpx2

    threading.Thread(
        target=lambda: httpx2.get(url, follow_redirects=True, timeout=30), daemon=True
    ).start()
    return True


def whoami_app(
    base: str,
    issuer: str,
    *,
    validator: Any = None,
    required_scopes: Sequence[str] = (),
    scopes_supported: Sequence[str] = (),
    writer_scope: str | None = None,
) -> Any:
    """A protected server at ``base + "/mcp"`` trusting ``issuer`` (its JWKS at
    ``issuer + "/jwks"``, or ``validator``). ``whoami`` answers
    ``"<subject> <client_id> <sorted scopes>"``; ``add_note(text)`` answers
    ``"saved <text>"`` and needs ``writer_scope`` when given."""
    server = Server("protected")

    @server.tool()
    def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        caller = principal(ctx)
        assert caller is not None
        return f"{caller.subject} {caller.client_id} {' '.join(sorted(caller.scopes))}".strip()

    @server.tool()
    def add_note(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"saved {text}"

    settings = AuthSettings(
        server_url=f"{base}/mcp",
        authorization_servers=[issuer],
        jwks_url=None if validator is not None else f"{issuer}/jwks",
        required_scopes=required_scopes,
        scopes_supported=scopes_supported,
    )
    auth = protect(server, settings, validator=validator)
    if writer_scope is not None:
        auth.require(tool="add_note", all_of=[writer_scope])
    return server.http_app()
