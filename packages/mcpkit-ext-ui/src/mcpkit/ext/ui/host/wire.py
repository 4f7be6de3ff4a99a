"""The View↔Host wire names of MCP Apps, and the aliases the host also accepts.

Sources: ``../shared/spec/extensions/apps-spec/apps-2026-01-26.mdx`` (§Communication
Protocol, §MCP Apps Specific Messages, §Sandbox proxy) and the dist sources of the
reference App SDK, npm ``@modelcontextprotocol/ext-apps@2.0.4`` (``dist/src/app.js``,
what an app sends and answers; ``dist/src/app-bridge.js``, what its host side sends and
answers).

Rules:
1. Every method name the host sends or accepts is a constant here, and nothing else in
   :mod:`mcpkit.ext.ui.host` spells one.
2. An inbound method is mapped to its canonical (2026-01-26) name by :func:`canonical`;
   :data:`ALIASES` lists each other name accepted and where it came from. Outbound
   messages always use the canonical names.
3. The host answers ``ui/initialize`` with :data:`PROTOCOL_VERSION` when the app asks for a
   version in :data:`SUPPORTED_PROTOCOL_VERSIONS`, else with its own latest (as the SDK's
   ``AppBridge`` does: the app decides whether it can go on).
4. Methods starting with :data:`SANDBOX_PREFIX` are between the host page and the sandbox
   proxy only; the proxy never forwards them and the host never proxies them.
"""

from __future__ import annotations

from typing import Final

from mcpkit.ext.ui.server.capability import RESOURCE_MIME_TYPE, SPEC_VERSION
from mcpkit.ext.ui.server.meta import DEPRECATED_RESOURCE_URI_KEY

__all__ = [
    "ALIASES",
    "APP_NOTIFICATIONS",
    "APP_REQUESTS",
    "DENIED",
    "DOWNLOAD_FILE",
    "HOST_CONTEXT_CHANGED",
    "HOST_NOTIFICATIONS",
    "HOST_REQUESTS",
    "INITIALIZE",
    "INITIALIZED",
    "LOG_MESSAGE",
    "MESSAGE",
    "MIME_TYPE",
    "OPEN_LINK",
    "PING",
    "PROTOCOL_VERSION",
    "REQUEST_DISPLAY_MODE",
    "REQUEST_TEARDOWN",
    "RESOURCES_LIST",
    "RESOURCES_READ",
    "RESOURCES_TEMPLATES_LIST",
    "RESOURCE_TEARDOWN",
    "RESOURCE_URI_META_KEY",
    "SAMPLING_CREATE_MESSAGE",
    "SANDBOX_PREFIX",
    "SANDBOX_PROXY_READY",
    "SANDBOX_RESOURCE_READY",
    "SIZE_CHANGED",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "TOOLS_CALL",
    "TOOLS_LIST",
    "TOOLS_LIST_CHANGED",
    "TOOL_CANCELLED",
    "TOOL_INPUT",
    "TOOL_INPUT_PARTIAL",
    "TOOL_RESULT",
    "UPDATE_MODEL_CONTEXT",
    "Alias",
    "canonical",
]

PROTOCOL_VERSION: Final = SPEC_VERSION
"""The MCP Apps protocol version (spec file name; SDK 2.0.4 ``LATEST_PROTOCOL_VERSION``)."""
SUPPORTED_PROTOCOL_VERSIONS: Final = (PROTOCOL_VERSION,)
"""Versions echoed back to an app that asks for them (SDK 2.0.4 ``SUPPORTED_PROTOCOL_VERSIONS``)."""
MIME_TYPE: Final = RESOURCE_MIME_TYPE
"""The MIME type of an app's ``ui://`` resource (spec §UI Resource Format)."""
RESOURCE_URI_META_KEY: Final = DEPRECATED_RESOURCE_URI_KEY
"""The deprecated flat ``_meta`` key of a tool's resource URI (spec §Resource Discovery)."""
DENIED: Final = -32000
"""The error code the spec's examples give for a denied or failed host request
("Implementation-defined error", spec §MCP Apps Specific Messages)."""

# -- View → Host requests (SDK app.js sends them; spec §MCP Apps Specific Messages) ------
INITIALIZE: Final = "ui/initialize"
OPEN_LINK: Final = "ui/open-link"
MESSAGE: Final = "ui/message"
REQUEST_DISPLAY_MODE: Final = "ui/request-display-mode"
UPDATE_MODEL_CONTEXT: Final = "ui/update-model-context"
DOWNLOAD_FILE: Final = "ui/download-file"
"""SDK 2.0.4 only (``DOWNLOAD_FILE_METHOD``); not in the 2026-01-26 spec text."""
TOOLS_CALL: Final = "tools/call"
RESOURCES_READ: Final = "resources/read"
RESOURCES_LIST: Final = "resources/list"
RESOURCES_TEMPLATES_LIST: Final = "resources/templates/list"
"""Answered by SDK 2.0.4's ``AppBridge``; the App class has no method sending it."""
SAMPLING_CREATE_MESSAGE: Final = "sampling/createMessage"
PING: Final = "ping"

# -- View → Host notifications -----------------------------------------------------------
INITIALIZED: Final = "ui/notifications/initialized"
SIZE_CHANGED: Final = "ui/notifications/size-changed"
REQUEST_TEARDOWN: Final = "ui/notifications/request-teardown"
"""SDK 2.0.4 only (``REQUEST_TEARDOWN_METHOD``); the view asks the host to close it."""
LOG_MESSAGE: Final = "notifications/message"

# -- Host → View notifications -----------------------------------------------------------
TOOL_INPUT: Final = "ui/notifications/tool-input"
TOOL_INPUT_PARTIAL: Final = "ui/notifications/tool-input-partial"
TOOL_RESULT: Final = "ui/notifications/tool-result"
TOOL_CANCELLED: Final = "ui/notifications/tool-cancelled"
HOST_CONTEXT_CHANGED: Final = "ui/notifications/host-context-changed"

# -- Host → View requests (SDK app.js answers them) ------------------------------------
RESOURCE_TEARDOWN: Final = "ui/resource-teardown"
TOOLS_LIST: Final = "tools/list"
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"

# -- Host page ↔ sandbox proxy (spec §Sandbox proxy, §Reserved Messages) -----------------
SANDBOX_PREFIX: Final = "ui/notifications/sandbox-"
SANDBOX_PROXY_READY: Final = "ui/notifications/sandbox-proxy-ready"
SANDBOX_RESOURCE_READY: Final = "ui/notifications/sandbox-resource-ready"

APP_REQUESTS: Final = frozenset(
    {
        INITIALIZE,
        OPEN_LINK,
        MESSAGE,
        REQUEST_DISPLAY_MODE,
        UPDATE_MODEL_CONTEXT,
        DOWNLOAD_FILE,
        TOOLS_CALL,
        RESOURCES_READ,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        SAMPLING_CREATE_MESSAGE,
        PING,
    }
)
"""Requests a view may send (SDK 2.0.4 app.js and app-bridge.js, spec)."""
APP_NOTIFICATIONS: Final = frozenset({INITIALIZED, SIZE_CHANGED, REQUEST_TEARDOWN, LOG_MESSAGE})
"""Notifications a view may send."""
HOST_NOTIFICATIONS: Final = frozenset(
    {TOOL_INPUT, TOOL_INPUT_PARTIAL, TOOL_RESULT, TOOL_CANCELLED, HOST_CONTEXT_CHANGED}
)
"""Notifications the host sends to a view."""
HOST_REQUESTS: Final = frozenset({RESOURCE_TEARDOWN, TOOLS_CALL, TOOLS_LIST, PING})
"""Requests the host sends and a view answers (SDK 2.0.4 app.js handlers)."""


class Alias:
    """One accepted non-canonical name: ``name`` → ``canonical``, with ``source``."""

    __slots__ = ("canonical", "name", "source")

    def __init__(self, name: str, canonical: str, source: str) -> None:
        self.name = name
        self.canonical = canonical
        self.source = source

    def __repr__(self) -> str:
        return f"Alias({self.name!r} -> {self.canonical!r})"


ALIASES: Final[tuple[Alias, ...]] = (
    Alias(
        "initialize",
        INITIALIZE,
        "apps-2026-01-26.mdx §Transport Layer: its SDK-less example sends a plain "
        "`initialize` request where §Lifecycle names `ui/initialize`",
    ),
    Alias(
        "ui/notifications/size-change",
        SIZE_CHANGED,
        "pre-1.0 ext-apps App.sendSizeChange and SEP-1865 drafts (renamed "
        "`size-changed` in the 2026-01-26 spec and SDK 2.x)",
    ),
    Alias(
        "ui/size-change",
        SIZE_CHANGED,
        "early SEP-1865 drafts, before notifications moved under `ui/notifications/`",
    ),
    Alias(
        "ui/notifications/sandbox-ready",
        SANDBOX_PROXY_READY,
        "early SEP-1865 drafts and pre-1.0 ext-apps sandbox proxies (renamed "
        "`sandbox-proxy-ready` in the 2026-01-26 spec and SDK 2.x)",
    ),
)
"""Names accepted on input besides the canonical ones (rule 2). SDK 2.0.4 itself sends
only canonical names: every name in its ``app.js`` is in :data:`APP_REQUESTS` or
:data:`APP_NOTIFICATIONS`."""

_BY_NAME: Final = {a.name: a.canonical for a in ALIASES}


def canonical(method: str) -> str:
    """The 2026-01-26 name of ``method`` (itself when it is not an alias; rule 2)."""
    return _BY_NAME.get(method, method)
