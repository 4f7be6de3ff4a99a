"""Issue 25 §2: no View's bytes loosen its Content-Security-Policy, in real Chromium.

A parent page on its own loopback origin plays the host and loads the sandbox proxy. Each
hostile View (a prefix before the doctype, a missing doctype, its own CSP meta, ``<base>``,
upper-case tags) fetches and loads an image from an undeclared loopback asset server
(port 0, started here) and loads a ``data:`` image as a control. Every layer is tried
alone where it can be:

- the policy header of the sandbox page (``assets_app``), with the host message carrying
  a loose policy, so the meta layer is of no help;
- the proxy served as a static file with no header, so the DOMParser-placed meta (and the
  inner frame's ``csp`` attribute) must hold; the meta must be first in ``<head>``;
- the embedding frame's ``csp`` attribute, which refuses a proxy without the header;
- a View that navigates its own frame to the sandbox page with a looser header gets
  nothing (the proxy page's ``frame-src``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from harness import AssetServer, serve
from playwright.sync_api import Frame, Page
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from mcpkit.ext.ui.host.csp import DEFAULT_CSP
from mcpkit.ext.ui.static import assets_app, read_asset

PARENT = """<!DOCTYPE html><html><body><script>
  window.received = [];
  window.frame = null;
  addEventListener("message", (event) => {
    if (frame && event.source === frame.contentWindow) received.push(event.data);
  });
  window.openProxy = (src, cspAttribute) => {
    frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
    if (cspAttribute) frame.setAttribute("csp", cspAttribute);
    frame.src = src;
    document.body.appendChild(frame);
  };
  window.ready = (params) => frame.contentWindow.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params }, "*");
</script></body></html>"""

DATA_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PROBE = """<p id=probe>probe</p><script>
  window.probe = (async () => {
    const base = "__BASE__";
    const image = (url) => new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve("loaded");
      img.onerror = () => resolve("blocked");
      img.src = url;
    });
    const fetched = await fetch(base + "data.json").then(() => "fetched", () => "blocked");
    return { fetch: fetched, image: await image(base + "pixel.png"),
             dataImage: await image("__DATA__") };
  })();
</script>"""
LOOSE = "default-src * 'unsafe-inline' data:; connect-src *; img-src * data:"
LOOSE_META = f'<meta http-equiv="Content-Security-Policy" content="{LOOSE}">'


def document(prefix: str, *, head: str = "", doctype: str = "<!doctype html>") -> str:
    return f"{prefix}{doctype}<html><head>{head}<title>v</title></head><body>{PROBE}</body></html>"


HOSTILE: dict[str, str] = {
    "nbsp-before-doctype": document("\u00a0"),
    "bom-before-doctype": document("\ufeff"),
    "u2028-before-doctype": document("\u2028"),
    "vertical-tab-before-doctype": document("\u000b"),
    "comment-before-doctype": document("<!-- a comment -->"),
    "nbsp-then-comment": document("\u00a0<!-- <head> -->"),
    "no-doctype": document("", doctype=""),
    "bare-fragment": PROBE,
    "meta-in-body": f"<!doctype html><html><head></head><body>{LOOSE_META}{PROBE}</body></html>",
    "second-csp-meta": document("", head=LOOSE_META),
    "nbsp-and-own-meta": document("\u00a0", head=LOOSE_META),
    "base-to-undeclared": document("", head='<base href="__UNDECLARED__/">'),
    "uppercase-tags": (
        '<!DOCTYPE HTML><HTML><HEAD><META HTTP-EQUIV="CONTENT-SECURITY-POLICY" '
        f'CONTENT="{LOOSE}"></HEAD><BODY>{PROBE}</BODY></HTML>'
    ),
    "uppercase-with-nbsp": f"\u00a0<!DOCTYPE HTML><HTML><HEAD></HEAD><BODY>{PROBE}</BODY></HTML>",
}


def view_html(name: str, undeclared: str) -> str:
    base = "" if name == "base-to-undeclared" else f"{undeclared}/"
    html = HOSTILE[name].replace("__UNDECLARED__", undeclared)
    return html.replace("__BASE__", base).replace("__DATA__", DATA_PNG)


@pytest.fixture(scope="module")
def undeclared() -> Iterator[tuple[AssetServer, str]]:
    server = AssetServer(None)
    with serve(server.app) as base:
        yield server, base


@pytest.fixture(scope="module")
def static_sandbox() -> Iterator[str]:
    """sandbox.html served as a plain file: no policy header (as a host might serve it)."""
    text = read_asset("sandbox.html")

    async def page(request: Request) -> Response:
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    with serve(Starlette(routes=[Route("/sandbox.html", page)])) as base:
        yield f"{base}/sandbox.html"


@pytest.fixture(scope="module")
def header_sandbox() -> Iterator[str]:
    with serve(assets_app(["sandbox.html"])) as base:
        yield f"{base}/sandbox.html"


@pytest.fixture(scope="module")
def parent_url() -> Iterator[str]:
    async def parent(request: Request) -> Response:
        return HTMLResponse(PARENT)

    with serve(Starlette(routes=[Route("/", parent)])) as base:
        yield f"{base}/"


def render(
    page: Page, parent_url: str, src: str, params: dict[str, Any], csp_attribute: str = ""
) -> Frame:
    """Load the proxy at ``src`` in the parent page, send it the View; the View's frame."""
    page.goto(parent_url)
    origin = parent_url.rstrip("/")
    joiner = "&" if "?" in src else "?"
    page.evaluate(
        "([src, csp]) => openProxy(src, csp)",
        [f"{src}{joiner}{urlencode({'host': origin})}", csp_attribute],
    )
    page.wait_for_function("() => received.length === 1")
    page.evaluate("(p) => ready(p)", params)
    page.wait_for_function("() => window.frames[0].frames.length === 1")
    view = page.frames[2]
    view.wait_for_selector("#probe", state="attached")
    return view


def probe(view: Frame) -> dict[str, str]:
    result: dict[str, str] = view.evaluate("() => window.probe")
    return result


def assert_blocked(result: dict[str, str], server: AssetServer, before: int) -> None:
    assert result == {"fetch": "blocked", "image": "blocked", "dataImage": "loaded"}
    # The blocked requests never left the browser (the probe awaited both outcomes).
    assert server.requested[before:] == []


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_header_policy_holds_whatever_the_view_and_the_message_say(
    name: str,
    page: Page,
    parent_url: str,
    header_sandbox: str,
    undeclared: tuple[AssetServer, str],
) -> None:
    """Layer a: the page header built from ``?csp=`` (here: nothing declared) holds even
    when the host message hands the proxy a loose policy for its meta and attribute."""
    server, base = undeclared
    before = len(server.requested)
    src = f"{header_sandbox}?{urlencode({'csp': json.dumps({})})}"
    params = {"html": view_html(name, base), "cspPolicy": LOOSE}
    view = render(page, parent_url, src, params)
    assert_blocked(probe(view), server, before)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_placed_meta_holds_without_a_header(
    name: str,
    page: Page,
    parent_url: str,
    static_sandbox: str,
    undeclared: tuple[AssetServer, str],
) -> None:
    """Layers b and c: a proxy served with no header. The policy meta is the first element
    of the View's ``<head>`` (the parser placed it; no prefix moved it into ``<body>``) and
    nothing the View adds loosens it. Fails on the regex placement of the old proxy."""
    server, base = undeclared
    before = len(server.requested)
    view = render(page, parent_url, static_sandbox, {"html": view_html(name, base)})
    first = view.evaluate(
        "() => { const m = document.head.firstElementChild;"
        " return [m.tagName, m.httpEquiv, m.content, m.parentElement === document.head]; }"
    )
    assert first[:2] == ["META", "Content-Security-Policy"]
    assert "connect-src 'none'" in first[2]
    assert_blocked(probe(view), server, before)


def test_declared_origins_pass_the_header_and_nothing_else_does(
    page: Page, parent_url: str, header_sandbox: str, undeclared: tuple[AssetServer, str]
) -> None:
    """The header carries the declared origins (sanitized): a View of the NBSP shape that
    declares one origin reaches it, and a wildcard smuggled into the parameter is dropped."""
    server, base = undeclared
    before = len(server.requested)
    declared = AssetServer(None)
    with serve(declared.app) as declared_base:
        csp = {"connectDomains": [declared_base, "*"], "resourceDomains": [declared_base]}
        src = f"{header_sandbox}?{urlencode({'csp': json.dumps(csp)})}"
        html = view_html("nbsp-before-doctype", base)
        fetched = html.replace("</body>", f'<img id=ok src="{declared_base}/pixel.png"></body>')
        view = render(page, parent_url, src, {"html": fetched, "cspPolicy": LOOSE})
        assert_blocked(probe(view), server, before)
        view.wait_for_function("() => document.getElementById('ok').complete")
        assert view.evaluate("() => document.getElementById('ok').naturalWidth") == 1
        assert declared.requested == ["/pixel.png"]


def test_embedding_csp_attribute_refuses_a_proxy_without_the_header(
    page: Page, parent_url: str, static_sandbox: str, header_sandbox: str
) -> None:
    """Layer b at the outer frame (host.js sets it): Chromium loads the proxy only when its
    header carries the policy, so a misconfigured sandbox server fails closed."""
    page.goto(parent_url)
    page.evaluate("([src, csp]) => openProxy(src, csp)", [static_sandbox, DEFAULT_CSP])
    page.wait_for_function("() => frame.contentWindow && frame.contentWindow.length === 0")
    frame = page.frames[1]
    frame.wait_for_load_state()
    assert frame.url.startswith("chrome-error://"), frame.url
    assert page.evaluate("() => received.length") == 0
    origin = parent_url.rstrip("/")
    page.goto(parent_url)
    page.evaluate(
        "([src, csp]) => openProxy(src, csp)",
        [f"{header_sandbox}?{urlencode({'host': origin})}", DEFAULT_CSP],
    )
    page.wait_for_function("() => received.length === 1")
    assert page.frames[1].url.startswith(header_sandbox)


def test_a_view_cannot_reload_its_frame_with_a_looser_header(
    page: Page,
    parent_url: str,
    header_sandbox: str,
    undeclared: tuple[AssetServer, str],
) -> None:
    """A View may navigate its own frame. Asking the sandbox server for a page whose header
    declares the undeclared origin gets nothing: the proxy page's header has ``frame-src
    'none'`` (no ``frameDomains`` declared), which governs its child frame's navigations."""
    server, base = undeclared
    src = f"{header_sandbox}?{urlencode({'csp': json.dumps({})})}"
    loose = f"{header_sandbox}?{urlencode({'csp': json.dumps({'connectDomains': [base]})})}"
    script = f"<script>window.next = {json.dumps(loose)};</script>"
    html = view_html("no-doctype", base).replace("<title>v</title>", f"<title>v</title>{script}")
    view = render(page, parent_url, src, {"html": html})
    assert_blocked(probe(view), server, len(server.requested))
    view.evaluate("() => { location.href = window.next; }")
    frame = page.frames[2]
    frame.wait_for_url(lambda url: url != "about:srcdoc")
    assert frame.url.startswith("chrome-error://"), frame.url
