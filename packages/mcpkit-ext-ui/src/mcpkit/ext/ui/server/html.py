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
3. :func:`app_html` builds a complete HTML5 document: doctype, ``<meta charset>``, a
   viewport, the escaped ``title``, ``head`` as given, ``body`` as given, then the bridge
   (when ``inline_bridge``) and ``script`` as inline scripts, in that order, so the
   app's script can use the bridge.
4. :func:`inject_bridge` adds the bridge to an existing document: before the first
   ``</head>``, else after the first ``<body...>`` tag, else at the start.
5. :func:`read_app` reads a single-file app (UTF-8) from a path; with
   ``inline_bridge`` the bridge is injected (rule 4). A file that is not UTF-8 is a
   ``UnicodeDecodeError``; a missing one ``FileNotFoundError``.
"""

from __future__ import annotations

import functools
import html
import re
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
_CLOSE_SCRIPT = re.compile(r"</(script)", re.IGNORECASE)


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
    safe = _CLOSE_SCRIPT.sub(r"<\\/\1", source)
    return f"<script>{safe}</script>"


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


def inject_bridge(document: str) -> str:
    """``document`` with the bridge inlined (rule 4)."""
    tag = inline_script(bridge_script())
    lower = document.lower()
    at = lower.find("</head>")
    if at < 0:
        body = re.search(r"<body[^>]*>", document, re.IGNORECASE)
        at = body.end() if body else 0
    return document[:at] + tag + document[at:]


def read_app(path: str | Path, *, inline_bridge: bool = False) -> str:
    """The single-file app at ``path`` (rule 5)."""
    text = Path(path).read_text("utf-8")
    return inject_bridge(text) if inline_bridge else text
