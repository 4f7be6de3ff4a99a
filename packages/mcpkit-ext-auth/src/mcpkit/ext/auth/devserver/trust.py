"""Trusted workload identity issuers and their keys (SEP-1933), for the JWT-bearer grant
of :mod:`.workload`.

Rules:
1. Only assertions whose ``iss`` is one of ``trusted_issuers`` are considered. An
   issuer's keys come from its OpenID configuration
   (``<iss>/.well-known/openid-configuration``, whose ``issuer`` must equal ``iss``) and
   its ``jwks_uri``, fetched with httpx2 within ``limits.cimd_fetch_timeout_s`` and
   ``limits.max_cimd_document_bytes`` each, and kept ``limits.cimd_ttl_s`` (at most one
   entry per trusted issuer). A trusted issuer can instead be given its key set directly.
2. An assertion that cannot be read is left to the grant, which refuses it with its own
   message; keys that cannot be had are an ``error_description``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, cast

import anyio
import httpx2
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, KeySetSerialization

from mcpkit.core.shapes import JSON, as_object, as_str
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.store import ExpiringStore

__all__ = ["JWT_BEARER", "Limited", "TrustedIssuers"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""The RFC 7523 section 2.1 grant type."""


class Limited(Protocol):
    """What :class:`TrustedIssuers` reads of its server: the bounds."""

    @property
    def limits(self) -> DevServerLimits: ...


class TrustedIssuers:
    """Rule 1: the trusted issuers and their key sets (fetched ones cached, bounded)."""

    def __init__(self, dev: Limited, issuers: Mapping[str, Mapping[str, Any] | None]):
        self.dev = dev
        self.static = {iss: dict(jwks) for iss, jwks in issuers.items() if jwks is not None}
        self.issuers = frozenset(issuers)
        self._fetched: ExpiringStore[KeySet] = ExpiringStore(
            max_entries=max(len(self.issuers), 1), ttl_s=dev.limits.cimd_ttl_s
        )

    def keys(self, issuer: str) -> KeySet | None:
        if issuer in self.static:
            return _key_set(self.static[issuer])
        return self._fetched.get(issuer)

    async def prepare(self, assertion: str) -> str | None:
        """Rule 2: fetch the keys of the assertion's issuer when trusted and not held; an
        ``error_description`` when they cannot be had, else ``None``."""
        try:
            payload: object = json.loads(jws.extract_compact(assertion.encode()).payload)
        except (JoseError, ValueError):
            return None  # the grant refuses it with its own message
        issuer = as_str((as_object(payload) or {}).get("iss"))
        if issuer is None or issuer not in self.issuers or self.keys(issuer):
            return None
        try:
            with anyio.fail_after(self.dev.limits.cimd_fetch_timeout_s):
                async with httpx2.AsyncClient() as http:
                    config = await self._json(
                        http, issuer.rstrip("/") + "/.well-known/openid-configuration"
                    )
                    jwks_uri = as_str(config.get("jwks_uri"))
                    if config.get("issuer") != issuer or jwks_uri is None:
                        return "the issuer's OpenID configuration does not match it"
                    jwks = await self._json(http, jwks_uri)
            keys = _key_set(jwks)
        except (TimeoutError, httpx2.HTTPError, ValueError, JoseError):
            return "the issuer's keys could not be fetched"
        self._fetched.put(issuer, keys)
        return None

    async def _json(self, http: httpx2.AsyncClient, url: str) -> JSON:
        limit = self.dev.limits.max_cimd_document_bytes
        async with http.stream("GET", url, follow_redirects=False) as response:
            if response.status_code != 200:
                raise ValueError(url)
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise ValueError(url)
        value = as_object(json.loads(body))
        if value is None:
            raise ValueError(url)
        return value


def _key_set(jwks: Mapping[str, Any]) -> KeySet:
    """joserfc's key set of a JWKS document (joserfc checks its members)."""
    return KeySet.import_key_set(cast(KeySetSerialization, jwks))
