"""HTML helpers (html.py rules 1-5) and views served from a path (apps.py rule 3).

The bridge is ui-browser's ``static/bridge.js``; the tests of escaping and placement
replace it with a marker script so they state exactly where it goes."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from ui_helpers import UI

from mcpkit.client import Client
from mcpkit.ext.ui import (
    AppsExtension,
    app_html,
    bridge_script,
    inject_bridge,
    inline_script,
    read_app,
)
from mcpkit.ext.ui.server import html as html_module
from mcpkit.server.app import Server

pytestmark = pytest.mark.lowest

MARKER = "/* bridge */ window.__bridge = 1;"


@pytest.fixture
def marker_bridge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_module, "bridge_script", lambda: MARKER)


def test_bridge_is_the_bundled_static_file() -> None:
    bundled = files("mcpkit.ext.ui").joinpath("static/bridge.js").read_text("utf-8")
    assert bridge_script() == bundled
    assert bundled.strip()
    assert bridge_script() in app_html("<p>x</p>")


def test_inline_script_never_closes_its_element_early() -> None:
    source = 'const a = "</script><b>"; const b = "</SCRIPT >";'
    out = inline_script(source)
    assert out == '<script>const a = "<\\/script><b>"; const b = "<\\/SCRIPT >";</script>'
    assert out.lower().count("</script") == 1
    assert inline_script("a </b> </scripT\tx") == "<script>a </b> <\\/scripT\tx</script>"


@pytest.mark.usefixtures("marker_bridge")
def test_app_html_is_one_document_with_the_bridge_before_the_app_script() -> None:
    doc = app_html(
        '<div id="root"></div>',
        script="start();",
        title="Sales <Q3> & more",
        head="<style>p{}</style>\n",
    )
    assert doc.startswith('<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">')
    assert "<title>Sales &lt;Q3&gt; &amp; more</title>" in doc
    assert "<style>p{}</style>" in doc.split("</head>")[0]
    body = doc.split("<body>")[1]
    assert body.index('<div id="root"></div>') < body.index(MARKER) < body.index("start();")
    assert doc.rstrip().endswith("</body>\n</html>")
    without = app_html("<p>x</p>", script="go();", inline_bridge=False)
    assert MARKER not in without
    assert "<script>go();</script>" in without


@pytest.mark.usefixtures("marker_bridge")
def test_inject_bridge_goes_before_head_end_else_after_body_else_first() -> None:
    tag = f"<script>{MARKER}</script>"
    assert inject_bridge("<html><head><title>t</title></head><body></body></html>") == (
        f"<html><head><title>t</title>{tag}</head><body></body></html>"
    )
    assert inject_bridge('<BODY class="x"><p>hi</p></BODY>') == (
        f'<BODY class="x">{tag}<p>hi</p></BODY>'
    )
    assert inject_bridge("<p>hi</p>") == f"{tag}<p>hi</p>"


@pytest.mark.usefixtures("marker_bridge")
@pytest.mark.parametrize(
    ("document", "expected"),
    [
        # text that only looks like a tag is not one (issue 25 §2: parsed, not matched)
        (
            "<head><!-- </head> --><title>t</title></head><body></body>",
            "<head><!-- </head> --><title>t</title>{tag}</head><body></body>",
        ),
        (
            '<head><script>var s = "</head>";</script></head>',
            '<head><script>var s = "</head>";</script>{tag}</head>',
        ),
        ("<head><title></head></title></head>", "<head><title></head></title>{tag}</head>"),
        ('<body data-x="a>b"><p>hi</p>', '<body data-x="a>b">{tag}<p>hi</p>'),
        ("<!-- <body> --><body\nclass=x><p>", "<!-- <body> --><body\nclass=x>{tag}<p>"),
        ("<bodyguard><p>hi</p>", "{tag}<bodyguard><p>hi</p>"),
        ("\u00a0<HTML><HEAD></HEAD>", "\u00a0<HTML><HEAD>{tag}</HEAD>"),
    ],
)
def test_inject_bridge_finds_real_tags_only(document: str, expected: str) -> None:
    assert inject_bridge(document) == expected.format(tag=f"<script>{MARKER}</script>")


@pytest.mark.usefixtures("marker_bridge")
def test_read_app_reads_utf8_and_injects_on_request(tmp_path: Path) -> None:
    page = tmp_path / "app.html"
    page.write_text("<!DOCTYPE html><html><head></head><body>é</body></html>", "utf-8")
    assert read_app(page) == page.read_text("utf-8")
    assert MARKER in read_app(page, inline_bridge=True)
    with pytest.raises(FileNotFoundError):
        read_app(tmp_path / "missing.html")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_view_from_a_path_is_read_on_each_request(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<!DOCTYPE html><p>one</p>", "utf-8")
    server = Server("files")
    ui = AppsExtension(server)
    ui.resource("ui://files/view", path=page, prefers_border=False)
    async with Client(server, extensions=UI) as client:
        first = (await client.read_resource("ui://files/view")).contents[0]
        assert first.text == "<!DOCTYPE html><p>one</p>"  # type: ignore[union-attr]
        assert first.meta == {"ui": {"prefersBorder": False}}
        page.write_text("<!DOCTYPE html><p>two</p>", "utf-8")
        again = (await client.read_resource("ui://files/view", use_cache=False)).contents[0]
        assert again.text == "<!DOCTYPE html><p>two</p>"  # type: ignore[union-attr]
