// The demo chart view: MCP Apps (SEP-1865) over postMessage, no SDK needed.
// Handshake (ui/initialize, ui/notifications/initialized), tool input/result
// notifications, one app-originated tools/call (summarize), size-changed, teardown.
(function () {
  "use strict";
  var nextId = 1;
  var pending = {};
  var values = [];
  var $ = function (id) { return document.getElementById(id); };

  function post(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    var id = nextId++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { post({ jsonrpc: "2.0", method: method, params: params }); }

  function draw(chart) {
    values = (chart && chart.values) || [];
    $("title").textContent = (chart && chart.title) || "Untitled";
    var svg = $("chart");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var max = Math.max.apply(null, values.concat([1]));
    var width = 320 / Math.max(values.length, 1);
    values.forEach(function (v, i) {
      var rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      var h = Math.max(0, (v / max) * 150);
      rect.setAttribute("class", "bar");
      rect.setAttribute("x", String(i * width + 2));
      rect.setAttribute("y", String(160 - h));
      rect.setAttribute("width", String(Math.max(width - 4, 1)));
      rect.setAttribute("height", String(h));
      rect.setAttribute("data-value", String(v));
      svg.appendChild(rect);
    });
    $("stats-button").disabled = false;
  }

  function answer(message) {
    if (message.method === "ui/resource-teardown" || message.method === "ping") {
      $("status").textContent = message.method === "ping" ? $("status").textContent : "torn down";
      post({ jsonrpc: "2.0", id: message.id, result: {} });
    } else {
      post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found: " + message.method } });
    }
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id in pending) {
      var waiter = pending[m.id];
      delete pending[m.id];
      if (m.error) waiter.reject(m.error); else waiter.resolve(m.result);
    } else if (m.method !== undefined && m.id !== undefined) {
      answer(m);
    } else if (m.method === "ui/notifications/tool-input") {
      $("status").textContent = "input received";
      draw(m.params && m.params.arguments);
    } else if (m.method === "ui/notifications/tool-result") {
      draw(m.params && m.params.structuredContent);
      $("status").textContent = "result received";
    } else if (m.method === "ui/notifications/tool-cancelled") {
      $("status").textContent = "cancelled";
    }
  });

  $("stats-button").addEventListener("click", function () {
    request("tools/call", { name: "summarize", arguments: { values: values } }).then(function (result) {
      var s = result.structuredContent || {};
      $("stats").textContent = result.isError
        ? "error: " + ((result.content && result.content[0] && result.content[0].text) || "")
        : "count " + s.count + ", min " + s.min + ", max " + s.max + ", mean " + s.mean;
    }, function (error) {
      $("stats").textContent = "denied: " + (error && error.message);
    });
  });

  function reportSize() {
    notify("ui/notifications/size-changed", {
      width: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
    });
  }

  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "mcpkit-ui-demo-chart", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
  }).then(function () {
    notify("ui/notifications/initialized", {});
    $("status").textContent = "initialized";
    reportSize();
    if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.body);
  }, function (error) {
    $("status").textContent = "initialize failed: " + (error && error.message);
  });
})();
