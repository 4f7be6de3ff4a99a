"""Standard Webhooks signing of deliveries (SEP-3415 §Webhook security, "Signature scheme").

Rules:
1. A secret is ``whsec_`` followed by base64 of 24 to 64 bytes; anything else is refused
   (:func:`check_secret` raises ``ValueError``; the subscribe handler answers -32602).
2. Signatures come from the ``standardwebhooks`` package: ``v1,`` + base64 of
   HMAC-SHA256 over ``webhook-id.webhook-timestamp.body`` with the decoded secret bytes.
3. During a rotation grace window every delivery carries both signatures, space
   separated (new first): a receiver holding either secret verifies it.
4. Each attempt is signed afresh with the current time (retries are not stale).
5. Secrets never reach logs or ``repr``.
6. With a server identity (:mod:`.identity`, optional), one ``v1a,`` ed25519 signature
   of the same content (``webhook-id.webhook-timestamp.body``, :func:`signed_content`)
   follows the ``v1,`` ones: Standard Webhooks verifiers skip versions they do not
   check, so HMAC-only receivers keep working (SEP-3415 "Server identity (optional)").
7. A secret is decoded once, not per attempt: signers are cached by secret
   (:func:`_signer`, at most :data:`MAX_CACHED_SIGNERS`, least recently used dropped).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

from standardwebhooks import Webhook

__all__ = [
    "SECRET_PREFIX",
    "AsymmetricSigner",
    "check_secret",
    "generate_secret",
    "signed_content",
    "signed_headers",
]

SECRET_PREFIX = "whsec_"
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64
MAX_CACHED_SIGNERS = 1024
"""Rule 7: decoded secrets kept (the subscriptions one replica delivers, two during a
rotation)."""


@lru_cache(maxsize=MAX_CACHED_SIGNERS)
def _signer(secret: str) -> Webhook:
    """Rule 7: the ``standardwebhooks`` signer of ``secret``, decoded once."""
    return Webhook(secret)


def check_secret(value: object) -> str:
    """``value`` when it is a valid Standard Webhooks secret (rule 1), else ``ValueError``
    naming the rule (the value itself is never echoed)."""
    if not isinstance(value, str) or not value.startswith(SECRET_PREFIX):
        raise ValueError("delivery.secret must be 'whsec_' followed by base64 (SEP-3415)")
    body = value[len(SECRET_PREFIX) :]
    try:
        raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("delivery.secret is not valid base64 after 'whsec_'") from None
    if not MIN_SECRET_BYTES <= len(raw) <= MAX_SECRET_BYTES:
        raise ValueError(
            f"delivery.secret must decode to {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes,"
            f" not {len(raw)}"
        )
    return value


def generate_secret(n_bytes: int = 32) -> str:
    """A fresh ``whsec_`` secret of ``n_bytes`` random bytes (CSPRNG; 24 to 64)."""
    if not MIN_SECRET_BYTES <= n_bytes <= MAX_SECRET_BYTES:
        raise ValueError(f"n_bytes must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES}")
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(n_bytes)).decode()


class AsymmetricSigner(Protocol):
    """Signs the Standard Webhooks content with an asymmetric key (rule 6); see
    :class:`~.identity.ServerIdentity`."""

    def sign(self, content: bytes) -> str:
        """``v1a,`` + base64 of the signature of ``content``."""
        ...


def signed_content(message_id: str, stamp: int | str, body: bytes) -> bytes:
    """What every signature covers: ``webhook-id.webhook-timestamp.`` (UTF-8) + the raw
    body bytes (Standard Webhooks "Signature scheme")."""
    return f"{message_id}.{stamp}.".encode() + body


def signed_headers(
    message_id: str,
    body: bytes,
    secrets_: list[str],
    *,
    subscription_id: str,
    now_s: float | None = None,
    identity: AsymmetricSigner | None = None,
) -> dict[str, str]:
    """The headers of one attempt (rules 2-4, 6): ``webhook-id``, ``webhook-timestamp``
    (Unix seconds), ``webhook-signature`` (one ``v1,`` signature per secret, in order,
    then the ``identity``'s ``v1a,`` one when given), ``X-MCP-Subscription-Id`` and
    ``Content-Type: application/json``."""
    stamp = int(time.time() if now_s is None else now_s)
    when = datetime.fromtimestamp(stamp, tz=UTC)
    text = body.decode()
    signature = " ".join(_signer(s).sign(message_id, when, text) for s in secrets_)
    if identity is not None:
        signature += " " + identity.sign(signed_content(message_id, stamp, body))
    return {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": signature,
        "x-mcp-subscription-id": subscription_id,
    }
