/*
 * mcpkit MCP Apps host page: one app view, rendered in the double-iframe sandbox, relayed to
 * the Python AppHost over the bridge endpoint (mcpkit.ext.ui.host).
 *
 * Source: MCP Apps 2026-01-26, "Sandbox proxy", "Lifecycle"; the bridge endpoint's routes:
 *   POST   /views                    {toolName, arguments?} -> {viewId, html, csp, allow, sandboxParams, ...}
 *                                     (with arguments the bridge also runs the tool, as /call does)
 *   GET    /views/{viewId}/events    SSE, one host -> view JSON-RPC message per `data:` line
 *   POST   /views/{viewId}/messages  one view -> host message; 200 + JSON-RPC response, or 202
 *   POST   /views/{viewId}/call      {arguments?}: the agent side runs the tool
 *   DELETE /views/{viewId}           teardown (ui/resource-teardown first)
 *
 * Rules:
 * 1. The sandbox proxy is loaded from another origin (the `sandbox` query parameter) in an
 *    iframe with sandbox="allow-scripts allow-same-origin"; messages are accepted only when
 *    event.source is that iframe's window and event.origin is its origin (the App SDK posts
 *    with target origin "*"), and are sent to it only with that target origin.
 * 2. `ui/notifications/sandbox-proxy-ready` is answered once with
 *    `ui/notifications/sandbox-resource-ready` {html, csp or cspPolicy, allow, ...}; no
 *    other `ui/notifications/sandbox-*` message is relayed.
 * 3. Host -> view messages from the event stream are held until the resource was sent,
 *    then posted in order; view -> host messages are POSTed one each, and a JSON-RPC
 *    response in the reply is posted back to the view. A failed POST of a request answers
 *    the view with -32603.
 * 4. `ui/notifications/size-changed` also sizes the outer iframe (height, CSS pixels).
 * 5. Teardown is DELETE /views/{viewId}; the iframe and the event stream go after it. A
 *    View's `ui/notifications/request-teardown` is relayed, then starts that teardown.
 * 6. The View's CSP is imposed before the View's bytes reach the browser: the sandbox URL
 *    carries the sanitized `csp` object as the `csp` query parameter (the sandbox server
 *    answers with that policy as its Content-Security-Policy header, which the View's
 *    srcdoc document inherits), and the proxy frame gets the computed policy as its `csp`
 *    attribute (CSP Embedded Enforcement: Chromium refuses to load a proxy whose header
 *    does not carry the policy).
 */
(function () {
  "use strict";

  var query = new URLSearchParams(location.search);
  var bridge = query.get("bridge") || "";
  if (bridge.slice(-1) === "/") bridge = bridge.slice(0, -1);
  var sandboxUrl = query.get("sandbox") || "";
  var container = document.getElementById("app");
  var statusEl = document.getElementById("status");
  var logEl = document.getElementById("log");

  var state = {
    viewId: null,
    status: "starting",
    events: [], // {dir: "in" | "out" | "info", message}
    sizes: [],
    iframe: null,
    error: null,
  };
  var sandboxOrigin = sandboxUrl ? new URL(sandboxUrl, location.href).origin : "";
  var view = null;
  var stream = null;
  var resourceSent = false;
  var held = [];

  function setStatus(text) {
    state.status = text;
    statusEl.textContent = text;
  }

  function record(dir, message) {
    state.events.push({ dir: dir, message: message });
    var item = document.createElement("li");
    var label = message.method || (message.error ? "error " + message.error.code : "result");
    item.textContent = (dir === "in" ? "view \u2192 host " : dir === "out" ? "host \u2192 view " : "") + label;
    logEl.appendChild(item);
  }

  function postJson(path, body, method) {
    return fetch(bridge + path, {
      method: method || "POST",
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  function toView(message) {
    record("out", message);
    state.iframe.contentWindow.postMessage(message, sandboxOrigin);
  }

  function resourceParams() {
    var params = {};
    var extra = view.sandboxParams || {};
    for (var key in extra) params[key] = extra[key];
    params.html = view.html;
    if (typeof view.csp === "string") params.cspPolicy = view.csp;
    else if (view.csp && typeof view.csp === "object") params.csp = view.csp;
    if (typeof view.allow === "string") params.allow = view.allow;
    return params;
  }

  function fromView(message) {
    record("in", message);
    if (message.method === "ui/notifications/initialized") setStatus("connected");
    if (message.method === "ui/notifications/size-changed" && message.params) {
      var height = Number(message.params.height);
      state.sizes.push(message.params);
      if (height > 0) state.iframe.style.height = Math.min(height, 4000) + "px";
    }
    postJson("/views/" + encodeURIComponent(state.viewId) + "/messages", message)
      .then(function (reply) {
        if (reply.status === 202) return null;
        if (!reply.ok) throw new Error("bridge answered " + reply.status);
        return reply.text().then(function (text) { return text ? JSON.parse(text) : null; });
      })
      .then(function (response) {
        if (response && response.jsonrpc === "2.0") toView(response);
        if (message.method === "ui/notifications/request-teardown") teardown();
      })
      .catch(function (error) {
        record("info", { method: "relay failed: " + error.message });
        if (message.method && message.id !== undefined) {
          toView({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: String(error.message) } });
        }
      });
  }

  function onMessage(event) {
    if (!state.iframe || event.source !== state.iframe.contentWindow || event.origin !== sandboxOrigin) return;
    var message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    var method = typeof message.method === "string" ? message.method : "";
    if (method === "ui/notifications/sandbox-proxy-ready") {
      if (resourceSent) return;
      resourceSent = true;
      toView({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: resourceParams() });
      setStatus("rendered");
      held.splice(0).forEach(toView);
      return;
    }
    if (method.indexOf("ui/notifications/sandbox-") === 0) return;
    fromView(message);
  }

  function openStream() {
    stream = new EventSource(bridge + "/views/" + encodeURIComponent(state.viewId) + "/events");
    stream.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (resourceSent) toView(message);
      else held.push(message);
    };
  }

  function readArguments() {
    var text = query.get("args");
    return text ? JSON.parse(text) : {};
  }

  function callTool(args) {
    return postJson("/views/" + encodeURIComponent(state.viewId) + "/call", { arguments: args || {} })
      .then(function (reply) { return reply.text().then(function (text) { return text ? JSON.parse(text) : null; }); });
  }

  function teardown() {
    if (!state.viewId || state.status === "torn down") return Promise.resolve(state.status);
    setStatus("tearing down");
    return postJson("/views/" + encodeURIComponent(state.viewId), undefined, "DELETE")
      .then(function (reply) { return reply.text().then(function (text) { return text ? JSON.parse(text) : null; }); })
      .then(function (body) {
        if (stream) stream.close();
        window.removeEventListener("message", onMessage);
        if (state.iframe) state.iframe.remove();
        state.iframe = null;
        setStatus("torn down");
        return body;
      });
  }

  function start(toolName, args) {
    if (!sandboxUrl) return Promise.reject(new Error("no sandbox URL (?sandbox=...)"));
    if (sandboxOrigin === location.origin) return Promise.reject(new Error("the sandbox must be on another origin"));
    var body = { toolName: toolName };
    if (args) body.arguments = args; // the bridge runs the tool once the View is up
    return postJson("/views", body)
      .then(function (reply) {
        if (!reply.ok) return reply.text().then(function (text) { throw new Error("POST /views: " + reply.status + " " + text); });
        return reply.json();
      })
      .then(function (body) {
        view = body;
        state.viewId = body.viewId;
        openStream();
        window.addEventListener("message", onMessage);
        var frame = document.createElement("iframe");
        frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
        frame.setAttribute("title", "MCP App sandbox");
        var csp = (body.sandboxParams || {}).csp;
        var src = new URL(sandboxUrl, location.href);
        src.searchParams.set("host", location.origin);
        if (csp && typeof csp === "object") src.searchParams.set("csp", JSON.stringify(csp));
        if (typeof body.csp === "string") frame.setAttribute("csp", body.csp); // rule 6
        frame.src = src.href;
        state.iframe = frame;
        container.appendChild(frame);
        setStatus("loading");
        return state.viewId;
      });
  }

  document.getElementById("teardown").addEventListener("click", function () { teardown(); });

  window.mcpkitHost = { state: state, start: start, callTool: callTool, teardown: teardown };
  var tool = query.get("tool");
  if (tool) {
    var args = query.get("call") === "0" ? null : readArguments();
    state.ready = start(tool, args).catch(function (error) {
      state.error = String(error.message || error);
      setStatus("error: " + state.error);
    });
  }
})();
