"""Keys, their JWKS on loopback and access tokens for the ``auth`` suite, from the
development authorization server of ``mcpkit-ext-auth``.

Rules:
1. One :class:`~mcpkit.ext.auth.devserver.DevAuthServer` per algorithm (``RS256``: RSA
   2048; ``ES256``: P-256; keys generated per run), used in-process for its signer only:
   tokens come from ``issue_token`` (RFC 9068: ``typ: at+jwt``, ``kid``; ``iss``, ``sub``,
   ``aud`` = the endpoint URL, ``client_id``, ``scope``, ``iat``, ``exp`` one hour ahead,
   longer than any measured run, a unique ``jti``).
2. The public key sets are served by a thread on 127.0.0.1 at ``/<alg>.json`` for the
   duration of the suite (what an identity provider's ``jwks_uri`` does); the measured
   server fetches its key set once from there.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcpkit.ext.auth.devserver import DevAuthServer

ISSUER = "https://issuer.bench.invalid"
ALGORITHMS = ("RS256", "ES256")


def signers() -> dict[str, DevAuthServer]:
    """Rule 1."""
    return {alg: DevAuthServer(issuer=ISSUER, alg=alg) for alg in ALGORITHMS}


def token(signer: DevAuthServer, audience: str) -> str:
    """Rule 1: a one-hour access token for ``audience``."""
    return signer.issue_token(scopes=["mcp"], audience=audience, expires_in_s=3600)


@contextlib.contextmanager
def jwks_server(by_alg: dict[str, DevAuthServer]) -> Iterator[str]:
    """Rule 2: serve ``/<alg>.json`` for each signer; yields the base URL."""
    documents = {f"/{alg}.json": json.dumps(s.jwks()).encode() for alg, s in by_alg.items()}

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
