"""The OpenTelemetry semantic conventions for MCP, as data: attribute names, span names,
the attributes a message's method and params give, error classification, and the
histograms' bucket boundaries.

Source: OpenTelemetry semantic conventions, ``docs/gen-ai/mcp.md`` and
``docs/registry/attributes/mcp.md`` (status: development); ``spec/otel/`` in this repository.

Rules:
1. The span name is ``{mcp.method.name} {target}`` where the target is the tool name
   (``tools/call``) or the prompt name (``prompts/get``), else ``{mcp.method.name}``
   alone. The target is given by the caller, never read from ``params``: only a name
   the server has found registered is one (issue 25 §3; the conventions: "if there is
   no low-cardinality target available, the span name SHOULD be
   ``{mcp.method.name}``"), and only when it is at most :data:`MAX_TARGET_BYTES`
   (UTF-8). The resource URI is a target only when the user opts in
   (``uri_in_span_name``): it is high-cardinality.
   ``{mcp.method.name}`` is the method as :func:`method_name` records it (rule 10).
9. A peer-chosen text recorded as an attribute value or span name (the resource URI,
   a request id, a session id a server chose, an error message received) is cut to
   :data:`MAX_TEXT_BYTES` UTF-8 bytes at a character boundary, as an OpenTelemetry
   attribute length limit would.
2. ``gen_ai.operation.name`` is ``execute_tool`` for ``tools/call`` and never set
   otherwise.
3. ``jsonrpc.request.id`` is the id's string form; never set for a notification or a
   ``null`` id.
4. ``mcp.resource.uri`` is set for ``resources/read``, ``resources/subscribe``,
   ``resources/unsubscribe`` and ``notifications/resources/updated``. On spans always;
   on the operation-duration histograms only when opted in (it is Opt-In there).
5. ``error.type``: the JSON-RPC error code's string form for an error response (also
   ``rpc.response.status_code``); ``tool_error`` for a ``CallToolResult`` with
   ``isError: true``; the exception's qualified class name for a local failure
   (``_OTHER`` when there is none). The span status is ERROR with the error message.
6. ``network.transport`` is ``pipe`` for stdio and ``tcp`` for HTTP;
   ``network.protocol.name`` is ``http`` (lowercase) with ``network.protocol.version``
   when the transport is HTTP; nothing of them for the in-memory pairing.
7. The four duration histograms are in seconds with the explicit bucket boundaries
   ``[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]``.
8. Metric attributes are the low-cardinality subset the conventions list per metric:
   never ``jsonrpc.request.id`` or ``mcp.session.id``.
10. ``mcp.method.name`` is the peer's text too (a method nothing serves is still traced,
   and a notification's method is never answered): a method longer than
   :data:`MAX_TARGET_BYTES` is recorded as ``_OTHER``, and so is a method that is not
   one of the conventions' well-known values (:data:`KNOWN_METHODS`) once the request
   was answered -32601 (the recorder's rule 9): each distinct value on the duration
   histogram is a metric stream the SDK keeps for the process's life.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "CLIENT_OPERATION_DURATION",
    "CLIENT_SESSION_DURATION",
    "DURATION_BUCKETS_S",
    "EXECUTE_TOOL",
    "KNOWN_METHODS",
    "MAX_TARGET_BYTES",
    "MAX_TEXT_BYTES",
    "NAMED_METHODS",
    "OPERATION_METRIC_KEYS",
    "RESOURCE_URI_METHODS",
    "SERVER_OPERATION_DURATION",
    "SERVER_SESSION_DURATION",
    "SESSION_METRIC_KEYS",
    "TOOL_ERROR",
    "TransportInfo",
    "bounded_text",
    "error_code_attributes",
    "method_name",
    "metric_attributes",
    "request_attributes",
    "resource_uri",
    "span_name",
    "target_attributes",
    "usable_target",
]

# -- attribute keys (registry: mcp, gen_ai, jsonrpc, rpc, error, network, server, client)
MCP_METHOD_NAME: Final = "mcp.method.name"
MCP_SESSION_ID: Final = "mcp.session.id"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_RESOURCE_URI: Final = "mcp.resource.uri"
JSONRPC_REQUEST_ID: Final = "jsonrpc.request.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME: Final = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
ERROR_TYPE: Final = "error.type"
RPC_RESPONSE_STATUS_CODE: Final = "rpc.response.status_code"
NETWORK_TRANSPORT: Final = "network.transport"
NETWORK_PROTOCOL_NAME: Final = "network.protocol.name"
NETWORK_PROTOCOL_VERSION: Final = "network.protocol.version"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
CLIENT_ADDRESS: Final = "client.address"
CLIENT_PORT: Final = "client.port"

EXECUTE_TOOL: Final = "execute_tool"
TOOL_ERROR: Final = "tool_error"
OTHER_ERROR: Final = "_OTHER"

KNOWN_METHODS: Final = frozenset(
    {
        "completion/complete",
        "elicitation/create",
        "initialize",
        "logging/setLevel",
        "notifications/cancelled",
        "notifications/initialized",
        "notifications/message",
        "notifications/progress",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/roots/list_changed",
        "notifications/tools/list_changed",
        "ping",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/templates/list",
        "resources/unsubscribe",
        "roots/list",
        "sampling/createMessage",
        "tools/call",
        "tools/list",
    }
)
"""Rule 10: the conventions' well-known values of ``mcp.method.name``."""

RESOURCE_URI_METHODS: Final = frozenset(
    {
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/resources/updated",
    }
)

# -- metrics (rule 7)
CLIENT_OPERATION_DURATION: Final = "mcp.client.operation.duration"
SERVER_OPERATION_DURATION: Final = "mcp.server.operation.duration"
CLIENT_SESSION_DURATION: Final = "mcp.client.session.duration"
SERVER_SESSION_DURATION: Final = "mcp.server.session.duration"
DURATION_BUCKETS_S: Final[tuple[float, ...]] = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1,
    2,
    5,
    10,
    30,
    60,
    120,
    300,
)
DESCRIPTIONS: Final = {
    CLIENT_OPERATION_DURATION: "The duration of the MCP request or notification as observed "
    "on the sender from the time it was sent until the response or ack is received.",
    SERVER_OPERATION_DURATION: "MCP request or notification duration as observed on the "
    "receiver from the time it was received until the result or ack is sent.",
    CLIENT_SESSION_DURATION: "The duration of the MCP session as observed on the MCP client.",
    SERVER_SESSION_DURATION: "The duration of the MCP session as observed on the MCP server.",
}

# Rule 8: the attributes each metric carries (the conventions' tables per metric);
# ``server.address``/``server.port`` only on the client's operation metric.
OPERATION_METRIC_KEYS: Final = frozenset(
    {
        MCP_METHOD_NAME,
        ERROR_TYPE,
        GEN_AI_PROMPT_NAME,
        GEN_AI_TOOL_NAME,
        RPC_RESPONSE_STATUS_CODE,
        GEN_AI_OPERATION_NAME,
        MCP_PROTOCOL_VERSION,
        NETWORK_PROTOCOL_NAME,
        NETWORK_PROTOCOL_VERSION,
        NETWORK_TRANSPORT,
        SERVER_ADDRESS,
        SERVER_PORT,
    }
)
SESSION_METRIC_KEYS: Final = frozenset(
    {
        ERROR_TYPE,
        MCP_PROTOCOL_VERSION,
        NETWORK_PROTOCOL_NAME,
        NETWORK_PROTOCOL_VERSION,
        NETWORK_TRANSPORT,
        SERVER_ADDRESS,
        SERVER_PORT,
    }
)

Attributes = dict[str, str | int | bool | float]

MAX_TARGET_BYTES: Final = 512
"""Rule 1: the longest tool or prompt name used as a span name target and attribute
(UTF-8 bytes; the spec advises names of at most 128 characters)."""
MAX_TEXT_BYTES: Final = 1024
"""Rule 9: the longest peer-chosen text kept in an attribute or span name (UTF-8 bytes)."""


def bounded_text(text: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Rule 9: ``text`` cut to at most ``max_bytes`` UTF-8 bytes at a character
    boundary (``text`` itself when it fits)."""
    if len(text) * 4 <= max_bytes:  # fits whatever its characters
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text
    return raw[:max_bytes].decode("utf-8", "ignore")


def method_name(method: str) -> str:
    """Rule 10: ``method`` as ``mcp.method.name`` and the span name's first part:
    itself when at most :data:`MAX_TARGET_BYTES` (UTF-8), else ``_OTHER``."""
    if len(method) * 4 <= MAX_TARGET_BYTES:
        return method
    return method if usable_target(method) is not None else OTHER_ERROR


def usable_target(name: str | None) -> str | None:
    """Rule 1: ``name`` when it may be a span name target (a registered name given by
    the caller, at most :data:`MAX_TARGET_BYTES`), else None."""
    if name is None or not name or len(name.encode("utf-8", "surrogatepass")) > MAX_TARGET_BYTES:
        return None
    return name


class TransportInfo:
    """What the conventions record of a transport (rule 6): ``kind`` is ``"stdio"``,
    ``"http"`` or ``"memory"``; addresses are set where the transport knows them."""

    __slots__ = ("attributes",)

    def __init__(
        self,
        kind: str,
        *,
        http_version: str | None = None,
        server: tuple[str, int] | None = None,
        client: tuple[str, int] | None = None,
    ) -> None:
        attrs: Attributes = {}
        if kind == "stdio":
            attrs[NETWORK_TRANSPORT] = "pipe"
        elif kind == "http":
            attrs[NETWORK_TRANSPORT] = "tcp"
            attrs[NETWORK_PROTOCOL_NAME] = "http"
            if http_version:
                attrs[NETWORK_PROTOCOL_VERSION] = http_version
        if server is not None:
            attrs[SERVER_ADDRESS], attrs[SERVER_PORT] = server[0], int(server[1])
        if client is not None:
            attrs[CLIENT_ADDRESS], attrs[CLIENT_PORT] = client[0], int(client[1])
        self.attributes: Attributes = attrs


NAMED_METHODS: Final = frozenset({"tools/call", "prompts/get"})
"""Methods whose target is a tool or prompt name (rule 1)."""
_NAME_KEY: Final = {"tools/call": GEN_AI_TOOL_NAME, "prompts/get": GEN_AI_PROMPT_NAME}


def resource_uri(method: str, params: Mapping[str, Any] | None) -> str | None:
    """Rules 4, 9: the (bounded) resource URI of a message that carries one, else None."""
    if params is None or method not in RESOURCE_URI_METHODS:
        return None
    uri = params.get("uri")
    return bounded_text(uri) if isinstance(uri, str) else None


def span_name(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    target: str | None = None,
    uri_in_span_name: bool = False,
) -> str:
    """Rule 1: ``"tools/call get-weather"``, ``"prompts/get review"``, ``"ping"``.
    ``target``: the registered tool or prompt name (never read from ``params``)."""
    shown = usable_target(target) if method in NAMED_METHODS else None
    if shown is None and uri_in_span_name:
        shown = resource_uri(method, params)
    recorded = method_name(method)  # rule 10
    return recorded if shown is None else f"{recorded} {shown}"


def target_attributes(method: str, target: str | None) -> Attributes:
    """Rule 1: ``gen_ai.tool.name`` / ``gen_ai.prompt.name`` for a registered target."""
    key = _NAME_KEY.get(method)
    shown = usable_target(target) if key is not None else None
    return {} if key is None or shown is None else {key: shown}


def request_attributes(
    method: str,
    params: Mapping[str, Any] | None,
    request_id: str | int | None,
    *,
    target: str | None = None,
) -> Attributes:
    """Rules 1-4: the attributes a message gives (method, id, the registered tool or
    prompt name ``target``, resource URI)."""
    attrs: Attributes = {MCP_METHOD_NAME: method_name(method)}  # rule 10
    if request_id is not None:
        attrs[JSONRPC_REQUEST_ID] = bounded_text(str(request_id))  # rule 9
    if method == "tools/call":
        attrs[GEN_AI_OPERATION_NAME] = EXECUTE_TOOL
    attrs.update(target_attributes(method, target))
    uri = resource_uri(method, params)
    if uri is not None:
        attrs[MCP_RESOURCE_URI] = uri
    return attrs


def error_code_attributes(code: int) -> Attributes:
    """Rule 5, for a JSON-RPC error response."""
    return {ERROR_TYPE: str(code), RPC_RESPONSE_STATUS_CODE: str(code)}


def metric_attributes(
    span_attributes: Mapping[str, Any], keys: frozenset[str], *, resource_uri: bool = False
) -> Attributes:
    """Rule 8: the subset of a span's attributes that a metric carries (plus
    ``mcp.resource.uri`` when opted in, rule 4)."""
    out: Attributes = {k: v for k, v in span_attributes.items() if k in keys}
    if resource_uri and MCP_RESOURCE_URI in span_attributes:
        out[MCP_RESOURCE_URI] = span_attributes[MCP_RESOURCE_URI]
    return out
