"""DPoP proofs (RFC 9449 §4.2, §4.3; SEP-1932), checked field by field with PyJWT and
an independent RFC 7638 thumbprint."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from joserfc.jwk import ECKey, OctKey

from mcpkit.ext.auth.client.dpop import DPOP_ALGORITHMS, DPoPKey, access_token_hash, htu

pytestmark = pytest.mark.lowest


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rfc7638(jwk: dict[str, Any]) -> str:
    """RFC 7638 §3: SHA-256 over the required members, sorted, no whitespace."""
    required = {
        "EC": ("crv", "kty", "x", "y"),
        "RSA": ("e", "kty", "n"),
        "OKP": ("crv", "kty", "x"),
    }
    members = {k: jwk[k] for k in required[jwk["kty"]]}
    canonical = json.dumps(members, sort_keys=True, separators=(",", ":"))
    return b64url(hashlib.sha256(canonical.encode()).digest())


def verify(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify ``proof`` with the key in its own ``jwk`` header, as a server does (§4.3)."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm=header["alg"])
    claims = jwt.decode(proof, key.key, algorithms=[header["alg"]])
    return header, claims


def test_default_key_is_p256_es256_and_header_carries_public_jwk_only() -> None:
    key = DPoPKey()
    header, _ = verify(key.proof("POST", "https://as.example/token"))
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert header["jwk"]["kty"] == "EC"
    assert header["jwk"]["crv"] == "P-256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # no "d", no "kid"


def test_token_request_proof_claims() -> None:
    key = DPoPKey()
    before = int(time.time())
    _, claims = verify(key.proof("post", "https://AS.example:8443/oauth/token?x=1#frag"))
    after = int(time.time())
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://as.example:8443/oauth/token"  # no query, no fragment
    assert before <= claims["iat"] <= after
    assert isinstance(claims["jti"], str)
    assert len(claims["jti"]) >= 16
    assert "ath" not in claims
    assert "nonce" not in claims


def test_resource_request_proof_has_ath_of_the_access_token() -> None:
    key = DPoPKey()
    token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.sig"
    # kind-ok: fixed-port a DPoP htu claim, never connected
    _, claims = verify(key.proof("GET", "http://127.0.0.1:9000/mcp", access_token=token))
    assert claims["ath"] == b64url(hashlib.sha256(token.encode("ascii")).digest())
    assert claims["ath"] == access_token_hash(token)
    assert claims["htm"] == "GET"


def test_nonce_is_included_only_when_given() -> None:
    key = DPoPKey()
    _, with_nonce = verify(key.proof("POST", "https://as.example/token", nonce="n-123"))
    _, without = verify(key.proof("POST", "https://as.example/token"))
    assert with_nonce["nonce"] == "n-123"
    assert "nonce" not in without


def test_every_proof_has_a_fresh_jti() -> None:
    key = DPoPKey()
    jtis = {
        verify(key.proof("POST", "https://rs.example/mcp", access_token="t"))[1]["jti"]
        for _ in range(200)
    }
    assert len(jtis) == 200


def test_jkt_is_the_rfc7638_thumbprint_of_the_header_key() -> None:
    key = DPoPKey()
    header, _ = verify(key.proof("POST", "https://as.example/token"))
    assert key.jkt == rfc7638(header["jwk"])
    assert key.jkt == rfc7638(key.public_jwk)


@pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
@pytest.mark.parametrize("alg", DPOP_ALGORITHMS)
def test_each_supported_algorithm_signs_verifiable_proofs(alg: str) -> None:
    key = DPoPKey.generate(alg)
    header, claims = verify(key.proof("DELETE", "https://rs.example/mcp", access_token="tok"))
    assert header["alg"] == alg
    assert "d" not in header["jwk"]
    assert "p" not in header["jwk"]
    assert key.jkt == rfc7638(header["jwk"])
    assert claims["htm"] == "DELETE"


def test_headers_use_the_dpop_scheme_and_bind_the_proof_to_the_token() -> None:
    key = DPoPKey()
    headers = key.headers("POST", "https://rs.example/mcp", "the-token")
    assert headers["Authorization"] == "DPoP the-token"
    _, claims = verify(headers["DPoP"])
    assert claims["ath"] == access_token_hash("the-token")


def test_loads_pem_private_keys() -> None:
    native = ec.generate_private_key(ec.SECP384R1())
    pem = native.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    key = DPoPKey.from_pem(pem)
    assert key.alg == "ES384"
    proof = key.proof("POST", "https://as.example/token")
    # Verified with the loaded key's own public half, not the header: same key pair.
    claims = jwt.decode(proof, native.public_key(), algorithms=["ES384"])
    assert claims["htm"] == "POST"

    rsa_native = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_pem = rsa_native.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.BestAvailableEncryption(b"pw"),
    )
    rsa_key = DPoPKey.from_pem(rsa_pem, password="pw", alg="PS256")
    assert rsa_key.alg == "PS256"
    jwt.decode(rsa_key.proof("GET", "https://x/"), rsa_native.public_key(), algorithms=["PS256"])


def test_loads_private_jwk() -> None:
    private = ECKey.generate_key("P-256").as_dict(private=True)
    key = DPoPKey.from_jwk(private)
    assert key.jkt == rfc7638(private)


def test_refuses_keys_that_cannot_sign_proofs() -> None:
    public_only = ECKey.import_key(ECKey.generate_key("P-256").as_dict(private=False))
    with pytest.raises(ValueError, match="private part"):
        DPoPKey(public_only)
    with pytest.raises(ValueError, match="OctKey cannot sign"):
        DPoPKey(OctKey.generate_key(256))
    with pytest.raises(ValueError, match="HS256"):
        DPoPKey(alg="HS256")
    with pytest.raises(ValueError, match="not supported"):
        DPoPKey.generate("ES256K")


def test_repr_shows_no_key_material() -> None:
    key = DPoPKey()
    private_d = key._key.as_dict(private=True)["d"]  # pyright: ignore[reportPrivateUsage]
    assert private_d not in repr(key)
    assert key.jkt in repr(key)


def test_htu_drops_query_and_fragment_and_keeps_the_path() -> None:
    assert htu("HTTPS://Example.COM/a/b?c=d#e") == "https://example.com/a/b"
    # kind-ok: fixed-port parsed only, never served
    assert htu("http://127.0.0.1:8080") == "http://127.0.0.1:8080/"
