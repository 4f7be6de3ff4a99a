"""DPoP proofs at the resource server (RFC 9449), with joserfc.

Sources: RFC 9449 §4.2 (proof fields), §4.3 (checking a proof), §6.1 (``cnf.jkt``),
§7.1 (the ``DPoP`` scheme), §8-9 (server nonces), §11.1 (replay); RFC 7638 (JWK
thumbprints); SEP-1932 (stateless replay protection: an ``iat`` window of +/- 5
minutes, optionally nonces sealing a timestamp with an AEAD).

Rules:
1. Exactly one ``DPoP`` header, at most ``max_dpop_proof_bytes`` long, holding a
   compact JWS whose header has ``typ: dpop+jwt``, an ``alg`` from the allow-list and a
   public ``jwk`` (a private member is refused); the signature verifies with that key.
2. Claims: ``jti`` (a non-empty string), ``htm`` equal to the request method, ``htu``
   equal to the request URL without query and fragment (scheme and host compared
   case-insensitively, default ports dropped, trailing slash ignored), ``iat`` a finite
   number (JSON parsers admit ``NaN``, which no window comparison refuses) within
   ``iat_window_s`` of now, ``ath`` equal to the base64url SHA-256 of the access token.
3. The proof key's RFC 7638 thumbprint must equal the token's ``cnf.jkt``.
4. Nonces (optional): a nonce is ``base64url(12-byte IV || AES-GCM(issue time))`` under
   ``nonce_secret``, so any replica with the secret checks it without state; a proof
   without a nonce, or with one that does not open or is older than ``nonce_ttl_s``,
   is refused with ``use_dpop_nonce`` and a fresh nonce in ``DPoP-Nonce``.
5. The optional replay cache remembers ``(thumbprint, jti)`` (as its SHA-256 digest:
   32 bytes whatever the proof says) until the proof's ``iat``
   leaves the window, at most ``max_dpop_jti`` entries (the oldest go first); a second
   use is ``invalid_dpop_proof``.
6. Every failure is :class:`~.errors.InvalidToken` with ``error="invalid_dpop_proof"``
   (or ``use_dpop_nonce``) and a fixed description; no proof or token text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import struct
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwk, jws
from joserfc.errors import JoseError

from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.settings import DPoPSettings, ResourceServerLimits

__all__ = ["DPoPVerifier", "access_token_hash", "normalise_htu"]

_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "k", "oth"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def access_token_hash(token: str) -> str:
    """``ath``: base64url (unpadded) SHA-256 of the access token (RFC 9449 §4.2)."""
    return _b64(hashlib.sha256(token.encode()).digest())


def normalise_htu(url: str) -> str:
    """Rule 2: ``url`` without query and fragment, scheme and host lower-cased, the
    default port and a trailing slash dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    default = ":443" if scheme == "https" else ":80" if scheme == "http" else None
    if default is not None and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))


def _fail(description: str) -> InvalidToken:
    return InvalidToken(description, error="invalid_dpop_proof", dpop=True)


class DPoPVerifier:
    """Checks DPoP proofs (rules 1-6) for one protected resource."""

    def __init__(self, settings: DPoPSettings, limits: ResourceServerLimits) -> None:
        self.settings = settings
        self.limits = limits
        self.algorithms = tuple(a for a in settings.algorithms if a != "none")
        secret = settings.nonce_secret or os.urandom(32)
        if len(secret) not in (16, 24, 32):
            raise ValueError("DPoPSettings.nonce_secret must be 16, 24 or 32 bytes")
        self._aead = AESGCM(secret)
        # kind-ok: unbounded-table max_dpop_jti entries, keys 32-byte digests
        self._seen: OrderedDict[bytes, float] = OrderedDict()

    # -- nonces (rule 4) -----------------------------------------------------------
    def new_nonce(self) -> str:
        iv = os.urandom(12)
        return _b64(iv + self._aead.encrypt(iv, struct.pack(">d", time.time()), b"dpop-nonce"))

    def _nonce_ok(self, nonce: Any) -> bool:
        if not isinstance(nonce, str) or len(nonce) > 256:
            return False
        try:
            raw = base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))
            (issued,) = struct.unpack(">d", self._aead.decrypt(raw[:12], raw[12:], b"dpop-nonce"))
        except (ValueError, InvalidTag, struct.error):
            return False
        age = time.time() - issued
        return -5.0 <= age <= self.settings.nonce_ttl_s

    # -- proofs ----------------------------------------------------------------------
    def verify(
        self,
        proofs: Sequence[str],
        *,
        method: str,
        urls: Sequence[str],
        access_token: str,
        jkt: str | None,
    ) -> str:
        """Rules 1-5; returns the proof key's thumbprint. ``urls``: the request URLs the
        server answers to (as seen, and the configured public one)."""
        if len(proofs) != 1:
            raise _fail("exactly one DPoP proof is required")
        proof = proofs[0]
        if len(proof) > self.limits.max_dpop_proof_bytes:
            raise _fail("DPoP proof too large")
        header, claims, key = self._signed(proof)
        del header
        thumbprint = key.thumbprint()
        self._claims(claims, method, urls, access_token)
        if jkt is None or thumbprint != jkt:
            raise _fail("the proof key does not match the token's binding")
        if self.settings.nonces and not self._nonce_ok(claims.get("nonce")):
            raise InvalidToken("a fresh DPoP nonce is required", error="use_dpop_nonce", dpop=True)
        if self.settings.replay_cache:
            self._replay(thumbprint, claims)
        return thumbprint

    def _signed(self, proof: str) -> tuple[dict[str, Any], JSON, Any]:
        """Rule 1: the verified header, claims and public key."""
        try:
            header = jws.extract_compact(proof.encode()).headers()
        except (JoseError, ValueError):
            raise _fail("malformed DPoP proof") from None
        if header.get("typ") != "dpop+jwt":
            raise _fail("wrong DPoP proof type")
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise _fail("DPoP proof algorithm not allowed")
        key_doc = as_object(header.get("jwk"))
        if key_doc is None:
            raise _fail("the DPoP proof has no key")
        if _PRIVATE_MEMBERS & set(key_doc):
            raise _fail("the DPoP proof key must be public")
        try:
            key = jwk.JWKRegistry.import_key(key_doc)
            if key.is_private:
                raise _fail("the DPoP proof key must be public")
            verified = jws.deserialize_compact(proof, key, algorithms=[alg])
            claims = as_object(json.loads(verified.payload))
        except InvalidToken:
            raise
        except (JoseError, ValueError, TypeError, RecursionError):
            raise _fail("bad DPoP proof signature") from None
        if claims is None:
            raise _fail("malformed DPoP proof")
        return header, claims, key

    def _claims(
        self, claims: dict[str, Any], method: str, urls: Sequence[str], access_token: str
    ) -> None:
        """Rule 2."""
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise _fail("the DPoP proof has no jti")
        if claims.get("htm") != method:
            raise _fail("the DPoP proof is for another HTTP method")
        htu = claims.get("htu")
        if not isinstance(htu, str) or normalise_htu(htu) not in {normalise_htu(u) for u in urls}:
            raise _fail("the DPoP proof is for another URL")
        iat = claims.get("iat")
        if not isinstance(iat, int | float) or isinstance(iat, bool) or not math.isfinite(iat):
            raise _fail("the DPoP proof has no iat")
        if abs(time.time() - iat) > self.settings.iat_window_s:
            raise _fail("the DPoP proof is too old or from the future")
        if claims.get("ath") != access_token_hash(access_token):
            raise _fail("the DPoP proof is not for this access token")

    def _replay(self, thumbprint: str, claims: dict[str, Any]) -> None:
        """Rule 5."""
        now = time.time()
        seen = self._seen
        while seen:
            oldest_key, until = next(iter(seen.items()))
            if until > now:
                break
            del seen[oldest_key]
        # a fixed-size digest: the proof's text is the client's choice (issue 25 §3)
        key = hashlib.sha256(f"{thumbprint} {claims['jti']}".encode()).digest()
        if key in seen:
            raise _fail("DPoP proof replayed")
        seen[key] = float(claims["iat"]) + self.settings.iat_window_s
        while len(seen) > self.limits.max_dpop_jti:
            seen.popitem(last=False)
