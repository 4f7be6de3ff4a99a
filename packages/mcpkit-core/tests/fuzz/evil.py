"""A malicious server, as data: what it sends when the client asks it something.

The server answers ``initialize`` properly (so the client connects) and ``ping``
normally. For the client's *probe* request (``tools/list``) it plays a :class:`Script`:
junk first (bytes that are not JSON, random JSON, responses to nothing, responses with
the wrong id or the wrong shape, server requests for capabilities the client never
declared, notifications with odd params, huge lines), then the answer the script names:
``ok`` (the right result), ``error`` (a JSON-RPC error), ``bad`` (the right id, the wrong
shape) or ``none`` (never answers: the client must time out cleanly). Over HTTP, ``http``
picks the probe's response: an SSE stream of it all, the answer alone as JSON, or an
error status with a junk body.

:func:`EvilCore.handle` is the transport-neutral logic; the stdio script, the
in-memory task and the HTTP app in the tests all drive it. It records what the client
sent back (its replies to server requests).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

JSON = dict[str, Any]
Final = Literal["ok", "error", "bad", "none"]

PROBE = "tools/list"
PROBE_AS_STRING = "$probe-as-string"
TOOLS_RESULT: JSON = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
SERVER_REQUESTS = (
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "ping",
    "tasks/get",
    "x/unknown",
)


@dataclass
class Script:
    """``junk``: ``("raw", text)`` (written as is, one line) or ``("msg", value)``
    (written as JSON); ``final``: how the probe is answered."""

    junk: list[tuple[str, Any]] = field(default_factory=list)  # pyright: ignore[reportUnknownVariableType]
    final: Final = "ok"
    http: str | int = "sse"

    def to_json(self) -> str:
        return json.dumps({"junk": self.junk, "final": self.final, "http": self.http})

    @staticmethod
    def from_json(text: str) -> Script:
        data = json.loads(text)
        return Script([(k, v) for k, v in data["junk"]], data["final"], data["http"])

    def __repr__(self) -> str:
        parts = [f"{k}:{json.dumps(v)[:80]}" for k, v in self.junk]
        return f"Script(final={self.final}, http={self.http}, junk=[{', '.join(parts)}])"


class EvilCore:
    """The server logic over parsed messages; returns the lines to write."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.client_replies: list[JSON] = []
        self.server_request_ids: list[Any] = []
        self.probes = 0

    def _line(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def handle(self, msg: Any) -> list[str]:
        if not isinstance(msg, dict):
            return []
        if "method" not in msg:
            if "result" in msg or "error" in msg:
                self.client_replies.append(msg)
            return []
        if "id" not in msg:
            return []  # a notification from the client
        rid, method = msg["id"], msg["method"]
        if method == "initialize":
            asked = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
            result = {
                "protocolVersion": asked,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "evil", "version": "6.6.6"},
            }
            return [self._line({"jsonrpc": "2.0", "id": rid, "result": result})]
        if method == PROBE:
            self.probes += 1
            return [*self._junk(rid), *self._final(rid)]
        if method == "ping":
            return [self._line({"jsonrpc": "2.0", "id": rid, "result": {}})]
        return [
            self._line({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
        ]

    def _junk(self, probe_id: Any) -> list[str]:
        out: list[str] = []
        for kind, value in self.script.junk:
            if kind == "raw":
                out.append(value)
                continue
            if isinstance(value, dict) and value.get("id") == PROBE_AS_STRING:
                value = {**value, "id": str(probe_id)}  # the right id, the wrong JSON type
            if isinstance(value, dict) and "method" in value and "id" in value:
                self.server_request_ids.append(value["id"])
            out.append(self._line(value))
        return out

    def _final(self, rid: Any) -> list[str]:
        final = self.script.final
        if final == "ok":
            return [self._line({"jsonrpc": "2.0", "id": rid, "result": TOOLS_RESULT})]
        if final == "error":
            err = {"code": -32000, "message": "evil says no"}
            return [self._line({"jsonrpc": "2.0", "id": rid, "error": err})]
        if final == "bad":
            return [self._line({"jsonrpc": "2.0", "id": rid, "result": ["not", "an", "object"]})]
        return []
