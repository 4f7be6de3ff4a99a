"""The MCP server the browser tests render apps from, written with core APIs only: tools
linked to ``ui://`` resources through ``_meta.ui.resourceUri``, resources of MIME type
``text/html;profile=mcp-app``, and tools of each visibility.

Rules:
1. ``greet`` (visibility default) renders the greeting app, built on ``bridge.js``; its
   buttons call ``add`` (visibility ``["app"]``: allowed from the app) and ``secret``
   (visibility ``["model"]``: the host must refuse it to the app).
2. ``probe`` renders an app whose CSP declares only the ``declared`` asset origin (in
   ``connectDomains`` and ``resourceDomains``); it fetches and loads an image from both
   asset origins and shows what happened.
3. ``sdk_echo`` renders an app that imports the npm App SDK (``app-with-deps.js``) from the
   ``declared`` origin (declared in ``resourceDomains``) and calls ``echo`` through it.
4. Every tool call is recorded in :attr:`TestServer.calls` as ``(name, arguments)``.
"""

from __future__ import annotations

import json
from typing import Any

from mcpkit.ext.ui import bridge_script
from mcpkit.server import Server

MIME = "text/html;profile=mcp-app"

GREETING = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Greeting</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; padding: 18px; color: #1f2328; }
  h2 { margin: 0 0 8px; font-size: 20px; }
  .card { border-radius: 10px; padding: 14px 16px;
          background: linear-gradient(135deg, #ddf4ff, #fbefff); }
  button { margin: 10px 8px 0 0; padding: 6px 12px; border-radius: 6px;
           border: 1px solid #8c959f; background: #fff; }
  output { display: block; margin-top: 8px; font-family: ui-monospace, monospace; }
</style></head>
<body>
<div class="card">
  <h2 id="greeting">Waiting for the tool result...</h2>
  <div id="input">no input yet</div>
  <div id="host">not connected</div>
  <button id="add" type="button">Add 2 + 40 (app tool)</button>
  <button id="secret" type="button">Read the secret (model-only tool)</button>
  <output id="add-result"></output>
  <output id="secret-result"></output>
</div>
<script>__BRIDGE__</script>
<script>
  const app = new McpkitApp({ name: "greeting", version: "1.0.0" });
  window.torndown = 0;
  app.ontoolinput = (params) => {
    document.getElementById("input").textContent = "input: " + JSON.stringify(params.arguments);
  };
  app.ontoolresult = (result) => {
    document.getElementById("greeting").textContent = result.structuredContent.greeting;
  };
  app.onteardown = () => { window.torndown += 1; };
  document.getElementById("add").onclick = async () => {
    const out = document.getElementById("add-result");
    try {
      const result = await app.callServerTool("add", { a: 2, b: 40 });
      out.textContent = "add: " + result.structuredContent.result;
    } catch (error) { out.textContent = "add failed: " + error.message; }
  };
  document.getElementById("secret").onclick = async () => {
    const out = document.getElementById("secret-result");
    try {
      const result = await app.callServerTool("secret", {});
      out.textContent = "secret: " + JSON.stringify(result);
    } catch (error) { out.textContent = "secret refused: " + error.code; }
  };
  app.connect().then((result) => {
    document.getElementById("host").textContent = "host: " + result.hostInfo.name;
  });
</script>
</body></html>
"""

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>CSP probe</title></head>
<body>
<pre id="probe">running</pre>
<script>__BRIDGE__</script>
<script>
  const results = {};
  const violations = [];
  document.addEventListener("securitypolicyviolation", (e) => violations.push(e.blockedURI));
  function image(url) {
    return new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve("loaded");
      img.onerror = () => resolve("blocked");
      img.src = url;
      document.body.appendChild(img);
    });
  }
  function get(url) {
    return fetch(url).then((r) => r.json()).then((b) => "answer " + b.answer, () => "blocked");
  }
  const app = new McpkitApp({ name: "probe", version: "1.0.0" });
  app.connect().then(async () => {
    results.fetchDeclared = await get("__DECLARED__/data.json");
    results.fetchUndeclared = await get("__UNDECLARED__/data.json");
    results.imageDeclared = await image("__DECLARED__/pixel.png");
    results.imageUndeclared = await image("__UNDECLARED__/pixel.png");
    await new Promise((r) => setTimeout(r, 50));
    results.violations = violations;
    document.getElementById("probe").textContent = JSON.stringify(results);
  });
</script>
</body></html>
"""

SDK_APP = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>App SDK</title></head>
<body>
<p id="state">loading the App SDK</p>
<p id="echo"></p>
<script type="module">
  import { App } from "__DECLARED__/sdk/app-with-deps.js";
  const app = new App({ name: "sdk-interop", version: "2.0.4" });
  app.ontoolresult = (result) => {
    document.getElementById("state").textContent = "tool result: " + result.content[0].text;
  };
  try {
    await app.connect();
    const host = app.getHostVersion();
    const result = await app.callServerTool({
      name: "echo", arguments: { text: "from the App SDK" } });
    document.getElementById("echo").textContent =
      "echo via " + host.name + ": " + result.structuredContent.echoed;
  } catch (error) {
    document.getElementById("echo").textContent = "failed: " + error.message;
  }
</script>
</body></html>
"""


class TestServer:
    """The server and what it was asked (rule 4)."""

    __test__ = False  # not a pytest class

    def __init__(self, declared: str, undeclared: str) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.server = build(self, declared, undeclared)


def _page(template: str, declared: str, undeclared: str) -> str:
    return (
        template.replace("__BRIDGE__", bridge_script())
        .replace("__DECLARED__", declared)
        .replace("__UNDECLARED__", undeclared)
    )


def build(record: TestServer, declared: str, undeclared: str) -> Server:
    server = Server("ui-browser-tests")

    def ui(uri: str, visibility: list[str] | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"resourceUri": uri}
        if visibility is not None:
            meta["visibility"] = visibility
        return {"ui": meta, "ui/resourceUri": uri}

    @server.tool(meta=ui("ui://tests/greeting"))
    def greet(name: str) -> dict[str, str]:
        """Greet someone, with an app that shows the greeting."""
        record.calls.append(("greet", {"name": name}))
        return {"greeting": f"Hello, {name}!"}

    @server.tool(meta=ui("ui://tests/greeting", ["app"]))
    def add(a: int, b: int) -> int:
        """Add two integers (callable by the app only)."""
        record.calls.append(("add", {"a": a, "b": b}))
        return a + b

    @server.tool(meta=ui("ui://tests/greeting", ["model"]))
    def secret() -> str:
        """A tool for the model only."""
        record.calls.append(("secret", {}))
        return "the model's secret"

    @server.tool(meta=ui("ui://tests/probe"))
    def probe() -> str:
        """Render the CSP probe."""
        record.calls.append(("probe", {}))
        return "probing"

    @server.tool(meta=ui("ui://tests/sdk"))
    def sdk_echo() -> str:
        """Render the App SDK interop app."""
        record.calls.append(("sdk_echo", {}))
        return "the SDK app is up"

    @server.tool()
    def echo(text: str) -> dict[str, str]:
        """Echo the text back (called by the App SDK app)."""
        record.calls.append(("echo", {"text": text}))
        return {"echoed": text}

    def contents(uri: str, html: str, csp: dict[str, list[str]] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"uri": uri, "mimeType": MIME, "text": html}
        if csp is not None:
            entry["_meta"] = {"ui": {"csp": csp, "prefersBorder": True}}
        return entry

    @server.resource("ui://tests/greeting", name="greeting", mime_type=MIME)
    def greeting_app() -> dict[str, Any]:
        return contents("ui://tests/greeting", _page(GREETING, declared, undeclared))

    @server.resource("ui://tests/probe", name="probe", mime_type=MIME)
    def probe_app() -> dict[str, Any]:
        csp = {"connectDomains": [declared], "resourceDomains": [declared]}
        return contents("ui://tests/probe", _page(PROBE, declared, undeclared), csp)

    @server.resource("ui://tests/sdk", name="sdk", mime_type=MIME)
    def sdk_app() -> dict[str, Any]:
        csp = {"resourceDomains": [declared]}
        return contents("ui://tests/sdk", _page(SDK_APP, declared, undeclared), csp)

    return server


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
