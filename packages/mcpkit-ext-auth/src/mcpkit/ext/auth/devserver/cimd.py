"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP
2025-11-25 ``basic/authorization``, "Client ID Metadata Documents").

Rules:
1. A client id is a CIMD URL when it is ``https`` with a path; with ``allow_loopback_http``
   (the dev server's default) also ``http://127.0.0.1``, ``[::1]`` or ``localhost``. No
   fragment, no user info, no ``.``/``..`` segments.
2. The document is fetched with httpx2 (no redirects followed), within
   ``limits.cimd_fetch_timeout_s`` and ``limits.max_cimd_document_bytes``; anything but a
   200 JSON object is refused.
3. The document's ``client_id`` equals the URL exactly; ``redirect_uris`` is a non-empty
   list of absolute URLs without fragments; ``token_endpoint_auth_method`` is ``none``
   (default) or ``private_key_jwt`` (with inline ``jwks``), never a shared secret
   (``client_secret`` in the document is refused).
4. A refused document is :class:`CimdError` (``invalid_client`` to the caller).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import anyio
import httpx2

from mcpkit.core.shapes import JSON, as_list, as_object
from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.limits import DevServerLimits

__all__ = ["CimdError", "fetch_client_metadata", "is_cimd_client_id"]

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


class CimdError(Exception):
    """Rule 4: ``str(error)`` is the ``error_description`` (ASCII)."""


def is_cimd_client_id(client_id: str, *, allow_loopback_http: bool = True) -> bool:
    """Rule 1."""
    try:
        parts = urlsplit(client_id)
        host = parts.hostname
    except ValueError:
        return False
    if not host or parts.fragment or parts.username or parts.password:
        return False
    if not parts.path or parts.path == "/":
        return False
    if any(seg in {".", ".."} for seg in parts.path.split("/")):
        return False
    if parts.scheme == "https":
        return True
    return allow_loopback_http and parts.scheme == "http" and host in _LOOPBACK


async def fetch_client_metadata(
    client_id: str, *, limits: DevServerLimits, http: httpx2.AsyncClient
) -> DevClient:
    """Rules 2-4: fetch, bound and validate the document at ``client_id``."""
    try:
        with anyio.fail_after(limits.cimd_fetch_timeout_s):
            body = await _get(client_id, limits.max_cimd_document_bytes, http)
    except TimeoutError:
        raise CimdError("client metadata document fetch timed out") from None
    except httpx2.HTTPError:
        raise CimdError("client metadata document could not be fetched") from None
    try:
        doc = as_object(json.loads(body))
    except ValueError:
        raise CimdError("client metadata document is not JSON") from None
    if doc is None:
        raise CimdError("client metadata document is not a JSON object")
    return _client_from(client_id, doc)


async def _get(url: str, max_bytes: int, http: httpx2.AsyncClient) -> bytes:
    async with http.stream(
        "GET", url, headers={"accept": "application/json"}, follow_redirects=False
    ) as response:
        if response.status_code != 200:
            raise CimdError(f"client metadata document answered HTTP {response.status_code}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise CimdError(f"client metadata document exceeds {max_bytes} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


def _client_from(client_id: str, doc: JSON) -> DevClient:
    """Rule 3."""
    if doc.get("client_id") != client_id:
        raise CimdError("client_id in the metadata document does not equal its URL")
    uris = as_list(doc.get("redirect_uris"))
    if not uris:
        raise CimdError("metadata document needs a non-empty redirect_uris list")
    redirect_uris: list[str] = []
    for uri in uris:
        if not isinstance(uri, str) or not _absolute(uri):
            raise CimdError("redirect_uris must be absolute URLs without fragments")
        redirect_uris.append(uri)
    if "client_secret" in doc:
        raise CimdError("a client metadata document must not carry a client_secret")
    method = doc.get("token_endpoint_auth_method", "none")
    jwks = as_object(doc.get("jwks"))
    if method == "private_key_jwt":
        if jwks is None:
            raise CimdError("private_key_jwt needs an inline jwks in the document")
    elif method != "none":
        raise CimdError("token_endpoint_auth_method must be none or private_key_jwt")
    grant_types = as_list(doc.get("grant_types", ["authorization_code"]))
    if grant_types is None or not all(isinstance(g, str) for g in grant_types):
        raise CimdError("grant_types must be a list of strings")
    scope = doc.get("scope")
    return DevClient(
        client_id=client_id,
        redirect_uris=redirect_uris,
        grant_types=[g for g in grant_types if g != "client_credentials"],
        token_endpoint_auth_method=method,
        scope=scope if isinstance(scope, str) else None,
        jwks=jwks,
        metadata=doc,
    )


def _absolute(uri: str) -> bool:
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    return bool(parts.scheme and (parts.netloc or parts.scheme not in {"http", "https"})) and (
        not parts.fragment and "#" not in uri
    )
