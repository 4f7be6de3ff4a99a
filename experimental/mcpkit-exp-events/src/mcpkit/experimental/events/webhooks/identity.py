"""Server identity: optional asymmetric signing of webhook POSTs and its verification
(SEP-3415 §Webhook security "Server identity (optional)", Open Question 4; Standard
Webhooks "Signature scheme", asymmetric ``v1a``). Needs the ``identity`` extra
(``cryptography`` for ed25519, ``joserfc`` for the JWK set).

Server side (:class:`SigningKey`, :class:`ServerIdentity`):

1. An identity is one ed25519 signing key plus published-only public keys (the previous
   keys during a rotation grace period, or the next key before it starts signing). Every
   key has a ``kid``, by default its RFC 7638 thumbprint.
2. Configured on :class:`~.runtime.Webhooks` (``identity=``), every POST it makes (event
   deliveries and their retries, ``gap`` and ``terminated`` envelopes, verification
   challenges) carries ``v1a,`` + base64 of the ed25519 signature over
   ``webhook-id.webhook-timestamp.body`` (the bytes the ``v1,`` HMAC covers), after the
   ``v1,`` signatures in ``webhook-signature`` (space separated, Standard Webhooks
   multi-signature): receivers that do not enforce server identity ignore it.
3. The public keys (signing key first) are published as a JWK set (``kty: OKP``,
   ``crv: Ed25519``, ``kid``, ``use: sig``, ``alg: EdDSA``; never a private member) at
   ``/.well-known/mcp-webhook-jwks.json`` on the MCP server's HTTP origin, through core's
   ``Server.add_http_routes`` (the SEP's standalone document; it is not the OAuth
   ``jwks_uri``), with ``Cache-Control: public, max-age=<max_age_s>``.
4. Rotation (:meth:`ServerIdentity.rotate`): the new key signs at once, the old one's
   public key stays published. Keep it published for longer than receivers cache the
   document (``max_age_s``) plus the longest retry window, then drop it.

Receiver side (:class:`ServerKeys`, :func:`fetch_server_keys`):

5. Trusted keys come from a JWK set the operator supplies, or are fetched from the MCP
   server's own origin (the one the client connects to for MCP): ``https`` only, a GET
   of ``/.well-known/mcp-webhook-jwks.json``, no redirects, no proxy from the
   environment, at most ``max_jwks_bytes`` read, ``timeout_s`` in all. A key is never
   taken from a delivery or challenge (body or header): that would be trust on first use.
6. Only ``OKP``/``Ed25519`` public keys are used (other keys are skipped); a document
   with more than ``max_keys`` of them is refused (``ValueError``) and the keys held
   before stay.
7. A delivery verifies when one of its ``v1a,`` signatures (at most ``max_signatures``
   examined) verifies under one of the trusted keys. When none does and the keys come
   from origins, they are fetched again (at most once per ``min_refresh_s``) and the
   check runs once more, so a rotation is picked up without a restart.
8. Private keys never reach logs or ``repr``.
9. Origins are fetched concurrently and each on its own (its own ``timeout_s``, its own
   ``max_keys``): an origin that fails (unreachable, slow, not a JWK set, nested too
   deeply to parse, above ``max_keys``) keeps the keys it gave before and never holds
   back another origin's update, so one trusted server cannot stop another's rotation
   from being picked up.
10. Keys are scoped to their server where the receiver knows it: a delivery on a route
    the receiver pinned to an MCP server (:meth:`~.receiver.WebhookReceiver.pin`, done
    by :func:`~.client.subscribe_webhook`) whose origin is one of ``origins`` verifies
    only under the keys fetched from that origin and the operator's ``jwks``; another
    trusted server's key does not, so a trusted server that learns a subscription's
    HMAC secret still cannot sign for another server (the SEP's "keep protection if an
    HMAC secret leaks"). Other routes verify under every trusted key.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import ssl
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio
import httpx2
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, OKPKey
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.webhooks.signing import signed_content
from mcpkit.experimental.events.wire import JWKS_PATH, SIGNATURE_V1A

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = [
    "ServerIdentity",
    "ServerKeys",
    "SigningKey",
    "fetch_server_keys",
    "jwks_url",
]

logger = logging.getLogger("mcpkit.experimental.events.webhooks")
_CURVE = "Ed25519"


def _okp(key: OKPKey, kid: str | None) -> OKPKey:
    if key.curve_name != _CURVE:
        raise ValueError(f"a webhook signing key must be ed25519, not {key.curve_name}")
    params: JSON = {"use": "sig", "alg": "EdDSA"}
    if kid is not None:
        params["kid"] = kid
    elif key.kid is not None:
        params["kid"] = key.kid
    out = OKPKey.import_key(key.raw_value, cast(Any, params))
    out.ensure_kid()
    return out


class SigningKey:
    """One ed25519 key with its ``kid`` (rule 1); private unless built from a public JWK."""

    def __init__(self, key: OKPKey, kid: str | None = None) -> None:
        self._key = _okp(key, kid)

    @classmethod
    def generate(cls, kid: str | None = None) -> SigningKey:
        """A fresh key (``kid`` defaults to its RFC 7638 thumbprint)."""
        return cls(OKPKey.generate_key(_CURVE), kid)

    @classmethod
    def from_pem(
        cls, pem: bytes | str, kid: str | None = None, password: bytes | None = None
    ) -> SigningKey:
        """From a PEM (PKCS#8 private or SubjectPublicKeyInfo public) ed25519 key.
        Raises ``ValueError``."""
        try:
            return cls(OKPKey.import_key(pem, password=password), kid)
        except (JoseError, TypeError) as exc:
            raise ValueError(f"not an ed25519 PEM key: {type(exc).__name__}") from None

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any], kid: str | None = None) -> SigningKey:
        """From an OKP/Ed25519 JWK (with ``d`` for a private key). Raises ``ValueError``."""
        if jwk.get("kty") != "OKP" or jwk.get("crv") != _CURVE:
            raise ValueError("not an OKP Ed25519 JWK")
        try:
            return cls(OKPKey.import_key(cast(Any, dict(jwk))), kid)
        except (JoseError, TypeError, binascii.Error) as exc:
            raise ValueError(f"not an ed25519 JWK: {type(exc).__name__}") from None

    @classmethod
    def load(cls, path: str | Path, kid: str | None = None) -> SigningKey:
        """From a file holding a PEM key or a JWK (JSON). Raises ``ValueError``."""
        data = Path(path).read_bytes()
        if data.lstrip().startswith(b"{"):
            return cls.from_jwk(json.loads(data), kid)
        return cls.from_pem(data, kid)

    @property
    def kid(self) -> str:
        return str(self._key.kid)

    @property
    def okp(self) -> OKPKey:
        """The key as a ``joserfc`` JWK."""
        return self._key

    @property
    def is_private(self) -> bool:
        return self._key.is_private

    def private_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (store it as a secret)."""
        return self._key.as_pem(private=True)

    def public_jwk(self) -> JSON:
        """Rule 3: the public JWK (``kty``, ``crv``, ``x``, ``kid``, ``use``, ``alg``)."""
        return dict(self._key.as_dict(private=False))

    def sign(self, content: bytes) -> str:
        """Rule 2: ``v1a,`` + base64 of the ed25519 signature of ``content``."""
        private = self._key.private_key
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError(f"key {self.kid} is public only: it cannot sign")
        return f"{SIGNATURE_V1A}," + base64.b64encode(private.sign(content)).decode()

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r}, private={self.is_private})"


class ServerIdentity:
    """A server's webhook signing identity (rules 1-4). ``key`` signs; ``published``
    keys (their public part) are published too. ``max_age_s``: the document's cache
    lifetime."""

    def __init__(
        self,
        key: SigningKey,
        *,
        published: Sequence[SigningKey] = (),
        max_age_s: int = 300,
    ) -> None:
        if not key.is_private:
            raise ValueError("the signing key of a ServerIdentity must be a private key")
        self.key = key
        self.published = [k for k in published if k.kid != key.kid]
        self.max_age_s = max_age_s

    @classmethod
    def generate(cls, **options: Any) -> ServerIdentity:
        """An identity with a fresh key (fine for one process; replicas must share a key)."""
        return cls(SigningKey.generate(), **options)

    def rotate(self, new: SigningKey) -> None:
        """Rule 4: ``new`` signs from now on; the old key stays published."""
        if not new.is_private:
            raise ValueError("the new signing key must be a private key")
        old, self.key = self.key, new
        self.published = [old, *(k for k in self.published if k.kid not in (old.kid, new.kid))]

    def retire(self, kid: str) -> None:
        """Stop publishing the published-only key ``kid`` (after the grace period)."""
        self.published = [k for k in self.published if k.kid != kid]

    def sign(self, content: bytes) -> str:
        """Rule 2: the ``v1a,`` signature of ``content`` with the signing key."""
        return self.key.sign(content)

    def jwks(self) -> JSON:
        """Rule 3: the published JWK set, signing key first."""
        keys = KeySet([k.okp for k in self.keys()])
        return dict(keys.as_dict(private=False))

    def keys(self) -> list[SigningKey]:
        return [self.key, *self.published]

    async def _serve(self, request: Request) -> Response:
        return JSONResponse(
            self.jwks(), headers={"Cache-Control": f"public, max-age={self.max_age_s}"}
        )

    def routes(self, mcp_path: str = "/mcp") -> list[BaseRoute]:
        """Rule 3: the well-known route (a ``Server.add_http_routes`` builder; the path is
        at the origin's root whatever ``mcp_path`` is)."""
        return [Route(JWKS_PATH, self._serve, methods=["GET"])]

    def install(self, server: Server) -> None:
        """Serve the JWK set beside ``server``'s HTTP endpoint (rule 3)."""
        server.add_http_routes(self.routes)

    def __repr__(self) -> str:
        return f"ServerIdentity(kids={[k.kid for k in self.keys()]!r})"


def jwks_url(mcp_url: str) -> str:
    """Rule 5: ``https://<origin of mcp_url>/.well-known/mcp-webhook-jwks.json``;
    ``ValueError`` for a URL that is not ``https`` with a host."""
    parts = urlsplit(mcp_url)
    if parts.scheme.lower() != "https" or not parts.hostname:
        raise ValueError("server keys are fetched over https from the MCP server's origin only")
    host = parts.hostname
    literal = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port not in (None, 443) else ""
    return f"https://{literal}{port}{JWKS_PATH}"


def _jwks_url_or_none(server: str | None) -> str | None:
    if server is None:
        return None
    try:
        return jwks_url(server)
    except ValueError:
        return None


def _signatures(header: str, limit: int) -> list[bytes]:
    out: list[bytes] = []
    for part in header.split(" "):
        version, _, value = part.partition(",")
        if version != SIGNATURE_V1A:
            continue
        if len(out) >= limit:
            break
        try:
            out.append(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            continue
    return out


class ServerKeys:
    """The server keys a receiver trusts (rules 5-7). ``jwks``: JWK sets given by the
    operator; ``origins``: MCP server URLs (``https``) whose well-known document is
    fetched (:meth:`refresh`). ``verify``: TLS verification (an ``ssl.SSLContext`` or
    True). Sizes in bytes, times in seconds."""

    def __init__(
        self,
        jwks: Sequence[Mapping[str, Any]] = (),
        *,
        origins: Sequence[str] = (),
        verify: ssl.SSLContext | bool = True,
        timeout_s: float = 5.0,
        max_jwks_bytes: int = 64 * 1024,
        max_keys: int = 16,
        max_signatures: int = 4,
        min_refresh_s: float = 60.0,
    ) -> None:
        self.urls = [jwks_url(origin) for origin in origins]
        self.verify_tls = verify
        self.timeout_s = timeout_s
        self.max_jwks_bytes = max_jwks_bytes
        self.max_keys = max_keys
        self.max_signatures = max_signatures
        self.min_refresh_s = min_refresh_s
        self._static = [key for doc in jwks for key in self._parse(doc)]
        # kind-ok: unbounded-table keys are the configured JWKS URLs
        self._fetched: dict[str, list[tuple[str, Ed25519PublicKey]]] = {}
        self._fetched_at = float("-inf")
        self._lock = anyio.Lock()
        self._check_count(len(self._static))

    @property
    def kids(self) -> list[str]:
        return [kid for kid, _ in self._keys()]

    def _keys(self, server: str | None = None) -> list[tuple[str, Ed25519PublicKey]]:
        """Every trusted key, or (rule 10) only the operator's and ``server``'s own when
        ``server``'s origin is one of the origins fetched."""
        url = _jwks_url_or_none(server)
        if url is not None and url in self.urls:
            return [*self._static, *self._fetched.get(url, ())]
        return [*self._static, *(key for keys in self._fetched.values() for key in keys)]

    def _check_count(self, n: int) -> None:
        if n > self.max_keys:
            raise ValueError(f"more than max_keys ({self.max_keys}) trusted ed25519 keys")

    def _parse(self, doc: Mapping[str, Any]) -> list[tuple[str, Ed25519PublicKey]]:
        entries = doc.get("keys")
        if not isinstance(entries, list):
            raise ValueError("a JWK set is an object with a 'keys' array")
        out: list[tuple[str, Ed25519PublicKey]] = []
        for entry in cast(list[Any], entries):
            if not isinstance(entry, dict):
                continue
            jwk = cast(JSON, entry)
            if jwk.get("kty") != "OKP" or jwk.get("crv") != _CURVE:
                continue  # rule 6: not an ed25519 key
            try:
                key = SigningKey.from_jwk({k: v for k, v in jwk.items() if k != "d"})
            except ValueError:
                continue
            public = key.okp.public_key
            if isinstance(public, Ed25519PublicKey):
                out.append((key.kid, public))
            self._check_count(len(out))
        return out

    async def _fetch(
        self, client: httpx2.AsyncClient, url: str
    ) -> list[tuple[str, Ed25519PublicKey]]:
        async with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise ValueError(f"{url} answered {response.status_code}")
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > self.max_jwks_bytes:
                    raise ValueError(f"{url} is above max_jwks_bytes ({self.max_jwks_bytes})")
        try:
            doc: Any = json.loads(bytes(data))
        except RecursionError:
            raise ValueError(f"{url} is nested too deeply to be a JWK set") from None
        if not isinstance(doc, dict):
            raise ValueError(f"{url} is not a JWK set")
        return self._parse(cast(JSON, doc))

    async def refresh(self) -> None:
        """Fetch every origin's document again (rules 5, 9), concurrently, each origin on
        its own. Raises the first failure (``ValueError``, ``httpx2.HTTPError``,
        ``TimeoutError`` or ``OSError``) once the others are updated; an origin that
        failed keeps the keys it gave before."""
        self._fetched_at = time.monotonic()
        got: dict[str, list[tuple[str, Ed25519PublicKey]] | Exception] = {}
        async with httpx2.AsyncClient(
            verify=self.verify_tls,
            follow_redirects=False,
            trust_env=False,
            timeout=httpx2.Timeout(self.timeout_s),
        ) as client:

            async def one(url: str) -> None:
                try:
                    with anyio.fail_after(self.timeout_s):
                        got[url] = await self._fetch(client, url)
                except (ValueError, httpx2.HTTPError, TimeoutError, OSError) as exc:
                    got[url] = exc

            async with anyio.create_task_group() as tg:
                for url in self.urls:
                    tg.start_soon(one, url)
        failures: list[Exception] = []
        for url in self.urls:
            outcome = got[url]
            if isinstance(outcome, Exception):
                failures.append(outcome)
            else:
                self._fetched[url] = outcome
        if failures:
            raise failures[0]

    def _check(self, content: bytes, signatures: list[bytes], server: str | None) -> bool:
        keys = self._keys(server)
        for signature in signatures:
            for _, key in keys:
                try:
                    key.verify(signature, content)
                except InvalidSignature:
                    continue
                return True
        return False

    async def verify(
        self, body: bytes, headers: Mapping[str, str], *, server: str | None = None
    ) -> bool:
        """Rule 7: whether ``webhook-signature`` holds a ``v1a`` signature of
        ``webhook-id.webhook-timestamp.body`` by a trusted key; ``server``: the MCP
        server URL the delivery's route is pinned to (rule 10; None: any trusted key)."""
        signatures = _signatures(headers.get("webhook-signature", ""), self.max_signatures)
        if not signatures:
            return False
        content = signed_content(
            headers.get("webhook-id", ""), headers.get("webhook-timestamp", ""), body
        )
        if self._check(content, signatures, server):
            return True
        if not self.urls:
            return False
        async with self._lock:
            if time.monotonic() - self._fetched_at < self.min_refresh_s:
                return self._check(content, signatures, server)
            try:
                await self.refresh()
            except (ValueError, httpx2.HTTPError, TimeoutError, OSError) as exc:
                # rule 9: the origins that answered are updated all the same
                logger.warning("fetching the server keys failed: %s", type(exc).__name__)
        return self._check(content, signatures, server)

    def __repr__(self) -> str:
        return f"ServerKeys(kids={self.kids!r}, urls={self.urls!r})"


async def fetch_server_keys(mcp_url: str, **options: Any) -> ServerKeys:
    """Trust the keys the MCP server at ``mcp_url`` publishes (rule 5): fetched now and
    again when a signature does not verify. ``options``: :class:`ServerKeys` keywords.
    Raises ``ValueError`` (not ``https``, a bad document) or ``httpx2.HTTPError``."""
    keys = ServerKeys(origins=[mcp_url], **options)
    await keys.refresh()
    return keys
