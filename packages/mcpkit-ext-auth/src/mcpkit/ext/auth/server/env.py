"""Protected-server settings from environment variables, for servers started by a
command (``mcpkit run module:factory --transport http``), containers and benchmarks.

Rules:
1. Variables are ``MCPKIT_AUTH_<FIELD>`` (the prefix is an argument): ``SERVER_URL``
   (required), ``AUTHORIZATION_SERVERS``, ``AUDIENCES``, ``SCOPES_SUPPORTED``,
   ``REQUIRED_SCOPES`` (space-separated lists), ``ISSUER``, ``JWKS_URL``,
   ``INTROSPECTION_URL``, ``CLIENT_ID``, ``CLIENT_SECRET``, ``RESOURCE``,
   ``LEEWAY_S`` (seconds), ``ALLOW_PLAIN_JWT`` and ``ROOT_METADATA`` (``1``/``true``/
   ``yes``), ``DPOP`` (``off``, ``on`` or ``required``).
2. A missing ``SERVER_URL``, a bad number or an unknown ``DPOP`` value is a
   ``ValueError`` naming the variable (never its value: secrets live here too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mcpkit.ext.auth.server.settings import AuthSettings, DPoPSettings

__all__ = ["settings_from_env"]

_TEXT = ("issuer", "jwks_url", "introspection_url", "client_id", "client_secret", "resource")
_LISTS = ("authorization_servers", "audiences", "scopes_supported", "required_scopes")
_FLAGS = ("allow_plain_jwt", "root_metadata")


def settings_from_env(
    environ: Mapping[str, str] | None = None, *, prefix: str = "MCPKIT_AUTH_"
) -> AuthSettings:
    """Rules 1-2."""
    env = os.environ if environ is None else environ

    def get(name: str) -> str | None:
        value = env.get(prefix + name.upper())
        return value.strip() if value is not None and value.strip() else None

    server_url = get("server_url")
    if server_url is None:
        raise ValueError(f"{prefix}SERVER_URL is required (the public URL of the MCP endpoint)")
    options: dict[str, Any] = {"server_url": server_url}
    for name in _TEXT:
        if (value := get(name)) is not None:
            options[name] = value
    for name in _LISTS:
        if (value := get(name)) is not None:
            options[name] = tuple(value.split())
    for name in _FLAGS:
        if (value := get(name)) is not None:
            options[name] = value.lower() in ("1", "true", "yes")
    if (value := get("leeway_s")) is not None:
        try:
            options["leeway_s"] = float(value)
        except ValueError:
            raise ValueError(f"{prefix}LEEWAY_S must be a number of seconds") from None
    dpop = (get("dpop") or "off").lower()
    if dpop not in ("off", "on", "required"):
        raise ValueError(f"{prefix}DPOP must be off, on or required")
    if dpop != "off":
        options["dpop"] = DPoPSettings(required=dpop == "required")
    return AuthSettings(**options)
