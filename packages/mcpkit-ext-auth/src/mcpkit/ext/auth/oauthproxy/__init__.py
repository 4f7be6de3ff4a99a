"""The OAuth proxy: MCP clients register and log in here (DCR, CIMD, code + PKCE,
refresh), users sign in at the identity provider you already have (issue 30).

::

    from mcpkit.ext.auth.oauthproxy import OAuthProxy, OIDCProvider

    upstream = OIDCProvider(
        "https://idp.example.com", client_id="mcp-proxy", client_secret=os.environ["SECRET"]
    )
    proxy = OAuthProxy(
        upstream, base_url="https://mcp.example.com", resource="https://mcp.example.com/mcp"
    )
    proxy.install(server)  # its routes on the server's app + protect() for its tokens


    @server.tool()
    async def whoami(ctx) -> str:
        token = await proxy.upstream_token(ctx)  # the caller's IdP token, server-side
        ...

Register ``https://mcp.example.com/callback`` as the redirect URI at the identity
provider. Presets: :mod:`.presets` (GitHub, Google, Entra ID, Auth0, Okta, Keycloak).

Rules: each module states its own (``proxy``, ``flow``, ``consent``, ``upstream``,
``presets``, ``store``). Importing this package loads nothing else: the names below
load their module on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.ext.auth.oauthproxy.presets import (
        PRESETS,
        auth0,
        entra,
        github,
        google,
        keycloak,
        okta,
    )
    from mcpkit.ext.auth.oauthproxy.proxy import OAuthProxy
    from mcpkit.ext.auth.oauthproxy.store import MemoryProxyStore, ProxyStore, RedisProxyStore
    from mcpkit.ext.auth.oauthproxy.upstream import (
        OIDCProvider,
        UpstreamError,
        UpstreamIdentity,
        UpstreamProvider,
        UpstreamTokens,
    )

_PRESETS = "mcpkit.ext.auth.oauthproxy.presets"
_STORE = "mcpkit.ext.auth.oauthproxy.store"
_UP = "mcpkit.ext.auth.oauthproxy.upstream"
_WHERE: dict[str, str] = {
    "OAuthProxy": "mcpkit.ext.auth.oauthproxy.proxy",
    "MemoryProxyStore": _STORE,
    "ProxyStore": _STORE,
    "RedisProxyStore": _STORE,
    "OIDCProvider": _UP,
    "UpstreamError": _UP,
    "UpstreamIdentity": _UP,
    "UpstreamProvider": _UP,
    "UpstreamTokens": _UP,
    "PRESETS": _PRESETS,
    "auth0": _PRESETS,
    "entra": _PRESETS,
    "github": _PRESETS,
    "google": _PRESETS,
    "keycloak": _PRESETS,
    "okta": _PRESETS,
}

__all__ = [
    "PRESETS",
    "MemoryProxyStore",
    "OAuthProxy",
    "OIDCProvider",
    "ProxyStore",
    "RedisProxyStore",
    "UpstreamError",
    "UpstreamIdentity",
    "UpstreamProvider",
    "UpstreamTokens",
    "auth0",
    "entra",
    "github",
    "google",
    "keycloak",
    "okta",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
