"""Signing keys, their JWKS on loopback and access tokens for the ``auth`` suite.

Rules:
1. One key per algorithm (``RS256``: RSA 2048; ``ES256``: P-256), generated per run with
   joserfc; the public key set is served by a thread on 127.0.0.1 at ``/<alg>.json``
   for the duration of the suite (what an identity provider's ``jwks_uri`` does).
2. Tokens follow RFC 9068: header ``typ: at+jwt`` with the key's ``kid``; claims ``iss``,
   ``sub``, ``aud`` (the endpoint URL), ``client_id``, ``scope``, ``iat``, ``nbf``,
   ``exp`` (one hour: longer than any measured run) and a unique ``jti``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

ISSUER = "https://issuer.bench.invalid"
ALGORITHMS = ("RS256", "ES256")


class Signer:
    """Rule 1: a key for ``alg`` and its public JWK."""

    def __init__(self, alg: str) -> None:
        params = {"kid": f"bench-{alg.lower()}", "alg": alg, "use": "sig"}
        if alg == "RS256":
            self.key: Any = RSAKey.generate_key(2048, parameters=params)
        elif alg == "ES256":
            self.key = ECKey.generate_key("P-256", parameters=params)
        else:
            raise ValueError(f"unsupported algorithm {alg}")
        self.alg, self.kid = alg, params["kid"]

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.key.as_dict(private=False)]}

    def token(self, audience: str, lifetime_s: float = 3600.0) -> str:
        """Rule 2."""
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": "bench-user",
            "aud": audience,
            "client_id": "bench-client",
            "scope": "mcp",
            "iat": now,
            "nbf": now,
            "exp": now + int(lifetime_s),
            "jti": uuid.uuid4().hex,
        }
        header = {"alg": self.alg, "kid": self.kid, "typ": "at+jwt"}
        return jwt.encode(header, claims, self.key, algorithms=[self.alg])


@contextlib.contextmanager
def jwks_server(signers: dict[str, Signer]) -> Iterator[str]:
    """Rule 1: serve ``/<alg>.json`` for each signer; yields the base URL."""
    documents = {f"/{alg}.json": json.dumps(s.jwks()).encode() for alg, s in signers.items()}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = documents.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
