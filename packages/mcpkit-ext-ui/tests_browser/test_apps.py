"""MCP Apps in a real browser: the host page (host.html) renders each app through the
double-iframe sandbox proxy (sandbox.html, another origin) and relays it to the Python
AppHost over the bridge endpoint; the apps use bridge.js or the npm App SDK.

Each test drives the page with real input (Playwright clicks in the View's iframe) and
checks both sides: what the View shows, and what the MCP server was asked.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Site
from playwright.sync_api import Page, expect

DEADLINE_S = 15.0


def host_state(page: Page) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        "() => ({status: mcpkitHost.state.status, viewId: mcpkitHost.state.viewId,"
        " error: mcpkitHost.state.error, events: mcpkitHost.state.events,"
        " sizes: mcpkitHost.state.sizes})"
    )
    return state


def methods(page: Page, direction: str) -> list[str]:
    events: list[dict[str, Any]] = host_state(page)["events"]
    return [e["message"].get("method", "") for e in events if e["dir"] == direction]


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_handshake_goes_through_the_sandbox_proxy(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Ada"})
    expect(view.locator("#host")).to_have_text(re.compile(r"host: \S+"))
    answer = next(
        e["message"]["result"]
        for e in host_state(page)["events"]
        if e["dir"] == "out" and "hostInfo" in e["message"].get("result", {})
    )
    expect(view.locator("#host")).to_have_text("host: " + answer["hostInfo"]["name"])
    assert answer["protocolVersion"] == "2026-01-26"
    inbound = methods(page, "in")
    outbound = methods(page, "out")
    # The View spoke first, through the proxy; the proxy's own messages stayed local.
    assert inbound[0] == "ui/initialize"
    assert "ui/notifications/initialized" in inbound
    assert outbound[0] == "ui/notifications/sandbox-resource-ready"
    assert not [m for m in inbound if m.startswith("ui/notifications/sandbox-")]
    # The two frames really are on two origins, and the View's is opaque.
    frames = page.frames
    assert len(frames) == 3
    proxy_origin = frames[1].evaluate("() => location.origin")
    assert proxy_origin == site.sandbox.rsplit("/", 1)[0] != site.host
    assert frames[2].evaluate("() => self.origin") == "null"
    # The proxy never grants the View allow-same-origin (it would share the proxy's origin
    # and could run code in the proxy's window, outside its own CSP), whatever was asked.
    asked = next(
        e["message"]["params"].get("sandbox", "")
        for e in host_state(page)["events"]
        if e["message"].get("method") == "ui/notifications/sandbox-resource-ready"
    )
    granted = frames[1].evaluate("() => document.querySelector('iframe').getAttribute('sandbox')")
    assert "allow-scripts" in granted.split()
    assert "allow-same-origin" not in granted.split(), (asked, granted)
    reach = "() => { try { return parent.document.title; } catch (e) { return e.name; } }"
    assert frames[2].evaluate(reach) == "SecurityError"
    # The View's CSP came from the host: the restrictive default, as meta in its document.
    policy = frames[2].evaluate(
        "() => document.querySelector('meta[http-equiv=Content-Security-Policy]').content"
    )
    assert "default-src 'none'" in policy
    assert "connect-src 'none'" in policy


def test_tool_result_renders_in_the_view(site: Site, page: Page, screenshots: Path) -> None:
    view = site.open(page, "greet", {"name": "Grace"})
    expect(view.locator("#greeting")).to_have_text("Hello, Grace!")
    expect(view.locator("#input")).to_have_text('input: {"name":"Grace"}')
    assert ("greet", {"name": "Grace"}) in site.server.calls
    outbound = methods(page, "out")
    assert outbound.index("ui/notifications/tool-input") < outbound.index(
        "ui/notifications/tool-result"
    )
    # Auto-resize: bridge.js reported the content's size and the host sized the iframe.
    wait_for(lambda: bool(host_state(page)["sizes"]), "ui/notifications/size-changed")
    page.screenshot(path=str(screenshots / "greeting.png"), full_page=True)


def test_app_calls_an_app_tool_and_is_refused_a_model_only_one(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Alan"})
    expect(view.locator("#greeting")).to_have_text("Hello, Alan!")
    view.locator("#add").click()
    expect(view.locator("#add-result")).to_have_text("add: 42")
    assert ("add", {"a": 2, "b": 40}) in site.server.calls
    before = len(site.server.calls)
    view.locator("#secret").click()
    expect(view.locator("#secret-result")).to_contain_text("secret refused: -3")
    assert ("secret", {}) not in site.server.calls[before:]
    assert ("secret", {}) not in site.server.calls


def test_csp_blocks_undeclared_origins(site: Site, page: Page, screenshots: Path) -> None:
    view = site.open(page, "probe")
    probe = view.locator("#probe")
    expect(probe).not_to_have_text("running")
    results = json.loads(probe.text_content() or "{}")
    assert results["fetchDeclared"] == "answer 42"
    assert results["imageDeclared"] == "loaded"
    assert results["fetchUndeclared"] == "blocked"
    assert results["imageUndeclared"] == "blocked"
    blocked = {uri.split("?")[0] for uri in results["violations"]}
    assert blocked == {f"{site.undeclared_url}/data.json", f"{site.undeclared_url}/pixel.png"}
    # The blocked requests never left the browser; the declared ones arrived.
    assert site.undeclared.requested == []
    assert {"/data.json", "/pixel.png"} <= set(site.declared.requested)
    page.screenshot(path=str(screenshots / "csp-probe.png"), full_page=True)


def test_teardown_asks_the_view_then_removes_it(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Barbara"})
    expect(view.locator("#greeting")).to_have_text("Hello, Barbara!")
    inner = page.frames[2]
    answer = page.evaluate("() => mcpkitHost.teardown()")
    assert answer == {"answered": True}
    assert host_state(page)["status"] == "torn down"
    outbound = methods(page, "out")
    assert "ui/resource-teardown" in outbound
    answered = [
        e["message"]
        for e in host_state(page)["events"]
        if e["dir"] == "in" and "result" in e["message"]
    ]
    assert answered, "the View answered ui/resource-teardown"
    assert inner.is_detached()
    assert page.locator("#app iframe").count() == 0


def test_npm_app_sdk_handshakes_and_calls_a_server_tool(
    site: Site, page: Page, screenshots: Path
) -> None:
    assert site.declared.sdk_dir is not None, "MCPKIT_EXT_APPS_DIR: run the nox session"
    view = site.open(page, "sdk_echo")
    expect(view.locator("#echo")).to_have_text(re.compile(r"echo via \S+: from the App SDK"))
    expect(view.locator("#state")).to_have_text("tool result: the SDK app is up")
    assert ("echo", {"text": "from the App SDK"}) in site.server.calls
    inbound = methods(page, "in")
    assert inbound[:2] == ["ui/initialize", "ui/notifications/initialized"]
    initialize = next(
        e["message"]
        for e in host_state(page)["events"]
        if e["message"].get("method") == "ui/initialize"
    )
    assert initialize["params"]["protocolVersion"] == "2026-01-26"
    assert initialize["params"]["appInfo"]["name"] == "sdk-interop"
    assert "/sdk/app-with-deps.js" in site.declared.requested
    page.screenshot(path=str(screenshots / "app-sdk.png"), full_page=True)


def test_view_may_ask_to_be_torn_down(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Frances"})
    expect(view.locator("#greeting")).to_have_text("Hello, Frances!")
    page.frames[2].evaluate("() => app.requestTeardown()")
    wait_for(lambda: host_state(page)["status"] == "torn down", "teardown on request")
    inbound = methods(page, "in")
    asked = inbound.index("ui/notifications/request-teardown")
    assert "" in inbound[asked + 1 :]  # then the View answered ui/resource-teardown
    assert "ui/resource-teardown" in methods(page, "out")
    assert page.locator("#app iframe").count() == 0
