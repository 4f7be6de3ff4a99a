"""The browser side of mcpkit-ext-ui, shipped in the wheel beside this module.

- ``bridge.js``: the View side of the View↔Host protocol for apps that do not use the npm
  App SDK (``globalThis.McpkitApp``); :func:`mcpkit.ext.ui.app_html` inlines it.
- ``host.html`` + ``host.js``: a host page that renders one view in the double-iframe
  sandbox and relays it to a Python AppHost over the bridge endpoint's routes.
- ``sandbox.html``: the sandbox proxy (the outer iframe), to be served on an origin other
  than the host page's.

Source: MCP Apps 2026-01-26 (``../shared/spec/extensions/apps-spec/apps-2026-01-26.mdx``),
"Sandbox proxy", "Communication Protocol".

Rules:
1. Only the files named in :data:`ASSETS` are read or served; any other name raises
   ``KeyError`` (no path from a request reaches the file system).
2. Files are read with :mod:`importlib.resources`, so an installed wheel works as a tree.
3. :func:`assets_app` answers ``GET /{name}`` for the names it is given, with the type from
   :data:`ASSETS`, ``Cache-Control: no-store``, and ``X-Content-Type-Options: nosniff``;
   any other path is 404.
4. ``sandbox.html`` is always answered with a ``Content-Security-Policy`` response header:
   the View's policy (:func:`sandbox_policy`), built from the ``csp`` query parameter (the
   spec's ``McpUiResourceCsp`` as JSON) with :func:`~mcpkit.ext.ui.host.csp.sanitize_csp`
   and :func:`~mcpkit.ext.ui.host.csp.build_csp`; absent, malformed or longer than
   :data:`MAX_CSP_PARAM_BYTES`, it is the restrictive default (fails closed). The View is
   ``srcdoc`` content of that page, so it inherits the header's policy: nothing in the
   View's own bytes can remove it (spec §Sandbox proxy rule 5, "No Loosening").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib.resources import files

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from mcpkit.ext.ui.host.csp import DEFAULT_CSP, build_csp, sanitize_csp

__all__ = ["ASSETS", "MAX_CSP_PARAM_BYTES", "assets_app", "read_asset", "sandbox_policy"]

ASSETS: dict[str, str] = {
    "bridge.js": "text/javascript; charset=utf-8",
    "host.html": "text/html; charset=utf-8",
    "host.js": "text/javascript; charset=utf-8",
    "sandbox.html": "text/html; charset=utf-8",
}
"""Asset file name -> its ``Content-Type``."""
MAX_CSP_PARAM_BYTES = 16_384
"""The longest ``csp`` query parameter :func:`sandbox_policy` reads, in UTF-8 bytes."""


def read_asset(name: str) -> str:
    """The text of asset ``name`` (a key of :data:`ASSETS`); ``KeyError`` for any other."""
    if name not in ASSETS:
        raise KeyError(f"no mcpkit-ext-ui asset named {name!r}; known: {sorted(ASSETS)}")
    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def sandbox_policy(csp_param: str | None) -> str:
    """The ``Content-Security-Policy`` of a sandbox proxy page (rule 4): ``csp_param`` is
    the ``csp`` query parameter, ``McpUiResourceCsp`` as JSON. The restrictive default
    (:data:`~mcpkit.ext.ui.host.csp.DEFAULT_CSP`) when it is absent, longer than
    :data:`MAX_CSP_PARAM_BYTES` or not JSON (nested past the parser's depth too);
    origins that rule 3 of :mod:`mcpkit.ext.ui.host.csp` refuses are dropped."""
    if not csp_param or len(csp_param.encode("utf-8")) > MAX_CSP_PARAM_BYTES:
        return DEFAULT_CSP
    try:
        raw = json.loads(csp_param)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes: not JSON
        return DEFAULT_CSP
    return build_csp(sanitize_csp(raw))


def assets_app(names: Iterable[str] = tuple(ASSETS)) -> Starlette:
    """An ASGI app serving the assets ``names`` at ``GET /{name}`` (rule 3). Serve
    ``sandbox.html`` from a second app on another port (or host name) than ``host.html``:
    the sandbox proxy must have its own origin."""
    served = {name: (read_asset(name), ASSETS[name]) for name in names}

    async def asset(request: Request) -> Response:
        found = served.get(request.path_params["name"])
        if found is None:
            return PlainTextResponse("not found", status_code=404)
        text, media_type = found
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
        if request.path_params["name"] == "sandbox.html":
            headers["Content-Security-Policy"] = sandbox_policy(request.query_params.get("csp"))
        return Response(text, media_type=media_type, headers=headers)

    return Starlette(routes=[Route("/{name}", asset, methods=["GET"])])
