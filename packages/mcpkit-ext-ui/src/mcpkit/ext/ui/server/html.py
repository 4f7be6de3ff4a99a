"""Build the HTML of a single-file app view, with the bundled bridge script inlined.

Spec: ``apps-2026-01-26.mdx`` §UI Resource Format, Content Requirements ("Content MUST
be valid HTML5 document"); the view runs under the host's CSP, whose restrictive default
allows inline scripts and styles (``'unsafe-inline'``) but no external origin, so a
single file with everything inlined works on every host (SEP-1865).

Rules:
1. The bridge is ``mcpkit/ext/ui/static/bridge.js`` in this distribution, read with
   :mod:`importlib.resources` (zip-safe) once per process; missing, it is a
   ``FileNotFoundError`` naming the file.
2. Inlined script text never closes its ``<script>`` element early: ``</script`` (any
   case) is written as ``<\\/script``, which JavaScript reads as the same string.
   Markup is never matched with regular expressions (issue 25 §2): rule 2 scans the
   text, rule 4 reads the document with :mod:`html.parser`.
3. :func:`app_html` builds a complete HTML5 document: doctype, ``<meta charset>``, a
   viewport, the escaped ``title``, ``head`` as given, ``body`` as given, then the bridge
   (when ``inline_bridge``) and ``script`` as inline scripts, in that order, so the
   app's script can use the bridge.
4. :func:`inject_bridge` adds the bridge to an existing document: before the first
   ``</head>`` end tag, else after the first ``<body>`` start tag, else at the start,
   as :mod:`html.parser` finds them: text that only looks like a tag (in a comment, a
   script, a ``<title>``, an attribute value) is not one.
5. :func:`read_app` reads a single-file app (UTF-8) from a path; with
   ``inline_bridge`` the bridge is injected (rule 4). A file that is not UTF-8 is a
   ``UnicodeDecodeError``; a missing one ``FileNotFoundError``.
"""

from __future__ import annotations

import functools
import html
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path

__all__ = [
    "BRIDGE_RESOURCE",
    "app_html",
    "bridge_script",
    "inject_bridge",
    "inline_script",
    "read_app",
]

BRIDGE_RESOURCE = "static/bridge.js"
"""The bridge's path inside the ``mcpkit.ext.ui`` package (rule 1)."""
_RAW_TEXT = frozenset({"title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript"})
"""Elements whose content a browser reads as text (``script``/``style``: html.parser)."""


@functools.cache
def bridge_script() -> str:
    """The bundled bridge JavaScript source (rule 1)."""
    resource = files("mcpkit.ext.ui").joinpath(BRIDGE_RESOURCE)
    if not resource.is_file():
        raise FileNotFoundError(
            f"the MCP Apps bridge script mcpkit/ext/ui/{BRIDGE_RESOURCE} is missing"
        )
    return resource.read_text("utf-8")


def inline_script(source: str) -> str:
    """``<script>source</script>`` with ``source`` made safe to inline (rule 2)."""
    out: list[str] = []
    start = 0
    at = source.find("</")
    while at >= 0:
        if source[at + 2 : at + 8].lower() == "script":
            out += [source[start:at], "<\\/"]
            start = at + 2
        at = source.find("</", at + 2)
    out.append(source[start:])
    return f"<script>{''.join(out)}</script>"


def app_html(
    body: str,
    *,
    script: str | None = None,
    title: str = "MCP App",
    head: str = "",
    inline_bridge: bool = True,
) -> str:
    """A complete single-file view (rule 3): ``body`` is the ``<body>`` markup,
    ``script`` the app's JavaScript (inlined after the bridge), ``title`` plain text,
    ``head`` extra markup for ``<head>`` (e.g. a ``<style>``)."""
    scripts: list[str] = []
    if inline_bridge:
        scripts.append(inline_script(bridge_script()))
    if script:
        scripts.append(inline_script(script))
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n{head}</head>\n<body>\n{body}\n"
        + "\n".join(scripts)
        + "\n</body>\n</html>\n"
    )


class _Anchors(HTMLParser):
    """Offsets of the first ``</head>`` end tag and the end of the first ``<body>`` tag."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.head_end: int | None = None
        self.body_end: int | None = None
        self._raw: str | None = None
        self._lines = [0]
        for line in document.split("\n")[:-1]:
            self._lines.append(self._lines[-1] + len(line) + 1)
        self.feed(document)
        self.close()

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._lines[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._raw is not None:
            return
        if tag in _RAW_TEXT:
            self._raw = tag
        elif tag == "body" and self.body_end is None:
            self.body_end = self._offset() + len(self.get_starttag_text() or "")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._raw is None and tag == "body" and self.body_end is None:
            self.body_end = self._offset() + len(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if self._raw is not None:
            if tag == self._raw:
                self._raw = None
        elif tag == "head" and self.head_end is None:
            self.head_end = self._offset()


def inject_bridge(document: str) -> str:
    """``document`` with the bridge inlined (rule 4)."""
    tag = inline_script(bridge_script())
    found = _Anchors(document)
    at = found.head_end if found.head_end is not None else found.body_end or 0
    return document[:at] + tag + document[at:]


def read_app(path: str | Path, *, inline_bridge: bool = False) -> str:
    """The single-file app at ``path`` (rule 5)."""
    text = Path(path).read_text("utf-8")
    return inject_bridge(text) if inline_bridge else text
