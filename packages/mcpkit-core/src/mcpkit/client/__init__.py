"""The mcpkit MCP client: both protocol eras over stdio, Streamable HTTP and in-memory.

Start with :class:`Client`::

    async with Client("http://127.0.0.1:8765/mcp") as client:
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 1, "b": 2})

Names are loaded on first use, so importing the package does not import httpx2 (only
an HTTP connection does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.client.cache import ResultCache
    from mcpkit.client.client import Client, transport_for
    from mcpkit.client.errors import (
        ClientError,
        HTTPAuthError,
        HTTPStatusError,
        InputRoundsExceededError,
        InvalidResponseError,
        MessageTooLargeError,
        ProtocolViolationError,
        RedirectError,
        RequestTimeoutError,
        SessionExpiredError,
        ToolOutputError,
        TransportClosedError,
        TransportConnectError,
        UnsupportedServerError,
    )
    from mcpkit.client.handlers import (
        HandlerFailedError,
        InputHandlerError,
        InputHandlers,
        apply_elicitation_defaults,
    )
    from mcpkit.client.http import HttpPlugin, HttpTransport
    from mcpkit.client.listen import Subscription, SubscriptionNotification
    from mcpkit.client.memory import MemoryTransport
    from mcpkit.client.middleware import IncomingMessage, OutgoingRequest
    from mcpkit.client.negotiate import Mode, ServerState
    from mcpkit.client.parsing import MalformedResultError
    from mcpkit.client.reconnect import ReconnectPolicy
    from mcpkit.client.results import ProgressHandler, ToolCallError
    from mcpkit.client.stdio import StdioTransport
    from mcpkit.client.transport import ClientStream, ClientTransport

__all__ = [
    "Client",
    "ClientError",
    "ClientStream",
    "ClientTransport",
    "HTTPAuthError",
    "HTTPStatusError",
    "HandlerFailedError",
    "HttpPlugin",
    "HttpTransport",
    "IncomingMessage",
    "InputHandlerError",
    "InputHandlers",
    "InputRoundsExceededError",
    "InvalidResponseError",
    "MalformedResultError",
    "MemoryTransport",
    "MessageTooLargeError",
    "Mode",
    "OutgoingRequest",
    "ProgressHandler",
    "ProtocolViolationError",
    "ReconnectPolicy",
    "RedirectError",
    "RequestTimeoutError",
    "ResultCache",
    "ServerState",
    "SessionExpiredError",
    "StdioTransport",
    "Subscription",
    "SubscriptionNotification",
    "ToolCallError",
    "ToolOutputError",
    "TransportClosedError",
    "TransportConnectError",
    "UnsupportedServerError",
    "apply_elicitation_defaults",
    "transport_for",
]

_EXPORTS: dict[str, str] = {
    "Client": "client",
    "transport_for": "client",
    "ResultCache": "cache",
    "ClientError": "errors",
    "HTTPAuthError": "errors",
    "HTTPStatusError": "errors",
    "InputRoundsExceededError": "errors",
    "ProtocolViolationError": "errors",
    "SessionExpiredError": "errors",
    "ToolOutputError": "errors",
    "TransportClosedError": "errors",
    "TransportConnectError": "errors",
    "MessageTooLargeError": "errors",
    "RequestTimeoutError": "errors",
    "RedirectError": "errors",
    "InvalidResponseError": "errors",
    "UnsupportedServerError": "errors",
    "InputHandlerError": "handlers",
    "HandlerFailedError": "handlers",
    "ProgressHandler": "results",
    "ToolCallError": "results",
    "InputHandlers": "handlers",
    "apply_elicitation_defaults": "handlers",
    "HttpPlugin": "http",
    "HttpTransport": "http",
    "Subscription": "listen",
    "SubscriptionNotification": "listen",
    "MemoryTransport": "memory",
    "IncomingMessage": "middleware",
    "OutgoingRequest": "middleware",
    "Mode": "negotiate",
    "ServerState": "negotiate",
    "MalformedResultError": "parsing",
    "ReconnectPolicy": "reconnect",
    "StdioTransport": "stdio",
    "ClientStream": "transport",
    "ClientTransport": "transport",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
