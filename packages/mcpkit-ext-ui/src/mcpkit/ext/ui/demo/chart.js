// The demo chart view, on the bundled bridge (McpkitApp, inlined before this script):
// handshake, tool input/result handlers, one app-originated tools/call (summarize),
// auto-resize and teardown come from the bridge; this file draws.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var values = [];
  var app = new McpkitApp({ name: "mcpkit-ui-demo-chart", version: "1.0.0" },
                          { capabilities: { availableDisplayModes: ["inline"] } });

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

  app.ontoolinput = function (params) {
    $("status").textContent = "input received";
    draw(params.arguments);
  };
  app.ontoolresult = function (result) {
    draw(result.structuredContent);
    $("status").textContent = "result received";
  };
  app.ontoolcancelled = function () { $("status").textContent = "cancelled"; };
  app.onteardown = function () { $("status").textContent = "torn down"; };

  $("stats-button").addEventListener("click", function () {
    app.callServerTool("summarize", { values: values }).then(function (result) {
      var s = result.structuredContent || {};
      $("stats").textContent = result.isError
        ? "error: " + ((result.content && result.content[0] && result.content[0].text) || "")
        : "count " + s.count + ", min " + s.min + ", max " + s.max + ", mean " + s.mean;
    }, function (error) {
      $("stats").textContent = "denied: " + (error && error.message);
    });
  });

  app.connect().then(function () {
    $("status").textContent = "initialized";
  }, function (error) {
    $("status").textContent = "initialize failed: " + (error && error.message);
  });
})();
