"""DPoP proofs at the token endpoint (RFC 9449 section 4.3), verified with joserfc.

Rules:
1. One ``DPoP`` header at most; a proof longer than ``limits.max_dpop_proof_bytes`` is
   refused.
2. The proof is a JWS with header ``typ: dpop+jwt``, an asymmetric ``alg`` from
   :data:`~mcpkit.ext.auth.devserver.app.DPOP_ALGS`, and a public ``jwk`` (no private
   members) whose signature verifies. RSA keys fit: the header may fill the proof bound.
3. Claims: ``jti`` (a string, not seen before within the ``iat`` window), ``htm`` equal to
   the request method, ``htu`` equal to the token endpoint URL (query and fragment
   ignored, section 4.3 point 9), ``iat`` within ``limits.dpop_iat_window_s`` of now.
4. A verified proof yields its key's RFC 7638 thumbprint (``jkt``), which the issued
   token carries as ``cnf.jkt``. Any failure is ``400 invalid_dpop_proof``.
5. With server nonces on (``require_dpop_nonce``, RFC 9449 section 8), a proof must carry
   the current ``nonce`` (or the one before it; a nonce lives ``limits.dpop_nonce_ttl_s``),
   else :class:`DpopNonceRequired` (``400 use_dpop_nonce`` with a ``DPoP-Nonce`` header).
   The nonce is checked before the ``jti`` is recorded, so the retry is not a replay.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwk, jws
from joserfc.errors import JoseError

from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.store import ExpiringStore

__all__ = ["DpopError", "DpopNonceRequired", "DpopVerifier"]

_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


class DpopError(Exception):
    """Rule 4: the proof is refused; ``str(error)`` is the ``error_description``."""


class DpopNonceRequired(DpopError):
    """Rule 5: the proof lacks the current server nonce."""


class DpopVerifier:
    """Verifies proofs for one token endpoint; keeps the seen ``jti`` values (bounded)."""

    def __init__(
        self, limits: DevServerLimits, algorithms: Sequence[str], *, nonces: bool = False
    ) -> None:
        self.limits = limits
        self.algorithms = list(algorithms)
        self.nonces = nonces
        # joserfc's default 512-byte header bound is below an RSA-2048 ``jwk`` header;
        # the proof's own bound (rule 1) covers it.
        self._registry = jws.JWSRegistry(algorithms=self.algorithms)
        self._registry.max_header_length = limits.max_dpop_proof_bytes
        self._nonce = (secrets.token_urlsafe(16), time.monotonic())
        self._previous_nonce = ""
        self._seen: ExpiringStore[bool] = ExpiringStore(
            max_entries=10 * limits.max_codes, ttl_s=2 * limits.dpop_iat_window_s
        )

    def verify(self, proofs: Sequence[str], *, method: str, url: str) -> str:
        """Rules 1-4: the ``jkt`` of the single proof in ``proofs``; :class:`DpopError`."""
        if len(proofs) != 1:
            raise DpopError("exactly one DPoP header is allowed")
        proof = proofs[0]
        if len(proof) > self.limits.max_dpop_proof_bytes:
            raise DpopError("DPoP proof too large")
        key, claims = self._verified(proof)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise DpopError("DPoP proof has no jti")
        if claims.get("htm") != method:
            raise DpopError("DPoP htm does not match the request method")
        htu = claims.get("htu")
        if not isinstance(htu, str) or _strip(htu) != _strip(url):
            raise DpopError("DPoP htu does not match the token endpoint")
        iat = claims.get("iat")
        if not isinstance(iat, int | float) or isinstance(iat, bool):
            raise DpopError("DPoP proof has no iat")
        if abs(time.time() - iat) > self.limits.dpop_iat_window_s:
            raise DpopError("DPoP iat outside the acceptable window")
        if self.nonces and claims.get("nonce") not in (self.nonce(), self._previous_nonce):
            raise DpopNonceRequired("a fresh DPoP nonce is required")
        thumbprint = key.thumbprint()
        seen_key = thumbprint + " " + jti
        if self._seen.get(seen_key):
            raise DpopError("DPoP proof replayed")
        self._seen.put(seen_key, True)
        return thumbprint

    def nonce(self) -> str:
        """Rule 5: the current server nonce (a new one every ``dpop_nonce_ttl_s``)."""
        value, since = self._nonce
        if time.monotonic() - since >= self.limits.dpop_nonce_ttl_s:
            self._previous_nonce = value
            self._nonce = (secrets.token_urlsafe(16), time.monotonic())
        return self._nonce[0]

    def _verified(self, proof: str) -> tuple[jwk.Key, JSON]:
        """Rule 2."""
        try:
            header = jws.extract_compact(proof.encode(), registry=self._registry).headers()
        except (JoseError, ValueError):
            raise DpopError("malformed DPoP proof") from None
        if header.get("typ") != "dpop+jwt":
            raise DpopError("DPoP proof typ must be dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DpopError("DPoP proof alg not supported")
        key_doc = as_object(header.get("jwk"))
        if key_doc is None or _PRIVATE_MEMBERS & set(key_doc):
            raise DpopError("DPoP proof needs a public jwk header")
        try:
            key = jwk.import_key(key_doc)
            verified = jws.deserialize_compact(proof, key, registry=self._registry)
            claims = as_object(json.loads(verified.payload))
        except (JoseError, ValueError, TypeError):
            raise DpopError("DPoP proof signature does not verify") from None
        if claims is None:
            raise DpopError("malformed DPoP proof")
        return key, claims


def _strip(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))
