/*
 * mcpkit MCP Apps bridge: the View side of the View <-> Host protocol, for app authors who
 * do not use the npm App SDK. Dependency free; works inlined in a <script> or loaded from a
 * URL; defines `globalThis.McpkitApp`.
 *
 * Source: MCP Apps (io.modelcontextprotocol/ui) 2026-01-26, "Communication Protocol",
 * "MCP Apps Specific Messages", "Lifecycle"; wire names as sent by the App SDK
 * @modelcontextprotocol/ext-apps 2.0.4.
 *
 * Rules:
 * 1. Messages are JSON-RPC 2.0 over window.parent.postMessage with target origin "*" (the
 *    View does not know the Host's origin); incoming messages are accepted only when
 *    event.source is window.parent.
 * 2. connect() sends `ui/initialize` {protocolVersion "2026-01-26", appInfo,
 *    appCapabilities}, stores hostCapabilities / hostInfo / hostContext from the result,
 *    then sends `ui/notifications/initialized`; nothing else is sent before it.
 * 3. Host notifications `ui/notifications/tool-input`, `tool-input-partial`, `tool-result`,
 *    `tool-cancelled`, `host-context-changed` call the matching on... handler; a
 *    host-context-changed update is merged into hostContext first.
 * 4. Host requests are answered: `ping` with {}, `ui/resource-teardown` with {} after the
 *    onteardown handler settles (an error from it becomes a -32000 error response); any
 *    other method gets -32601.
 * 5. Every request has a deadline (requestTimeoutMs, default 30000); an error response
 *    rejects with an Error carrying `code` and `data`.
 * 6. Auto-resize (default on): a ResizeObserver on <html> and <body>, coalesced to one
 *    measurement per animation frame, sends `ui/notifications/size-changed` {width,
 *    height} (CSS pixels, rounded up) only when the size changed.
 */
(function (root) {
  "use strict";

  var PROTOCOL_VERSION = "2026-01-26";
  var DEFAULT_TIMEOUT_MS = 30000;
  var NOTIFICATION_HANDLERS = {
    "ui/notifications/tool-input": "ontoolinput",
    "ui/notifications/tool-input-partial": "ontoolinputpartial",
    "ui/notifications/tool-result": "ontoolresult",
    "ui/notifications/tool-cancelled": "ontoolcancelled",
    "ui/notifications/host-context-changed": "onhostcontextchanged",
  };

  function McpkitApp(appInfo, options) {
    if (!(this instanceof McpkitApp)) return new McpkitApp(appInfo, options);
    options = options || {};
    this.appInfo = appInfo || { name: "mcpkit-app", version: "0.0.0" };
    this.appCapabilities = options.capabilities || {};
    this.autoResize = options.autoResize !== false;
    this.requestTimeoutMs = options.requestTimeoutMs || DEFAULT_TIMEOUT_MS;
    this.hostCapabilities = undefined;
    this.hostInfo = undefined;
    this.hostContext = undefined;
    this.ontoolinput = null;
    this.ontoolinputpartial = null;
    this.ontoolresult = null;
    this.ontoolcancelled = null;
    this.onhostcontextchanged = null;
    this.onteardown = null;
    this._target = options.target || root.parent;
    this._nextId = 1;
    this._pending = {};
    this._connected = false;
    this._resizeObserver = null;
    this._lastSize = null;
    this._onMessage = this._receive.bind(this);
    root.addEventListener("message", this._onMessage);
  }

  McpkitApp.PROTOCOL_VERSION = PROTOCOL_VERSION;

  McpkitApp.prototype._post = function (message) {
    this._target.postMessage(message, "*");
  };

  McpkitApp.prototype.request = function (method, params) {
    var self = this;
    var id = self._nextId++;
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        delete self._pending[id];
        var error = new Error(method + ": no response within " + self.requestTimeoutMs + " ms");
        error.code = -32001;
        reject(error);
      }, self.requestTimeoutMs);
      self._pending[id] = { resolve: resolve, reject: reject, timer: timer };
      self._post({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    });
  };

  McpkitApp.prototype.notify = function (method, params) {
    this._post({ jsonrpc: "2.0", method: method, params: params || {} });
  };

  McpkitApp.prototype.connect = function () {
    var self = this;
    return self
      .request("ui/initialize", {
        protocolVersion: PROTOCOL_VERSION,
        appInfo: self.appInfo,
        appCapabilities: self.appCapabilities,
      })
      .then(function (result) {
        result = result || {};
        self.hostCapabilities = result.hostCapabilities;
        self.hostInfo = result.hostInfo;
        self.hostContext = result.hostContext || {};
        self._connected = true;
        self.notify("ui/notifications/initialized", {});
        if (self.autoResize) self._startAutoResize();
        return result;
      });
  };

  McpkitApp.prototype.callServerTool = function (name, args) {
    return this.request("tools/call", { name: name, arguments: args || {} });
  };

  McpkitApp.prototype.readServerResource = function (uri) {
    return this.request("resources/read", { uri: uri });
  };

  McpkitApp.prototype.sendMessage = function (message) {
    var params =
      typeof message === "string"
        ? { role: "user", content: [{ type: "text", text: message }] }
        : message;
    return this.request("ui/message", params);
  };

  McpkitApp.prototype.openLink = function (url) {
    return this.request("ui/open-link", { url: url });
  };

  McpkitApp.prototype.updateModelContext = function (params) {
    return this.request("ui/update-model-context", params);
  };

  McpkitApp.prototype.requestDisplayMode = function (mode) {
    return this.request("ui/request-display-mode", { mode: mode });
  };

  McpkitApp.prototype.sendLog = function (level, data) {
    this.notify("notifications/message", { level: level, data: data });
  };

  McpkitApp.prototype.requestTeardown = function () {
    this.notify("ui/notifications/request-teardown", {});
  };

  McpkitApp.prototype.sendSizeChanged = function (width, height) {
    this.notify("ui/notifications/size-changed", { width: width, height: height });
  };

  McpkitApp.prototype.close = function () {
    root.removeEventListener("message", this._onMessage);
    if (this._resizeObserver) this._resizeObserver.disconnect();
    this._resizeObserver = null;
    for (var id in this._pending) {
      clearTimeout(this._pending[id].timer);
      this._pending[id].reject(new Error("the app closed"));
    }
    this._pending = {};
    this._connected = false;
  };

  McpkitApp.prototype._measure = function () {
    var html = document.documentElement;
    var saved = html.style.height;
    html.style.height = "max-content"; // the content's height, not the viewport's
    var height = Math.ceil(html.getBoundingClientRect().height);
    html.style.height = saved;
    return { width: Math.ceil(root.innerWidth), height: height };
  };

  McpkitApp.prototype._startAutoResize = function () {
    var self = this;
    if (typeof ResizeObserver === "undefined" || self._resizeObserver) return;
    var scheduled = false;
    function report() {
      scheduled = false;
      var size = self._measure();
      var last = self._lastSize;
      if (last && last.width === size.width && last.height === size.height) return;
      self._lastSize = size;
      self.sendSizeChanged(size.width, size.height);
    }
    function schedule() {
      if (scheduled) return;
      scheduled = true;
      root.requestAnimationFrame(report);
    }
    self._resizeObserver = new ResizeObserver(schedule);
    self._resizeObserver.observe(document.documentElement);
    if (document.body) self._resizeObserver.observe(document.body);
    schedule();
  };

  McpkitApp.prototype._respond = function (id, result, error) {
    var message = { jsonrpc: "2.0", id: id };
    if (error) message.error = error;
    else message.result = result || {};
    this._post(message);
  };

  McpkitApp.prototype._answer = function (message) {
    var self = this;
    if (message.method === "ping") return self._respond(message.id, {});
    if (message.method === "ui/resource-teardown") {
      var handler = self.onteardown;
      Promise.resolve()
        .then(function () {
          return handler ? handler(message.params || {}) : undefined;
        })
        .then(
          function () {
            self._respond(message.id, {});
          },
          function (error) {
            self._respond(message.id, null, { code: -32000, message: String(error && error.message || error) });
          }
        );
      return;
    }
    self._respond(message.id, null, { code: -32601, message: "Method not found: " + message.method });
  };

  McpkitApp.prototype._receive = function (event) {
    if (event.source !== this._target) return; // rule 1
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    var hasId = message.id !== undefined && message.id !== null;
    if (hasId && !message.method) {
      var pending = this._pending[message.id];
      if (!pending) return;
      delete this._pending[message.id];
      clearTimeout(pending.timer);
      if (message.error) {
        var error = new Error(message.error.message || "JSON-RPC error");
        error.code = message.error.code;
        error.data = message.error.data;
        pending.reject(error);
      } else {
        pending.resolve(message.result);
      }
      return;
    }
    if (hasId) return this._answer(message);
    if (message.method === "ui/notifications/host-context-changed") {
      var context = this.hostContext || {};
      var update = message.params || {};
      for (var key in update) context[key] = update[key];
      this.hostContext = context;
    }
    var name = NOTIFICATION_HANDLERS[message.method];
    if (name && typeof this[name] === "function") this[name](message.params || {});
  };

  root.McpkitApp = McpkitApp;
})(typeof globalThis !== "undefined" ? globalThis : window);
