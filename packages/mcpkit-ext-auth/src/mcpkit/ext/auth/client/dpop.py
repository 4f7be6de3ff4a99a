"""DPoP proofs for the client (RFC 9449; MCP profile SEP-1932, extension
``io.modelcontextprotocol/auth/dpop``).

A :class:`DPoPKey` holds one asymmetric key pair (EC P-256 / ES256 unless told
otherwise, generated or loaded) and signs a fresh proof JWT for each HTTP request, with
joserfc. The provider asks it for proofs on token requests (to get a DPoP-bound token,
RFC 9449 §5) and on every request to the MCP server (§7.1).

Rules:
1. Proof header: ``typ`` = ``dpop+jwt``, ``alg`` = the key's algorithm (asymmetric
   only), ``jwk`` = the public key and nothing private (RFC 9449 §4.2).
2. Proof claims: ``jti`` unique per proof (128 random bits), ``htm`` = the request
   method, ``htu`` = the request URI without query and fragment, ``iat`` = now (whole
   seconds). ``ath`` = base64url(SHA-256(access token)) whenever an access token is
   presented (§4.2, §7.1); ``nonce`` when the server supplied one (§8, §9).
3. ``jkt`` is the RFC 7638 SHA-256 thumbprint of the public key: the value an
   authorization server binds the token to (``cnf.jkt``, §6.1) and the value of the
   ``dpop_jkt`` authorization-request parameter (§10).
4. Server nonces are the caller's: the provider remembers each ``DPoP-Nonce`` per
   origin and passes it to :meth:`DPoPKey.proof`, retrying once on a ``use_dpop_nonce``
   challenge (token endpoint 400, §8; resource 401, §9).
5. The private key never leaves the holder: :attr:`DPoPKey.public_jwk` has no private
   members, and ``repr`` shows only the algorithm and ``jkt``.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc import jwt
from joserfc.jwk import ECKey, Key, OKPKey, RSAKey, import_key

__all__ = [
    "DPOP_ALGORITHMS",
    "DPoPKey",
    "access_token_hash",
    "default_algorithm",
    "htu",
    "load_private_key",
]

DPOP_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA")
"""The proof signing algorithms this holder can use (asymmetric only, RFC 9449 §4.2)."""

_CURVE_ALG = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


def access_token_hash(access_token: str) -> str:
    """The ``ath`` claim: base64url (no padding) of SHA-256 over the ASCII access
    token (RFC 9449 §4.2)."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def htu(url: str) -> str:
    """The ``htu`` claim for ``url``: the URI without query and fragment, scheme and
    host lowercased (RFC 9449 §4.2, §4.3 step 9)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


def default_algorithm(key: Key) -> str:
    """The natural JWS algorithm of ``key``: ES256/ES384/ES512 by EC curve, RS256 for
    RSA, EdDSA for Ed25519. Raises ``ValueError`` for other keys."""
    if isinstance(key, ECKey):
        alg = _CURVE_ALG.get(key.curve_name)
        if alg is None:
            raise ValueError(
                f"DPoP: EC curve {key.curve_name!r} is not supported (P-256, P-384, P-521)"
            )
        return alg
    if isinstance(key, RSAKey):
        return "RS256"
    if isinstance(key, OKPKey) and key.curve_name == "Ed25519":
        return "EdDSA"
    raise ValueError(
        f"DPoP: a {type(key).__name__} cannot sign proofs; use an EC, RSA or Ed25519 key"
    )


class DPoPKey:
    """The client's DPoP key pair and proof factory (RFC 9449; SEP-1932).

    ``DPoPKey()`` generates an EC P-256 key (ES256); :meth:`generate`,
    :meth:`from_pem` and :meth:`from_jwk` make or load others. ``alg`` defaults to
    the key's natural algorithm (ES256/ES384/ES512 by curve, RS256, EdDSA).

    Raises ``ValueError`` for a public-only key, a symmetric key, or an ``alg`` not in
    :data:`DPOP_ALGORITHMS`.
    """

    def __init__(
        self,
        key: Key | None = None,
        *,
        alg: str | None = None,
    ) -> None:
        if key is None:
            key = ECKey.generate_key("P-256")
        if not key.is_private:
            raise ValueError("DPoP: the key must include its private part to sign proofs")
        alg = alg or default_algorithm(key)
        if alg not in DPOP_ALGORITHMS:
            raise ValueError(
                f"DPoP: alg {alg!r} is not supported; use one of {', '.join(DPOP_ALGORITHMS)}"
            )
        self._key = key
        self.alg = alg
        """The JWS algorithm of every proof, e.g. ``"ES256"``."""
        self.public_jwk: dict[str, Any] = dict(key.as_dict(private=False))
        """The public key as a JWK (the proof's ``jwk`` header), without ``kid``/``d``."""
        self.public_jwk.pop("kid", None)
        self.jkt: str = key.thumbprint()
        """RFC 7638 SHA-256 thumbprint of the public key (rule 3)."""

    @classmethod
    def generate(cls, alg: str = "ES256") -> DPoPKey:
        """A fresh key pair for ``alg`` (ES256/ES384/ES512: EC; RS256/PS256: RSA 2048;
        EdDSA: Ed25519)."""
        key: Key
        if alg.startswith("ES"):
            curve = {v: k for k, v in _CURVE_ALG.items()}.get(alg)
            if curve is None:
                raise ValueError(f"DPoP: alg {alg!r} is not supported")
            key = ECKey.generate_key(curve)
        elif alg in ("RS256", "PS256"):
            key = RSAKey.generate_key(2048)
        elif alg == "EdDSA":
            key = OKPKey.generate_key("Ed25519")
        else:
            raise ValueError(
                f"DPoP: alg {alg!r} is not supported; use one of {', '.join(DPOP_ALGORITHMS)}"
            )
        return cls(key, alg=alg)

    @classmethod
    def from_pem(
        cls, pem: str | bytes, *, password: str | None = None, alg: str | None = None
    ) -> DPoPKey:
        """Load a PEM private key (PKCS#8 or traditional; EC, RSA or Ed25519)."""
        return cls(load_private_key(pem, password=password), alg=alg)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any], *, alg: str | None = None) -> DPoPKey:
        """Load a private JWK (a dict with ``kty``, ``d`` ...)."""
        return cls(import_key(dict(jwk)), alg=alg or jwk.get("alg"))

    def __repr__(self) -> str:
        return f"DPoPKey(alg={self.alg!r}, jkt={self.jkt!r})"

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A fresh DPoP proof JWT (compact JWS) for one request (rules 1-2).

        ``method`` is the HTTP method (``htm``), ``url`` the request URI (``htu``
        drops its query and fragment). ``access_token`` adds ``ath`` (resource
        requests); ``nonce`` adds ``nonce`` (rule 4)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key, algorithms=[self.alg])

    def headers(self, method: str, url: str, access_token: str) -> dict[str, str]:
        """The two headers of a DPoP-protected resource request: ``Authorization: DPoP
        <token>`` and ``DPoP: <proof with ath>`` (RFC 9449 §7.1)."""
        return {
            "Authorization": f"DPoP {access_token}",
            "DPoP": self.proof(method, url, access_token=access_token),
        }


def load_private_key(pem: str | bytes, *, password: str | None = None) -> Key:
    """A joserfc private key from PEM text (EC, RSA or Ed25519), its type read from
    the PEM itself. Raises ``ValueError`` for anything else."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    data = pem.encode("ascii") if isinstance(pem, str) else pem
    native = load_pem_private_key(data, password.encode() if password else None)
    if isinstance(native, ec.EllipticCurvePrivateKey):
        return ECKey.import_key(native)
    if isinstance(native, rsa.RSAPrivateKey):
        return RSAKey.import_key(native)
    if isinstance(native, ed25519.Ed25519PrivateKey):
        return OKPKey.import_key(native)
    raise ValueError(
        f"unsupported private key type {type(native).__name__}; use EC, RSA or Ed25519"
    )
