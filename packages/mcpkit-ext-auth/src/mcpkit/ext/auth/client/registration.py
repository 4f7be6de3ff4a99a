"""Client registration: pre-registered credentials, a Client ID Metadata Document URL,
or Dynamic Client Registration, in that order.

Spec: 2026-07-28 ``basic/authorization/client-registration`` (priority order,
§Authorization Server Binding); RFC 7591 (DCR); draft-ietf-oauth-client-id-metadata-document.

Rules:
1. Pre-registered credentials are used when given; credentials with an ``issuer`` are
   only used with that issuer, and a mismatch raises :class:`~.grant.OAuthError`
   ``invalid_client`` rather than presenting them to another server (§Authorization
   Server Binding).
2. Else, with a ``client_metadata_url`` (an ``https`` URL with a path) and an
   authorization server advertising ``client_id_metadata_document_supported: true``,
   that URL is the ``client_id`` (public client, ``token_endpoint_auth_method=none``),
   valid at any issuer.
3. Else DCR at ``registration_endpoint``: a JSON POST of the client metadata (``redirect_uris``,
   ``grant_types`` with ``authorization_code`` and ``refresh_token``, ``response_types``
   ``code``, ``token_endpoint_auth_method`` (``none`` unless the server supports only
   ``client_secret_basic``/``client_secret_post``), ``client_name``, ``application_type``
   ``native`` for loopback/``localhost``/private-scheme redirect URIs else ``web``
   (``client-registration`` §Application Type)); the answer's ``client_id``
   (required) and ``client_secret`` are bound to the issuer. Without a
   ``token_endpoint_auth_method`` in the answer, a secret means ``client_secret_basic``
   (RFC 7591 §2) and no secret ``none``. No endpoint: :class:`~.grant.OAuthError`
   whose remedy (:mod:`.grant` rule 5) is ``registration=`` in code and ``--token`` at
   the ``mcpkit`` command line (which cannot pre-register a client).
4. Registrations from DCR are kept in the storage per (resource, issuer), so a changed
   authorization server leads to a new registration, never to reuse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from mcpkit.core.remedies import Remedy
from mcpkit.core.shapes import JSON
from mcpkit.ext.auth.client.grant import ClientAuthMethod, ClientRegistration, OAuthError

if TYPE_CHECKING:
    import httpx2

__all__ = ["ClientMetadata", "register_client", "valid_metadata_url"]

ClientMetadata = Mapping[str, Any]
"""RFC 7591 §2 client metadata (``client_name``, ``redirect_uris``, ``grant_types`` ...)."""
_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in cast(list[Any], value) if isinstance(v, str)]


def application_type(redirect_uris: Sequence[str]) -> str:
    """Rule 3: ``native`` when every redirect URI is on the local machine (loopback,
    ``localhost`` or a private-use scheme) or there is none, else ``web``."""
    for uri in redirect_uris:
        parts = urlsplit(uri)
        local = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if parts.scheme in ("http", "https") and not local:
            return "web"
    return "native"


def valid_metadata_url(url: str) -> bool:
    """Rule 2: an ``https`` URL with a non-root path (CIMD §3)."""
    parts = urlsplit(url)
    return parts.scheme == "https" and parts.path not in ("", "/") and not parts.fragment


def _requested_auth_method(server: JSON) -> ClientAuthMethod:
    """``none`` (a public client) unless the server supports only secret methods."""
    supported: Any = server.get("token_endpoint_auth_methods_supported")
    if not isinstance(supported, list):
        return "none"
    options = [m for m in cast(list[Any], supported) if isinstance(m, str)]
    if not options or "none" in options:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in options:
            return method
    return "none"


async def register_client(
    http: httpx2.AsyncClient,
    server: JSON,
    *,
    issuer: str,
    redirect_uris: Sequence[str],
    metadata: ClientMetadata | None = None,
    grant_types: Sequence[str] = ("authorization_code", "refresh_token"),
) -> ClientRegistration:
    """Rule 3: register at ``server["registration_endpoint"]``; :class:`OAuthError` on
    failure."""
    endpoint = server.get("registration_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise OAuthError(
            "invalid_client",
            f"authorization server {issuer!r} has no registration_endpoint, does not accept "
            "a client metadata URL, and no client_id was given",
            remedy=Remedy(
                python="pass registration=ClientRegistration(client_id=...) (a client "
                "registered with that authorization server beforehand)",
                cli="this command cannot register a client there: get an access token from "
                "that authorization server another way and pass it with --token TOKEN",
            ),
        )
    body: JSON = {
        "client_name": "mcpkit",
        "redirect_uris": list(redirect_uris),
        "grant_types": list(grant_types),
        "response_types": ["code"] if "authorization_code" in grant_types else [],
        "token_endpoint_auth_method": _requested_auth_method(server),
        "application_type": application_type(redirect_uris),
        **dict(metadata or {}),
    }
    response = await http.post(endpoint, json=body, headers={"Accept": "application/json"})
    try:
        data: Any = json.loads(response.content) if response.content else None
    except (ValueError, RecursionError):  # nested past the parser's depth
        data = None
    if response.status_code not in (200, 201) or not isinstance(data, dict):
        info = cast(JSON, data) if isinstance(data, dict) else {}
        raise OAuthError(
            str(info.get("error") or "invalid_client_metadata"),
            str(info.get("error_description") or f"registration at {endpoint} failed"),
            status=response.status_code,
        )
    answer = cast(JSON, data)
    client_id = answer.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise OAuthError("invalid_response", f"registration at {endpoint} returned no client_id")
    secret = answer.get("client_secret")
    method: Any = answer.get("token_endpoint_auth_method")
    if method not in _AUTH_METHODS:
        method = "client_secret_basic" if isinstance(secret, str) and secret else "none"
    return ClientRegistration(
        client_id=client_id,
        client_secret=secret if isinstance(secret, str) and secret else None,
        token_endpoint_auth_method=method,
        issuer=issuer,
        redirect_uris=_strings(answer.get("redirect_uris")) or list(redirect_uris),
    )
