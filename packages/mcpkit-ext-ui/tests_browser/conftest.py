"""The browser tests' fixtures: Debian's chromium (``MCPKIT_CHROMIUM``, set by the nox session),
launched by Playwright headless and offline, and the loopback servers of harness.py.

Rules:
1. A missing browser is an error, never a skip.
2. Offline: every host name but ``localhost`` and ``127.0.0.1`` resolves to nothing
   (``--host-resolver-rules``) and background networking is off, so a page can reach only
   the loopback servers the test started. ``--no-sandbox`` only when running as root
   (chromium's sandbox refuses root).
3. The host page and the bridge endpoint share one origin; the sandbox proxy has another;
   the asset servers and the MCP server have their own. The bridge's AppHosts reach the MCP
   server over Streamable HTTP with a real client.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from apps import TestServer, dumps
from harness import AssetServer, sdk_dir, serve
from playwright.sync_api import Browser, FrameLocator, Page, sync_playwright

from mcpkit.client import Client
from mcpkit.ext.ui.host import AppHost, bridge_app, client_extension
from mcpkit.ext.ui.static import assets_app
from mcpkit.server import Server

OFFLINE_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--no-first-run",
]

ASGI = Callable[[Any, Any, Any], Awaitable[None]]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = os.environ.get("MCPKIT_CHROMIUM") or "/usr/bin/chromium"
    if not os.path.exists(executable):
        raise RuntimeError(f"no chromium at {executable}: run `uv run nox -s ext-ui-browser`")
    args = list(OFFLINE_ARGS)
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        try:
            yield launched
        finally:
            launched.close()


HOST_INFO = {"name": "mcpkit-test-host", "version": "1.0.0"}


def host_site(mcp_url: str) -> ASGI:
    """The host page's origin: ``/host.html`` and ``/host.js`` from the wheel's assets,
    everything else to the bridge endpoint, whose AppHosts share one client of the MCP
    server at ``mcp_url`` (declaring the UI extension), connected for the app's lifespan."""
    pages = assets_app(["host.html", "host.js"])
    clients: list[Client] = []

    def open_view(body: dict[str, Any]) -> AppHost:
        return AppHost(clients[0], tool_name=str(body["toolName"]), host_info=HOST_INFO)

    bridge = bridge_app(open_view)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            async with Client(mcp_url, extensions=[client_extension()]) as client:
                clients.append(client)
                await bridge(scope, receive, send)
        elif scope["type"] == "http" and scope["path"] in ("/host.html", "/host.js"):
            await pages(scope, receive, send)
        else:
            await bridge(scope, receive, send)

    return app


def open_view(
    page: Page, host: str, sandbox: str, tool: str, arguments: dict[str, Any] | None = None
) -> FrameLocator:
    """Open the host page at ``host`` on ``tool``; returns the View's frame (inside the
    sandbox proxy's frame)."""
    query = {"tool": tool, "args": dumps(arguments or {}), "sandbox": sandbox}
    page.goto(f"{host}/host.html?{urlencode(query)}")
    return page.frame_locator("#app > iframe").frame_locator("iframe")


@contextlib.contextmanager
def hosting(server: Server) -> Iterator[str]:
    """Serve ``server`` over Streamable HTTP and a host page + bridge for it; yields the
    host page's base URL."""
    with serve(server.http_app()) as mcp_base, serve(host_site(f"{mcp_base}/mcp")) as host:
        yield host


@pytest.fixture(scope="session")
def sandbox() -> Iterator[str]:
    """The sandbox proxy's URL, on its own origin."""
    with serve(assets_app(["sandbox.html"])) as base:
        yield f"{base}/sandbox.html"


@dataclass
class Site:
    """The running servers of the test server's apps."""

    host: str
    sandbox: str
    declared: AssetServer
    declared_url: str
    undeclared: AssetServer
    undeclared_url: str
    server: TestServer

    def open(self, page: Page, tool: str, arguments: dict[str, Any] | None = None) -> FrameLocator:
        return open_view(page, self.host, self.sandbox, tool, arguments)


@pytest.fixture(scope="session")
def site(sandbox: str) -> Iterator[Site]:
    declared, undeclared = AssetServer(sdk_dir()), AssetServer(None)
    with serve(declared.app) as declared_url, serve(undeclared.app) as undeclared_url:
        test_server = TestServer(declared_url, undeclared_url)
        with hosting(test_server.server) as host:
            yield Site(
                host=host,
                sandbox=sandbox,
                declared=declared,
                declared_url=declared_url,
                undeclared=undeclared,
                undeclared_url=undeclared_url,
                server=test_server,
            )


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 900, "height": 640})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        # Tear the test's view down (it answers at once) rather than leave it to the
        # bridge's shutdown, which waits for views whose page is gone.
        opened.evaluate("() => window.mcpkitHost ? mcpkitHost.teardown() : null")
        context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``MCPKIT_SCREENSHOTS`` (the nox session's tmp dir), else a
    temporary directory: a test never writes into the working tree."""
    named = os.environ.get("MCPKIT_SCREENSHOTS")
    folder = Path(named) if named else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
