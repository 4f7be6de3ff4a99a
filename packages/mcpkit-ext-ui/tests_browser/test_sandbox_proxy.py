"""sandbox.html alone in Chromium: a parent page on its own loopback origin plays the host
and sends
``ui/notifications/sandbox-resource-ready`` by hand, as a host other than host.js may:
with the spec's ``csp`` object instead of a computed policy, with sandbox tokens and
permissions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from harness import serve
from playwright.sync_api import Frame, Page
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

PARENT = """<!DOCTYPE html><html><body><script>
  window.received = [];
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  frame.src = __SANDBOX__ + "?host=" + encodeURIComponent(location.origin);
  addEventListener("message", (event) => {
    if (event.source === frame.contentWindow) received.push([event.origin, event.data]);
  });
  window.ready = (params) => frame.contentWindow.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params }, "*");
  document.body.appendChild(frame);
</script></body></html>"""

VIEW = (
    "<!DOCTYPE html><html><head><!-- <head> --><title>v</title></head>"
    "<body><p id=x>hi</p></body></html>"
)


@pytest.fixture(scope="module")
def parent_url(sandbox: str) -> Iterator[str]:
    """The parent page, served from loopback (Chromium keeps a page whose address it does
    not know from framing a loopback one)."""
    html = PARENT.replace("__SANDBOX__", json.dumps(sandbox))

    async def parent(request: Request) -> Response:
        return HTMLResponse(html)

    with serve(Starlette(routes=[Route("/", parent)])) as base:
        yield f"{base}/"


def open_proxy(page: Page, parent_url: str, sandbox: str, params: dict[str, Any]) -> Frame:
    page.goto(parent_url)
    page.wait_for_function("() => received.length === 1")
    origin, message = page.evaluate("() => received[0]")
    assert origin == sandbox.rsplit("/", 1)[0]
    assert message == {
        "jsonrpc": "2.0",
        "method": "ui/notifications/sandbox-proxy-ready",
        "params": {},
    }
    page.evaluate("(p) => ready(p)", params)
    proxy = page.frames[1]
    proxy.wait_for_function("() => document.querySelector('iframe')")
    page.wait_for_function("() => window.frames[0].frames.length === 1")
    return proxy


def inner(proxy: Frame, attribute: str) -> str | None:
    value: str | None = proxy.evaluate(
        "(a) => document.querySelector('iframe').getAttribute(a)", attribute
    )
    return value


def policy(page: Page) -> str:
    view = page.frames[2]
    view.wait_for_selector("#x", state="attached")
    first = view.evaluate(
        "() => [document.head.firstElementChild.httpEquiv, document.head.firstElementChild.content]"
    )
    assert first[0] == "Content-Security-Policy"  # first in the head, before the app's own
    return str(first[1])


def test_spec_csp_object_becomes_the_views_policy(
    page: Page, parent_url: str, sandbox: str
) -> None:
    params = {
        "html": VIEW,
        "csp": {
            "connectDomains": ["http://127.0.0.1:9"],
            "resourceDomains": [
                "https://cdn.example.com",
                "x; script-src *",
                "https://*.img.example.com/",
                "https://user@evil.example.com",
                "https://evil.example.com/path",
                "https://evil.example.com https://x.example.com",
                "https://evil.example.com\n",
                "*",
            ],
            "frameDomains": ["https://player.example.com"],
        },
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "sandbox": "allow-scripts allow-same-origin allow-top-navigation allow-forms",
    }
    proxy = open_proxy(page, parent_url, sandbox, params)
    assert inner(proxy, "sandbox") == "allow-scripts allow-forms"
    assert inner(proxy, "allow") == "camera; clipboard-write"
    directives = dict(d.strip().split(" ", 1) for d in policy(page).split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'self' http://127.0.0.1:9"
    kept = "https://cdn.example.com https://*.img.example.com"
    assert directives["img-src"] == f"'self' data: {kept}"
    assert directives["script-src"] == f"'self' 'unsafe-inline' {kept}"
    assert directives["frame-src"] == "https://player.example.com"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"
    tokens = {token for d in policy(page).split(";") for token in d.split()}
    assert "*" not in tokens
    assert not {t for t in tokens if "evil" in t or ("script-src" in t and t != "script-src")}
    assert page.frames[2].evaluate("() => self.origin") == "null"


def test_no_csp_gives_the_restrictive_default_and_one_view_only(
    page: Page, parent_url: str, sandbox: str
) -> None:
    proxy = open_proxy(page, parent_url, sandbox, {"html": VIEW})
    assert inner(proxy, "sandbox") == "allow-scripts allow-forms"
    assert inner(proxy, "allow") is None
    directives = dict(d.strip().split(" ", 1) for d in policy(page).split(";"))
    assert directives["connect-src"] == "'none'"
    assert directives["img-src"] == "'self' data:"
    assert directives["frame-src"] == "'none'"
    page.evaluate("(p) => ready(p)", {"html": "<p id=second>second</p>"})
    page.evaluate("() => new Promise((r) => setTimeout(r, 100))")
    assert proxy.evaluate("() => document.querySelectorAll('iframe').length") == 1
    assert page.frames[2].evaluate("() => document.getElementById('x').textContent") == "hi"
