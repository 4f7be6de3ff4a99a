"""bridge.js alone in Chromium: a parent page plays the host (answering and sending the
spec's messages by hand) to a View iframe built on the bridge, so each rule of bridge.js
is checked on the wire, including what a host through AppHost never sends (partial input,
cancellation, context changes, unknown requests, error answers, silence)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Frame, Page

from mcpkit.ext.ui import bridge_script

VIEW = """<!DOCTYPE html><html><body><div id="box" style="height: 50px"></div>
<script>__BRIDGE__</script>
<script>
  window.log = [];
  const app = new McpkitApp({ name: "unit", version: "1.0.0" }, { requestTimeoutMs: 1500 });
  for (const name of ["ontoolinput", "ontoolinputpartial", "ontoolresult", "ontoolcancelled",
                      "onhostcontextchanged"]) {
    app[name] = (params) => log.push([name, params]);
  }
  app.onteardown = async (params) => {
    log.push(["onteardown", params]);
    await new Promise((resolve) => setTimeout(resolve, 50));
  };
  window.app = app;
  app.connect();
</script></body></html>"""

PARENT = """<!DOCTYPE html><html><body><script>
  window.received = [];
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.srcdoc = __VIEW__;
  window.send = (message) => frame.contentWindow.postMessage(message, "*");
  addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    received.push(m);
    if (m.method === "ui/initialize") {
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2026-01-26",
        hostInfo: { name: "unit-host", version: "1" }, hostCapabilities: { openLinks: {} },
        hostContext: { theme: "light", locale: "en-GB" } } });
    } else if (m.method === "ui/open-link") {
      send({ jsonrpc: "2.0", id: m.id,
             error: { code: -32000, message: "denied", data: { why: "policy" } } });
    } else if (m.method === "tools/call") {
      send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ok" }] } });
    }
  });
  document.body.appendChild(frame);
</script></body></html>"""


@pytest.fixture
def view(page: Page) -> Frame:
    html = VIEW.replace("__BRIDGE__", bridge_script())
    literal = json.dumps(html).replace("</", "<\\/")  # inside the parent's <script>
    page.set_content(PARENT.replace("__VIEW__", literal))
    page.wait_for_function("() => received.some(m => m.method === 'ui/notifications/initialized')")
    return page.frames[1]


def received(page: Page) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = page.evaluate("() => received")
    return messages


def send(page: Page, message: dict[str, Any]) -> None:
    page.evaluate("(m) => send(m)", message)


def test_handshake_then_initialized_then_sizes(page: Page, view: Frame) -> None:
    first, second = received(page)[:2]
    assert first["method"] == "ui/initialize"
    assert first["params"] == {
        "protocolVersion": "2026-01-26",
        "appInfo": {"name": "unit", "version": "1.0.0"},
        "appCapabilities": {},
    }
    assert second == {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}
    assert view.evaluate("() => app.hostInfo") == {"name": "unit-host", "version": "1"}
    assert view.evaluate("() => app.hostCapabilities") == {"openLinks": {}}
    page.wait_for_function("() => received.some(m => m.method === 'ui/notifications/size-changed')")
    sizes = [m["params"] for m in received(page) if m["method"] == "ui/notifications/size-changed"]
    assert len(sizes) == 1
    assert sizes[0]["height"] >= 50
    view.evaluate("() => { document.getElementById('box').style.height = '400px'; }")
    page.wait_for_function(
        "() => received.filter(m => m.method === 'ui/notifications/size-changed').length === 2"
    )
    grown = [m["params"] for m in received(page) if m["method"] == "ui/notifications/size-changed"]
    assert grown[1]["height"] >= 400
    assert grown[1]["width"] == grown[0]["width"]
    # No change, no notification: a frame later there are still two.
    view.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    count = "() => received.filter(m => m.method === 'ui/notifications/size-changed').length"
    assert page.evaluate(count) == 2


def test_host_notifications_reach_their_handlers(page: Page, view: Frame) -> None:
    notes = [
        ("ui/notifications/tool-input-partial", {"arguments": {"city": "Os"}}),
        ("ui/notifications/tool-input", {"arguments": {"city": "Oslo"}}),
        ("ui/notifications/tool-result", {"content": [{"type": "text", "text": "7 °C"}]}),
        ("ui/notifications/tool-cancelled", {"reason": "user"}),
        ("ui/notifications/host-context-changed", {"theme": "dark"}),
    ]
    for method, params in notes:
        send(page, {"jsonrpc": "2.0", "method": method, "params": params})
    view.wait_for_function("() => log.length === 5")
    assert view.evaluate("() => log") == [
        ["ontoolinputpartial", notes[0][1]],
        ["ontoolinput", notes[1][1]],
        ["ontoolresult", notes[2][1]],
        ["ontoolcancelled", notes[3][1]],
        ["onhostcontextchanged", notes[4][1]],
    ]
    assert view.evaluate("() => app.hostContext") == {"theme": "dark", "locale": "en-GB"}


def test_host_requests_are_answered(page: Page, view: Frame) -> None:
    send(page, {"jsonrpc": "2.0", "id": 7, "method": "ping"})
    send(page, {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}})
    send(page, {"jsonrpc": "2.0", "id": "t", "method": "ui/resource-teardown", "params": {}})
    page.wait_for_function("() => received.filter(m => 'id' in m && !m.method).length === 3")
    answers = {m["id"]: m for m in received(page) if "id" in m and "method" not in m}
    assert answers[7] == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert answers[8]["error"]["code"] == -32601
    assert answers["t"] == {"jsonrpc": "2.0", "id": "t", "result": {}}
    assert view.evaluate("() => log") == [["onteardown", {}]]


def test_requests_resolve_reject_and_time_out(page: Page, view: Frame) -> None:
    result = view.evaluate("() => app.callServerTool('add', {a: 1})")
    assert result == {"content": [{"type": "text", "text": "ok"}]}
    call = next(m for m in received(page) if m.get("method") == "tools/call")
    assert call["params"] == {"name": "add", "arguments": {"a": 1}}
    refused = view.evaluate(
        "() => app.openLink('https://example.com/x').then("
        "() => 'opened', (e) => [e.code, e.message, e.data])"
    )
    assert refused == [-32000, "denied", {"why": "policy"}]
    link = next(m for m in received(page) if m.get("method") == "ui/open-link")
    assert link["params"] == {"url": "https://example.com/x"}
    silent = view.evaluate(
        "() => app.request('ui/request-display-mode', {mode: 'pip'})"
        ".then(() => 'answered', (e) => e.code)"
    )
    assert silent == -32001
    view.evaluate("() => { app.sendMessage('hello').catch(() => {}); }")
    page.wait_for_function("() => received.some(m => m.method === 'ui/message')")
    view.evaluate("() => app.requestTeardown()")
    page.wait_for_function(
        "() => received.some(m => m.method === 'ui/notifications/request-teardown')"
    )
    message = next(m for m in received(page) if m.get("method") == "ui/message")
    assert message["params"] == {"role": "user", "content": [{"type": "text", "text": "hello"}]}


def test_messages_not_from_the_parent_are_ignored(page: Page, view: Frame) -> None:
    forged = {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {"x": 1}}
    view.evaluate("(m) => window.postMessage(m, '*')", forged)
    real = {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {"x": 2}}
    send(page, real)
    view.wait_for_function("() => log.length >= 1")
    view.evaluate("() => new Promise((r) => setTimeout(r, 50))")
    assert view.evaluate("() => log") == [["ontoolresult", {"x": 2}]]
