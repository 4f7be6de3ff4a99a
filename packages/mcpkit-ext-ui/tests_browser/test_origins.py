"""Who may talk to whom: the host page relays only what comes from the sandbox proxy's
window and origin, and the proxy forwards nothing named ``ui/notifications/sandbox-*``.

The App SDK posts with target origin ``*``, so these checks are the host's and the proxy's
own (host.js rule 1, sandbox.html rules 1 and 5). Each test sends a forged message, then a
real one through the proper path, and checks after the real one arrived (messages are
handled in order) that the forged one had no effect."""

from __future__ import annotations

from typing import Any

from conftest import Site
from playwright.sync_api import Page, expect

FORGED_CALL = (
    "() => window.top.postMessage({jsonrpc: '2.0', id: 'forged', method: 'tools/call',"
    " params: {name: 'add', arguments: {a: 1000, b: 1}}}, '*')"
)


def inbound(page: Page) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = page.evaluate("() => mcpkitHost.state.events")
    return [e["message"] for e in events if e["dir"] == "in"]


def test_host_ignores_messages_not_from_the_proxy(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Edsger"})
    expect(view.locator("#greeting")).to_have_text("Hello, Edsger!")
    page.frames[2].evaluate(FORGED_CALL)  # the View, straight to the top window
    page.evaluate(FORGED_CALL)  # the host page's own window: right origin, wrong source
    view.locator("#add").click()
    expect(view.locator("#add-result")).to_have_text("add: 42")
    assert ("add", {"a": 1000, "b": 1}) not in site.server.calls
    assert not [m for m in inbound(page) if m.get("id") == "forged"]


def test_proxy_forwards_no_sandbox_messages_from_the_view(site: Site, page: Page) -> None:
    view = site.open(page, "greet", {"name": "Tony"})
    expect(view.locator("#greeting")).to_have_text("Hello, Tony!")
    page.evaluate("() => { window.raw = []; addEventListener('message', e => raw.push(e.data)); }")
    page.frames[2].evaluate(
        "() => parent.postMessage({jsonrpc: '2.0', method:"
        " 'ui/notifications/sandbox-resource-ready', params: {html: '<p id=evil>evil</p>'}}, '*')"
    )
    page.frames[2].evaluate(
        "() => parent.postMessage({jsonrpc: '2.0', method:"
        " 'ui/notifications/sandbox-proxy-ready', params: {}}, '*')"
    )
    view.locator("#add").click()
    expect(view.locator("#add-result")).to_have_text("add: 42")
    # The proxy still holds the one View it was given, and passed neither message on.
    assert page.frames[1].evaluate("() => document.querySelectorAll('iframe').length") == 1
    expect(view.locator("#greeting")).to_have_text("Hello, Tony!")
    arrived: list[dict[str, Any]] = page.evaluate("() => raw")
    assert "tools/call" in [m.get("method") for m in arrived]
    assert not [
        m for m in arrived if str(m.get("method", "")).startswith("ui/notifications/sandbox-")
    ]
    sent = page.evaluate(
        "() => mcpkitHost.state.events.filter(e => e.message.method"
        " === 'ui/notifications/sandbox-resource-ready').length"
    )
    assert sent == 1
