"""Multi round-trip requests (SEP-2322, spec 2026-07-28 ``basic/patterns/mrtr``): server side.

A handler asks for client input through the :class:`~mcpkit.server.context.Context`.
On a 2026-07-28 request the answer is either already in the retry's ``inputResponses``
(or carried over from earlier rounds in ``requestState``), or the handler is stopped
with :class:`InputRequired` and the request answered with an ``InputRequiredResult``.
The client retries with a new id; the handler runs again from the top and every input
call it repeats returns the stored answer. Handlers must therefore be safe to re-run up
to their first unanswered input call.

Rules:
1. Only ``tools/call``, ``prompts/get`` and ``resources/read`` (and extension methods
   registered as input-capable) may answer ``input_required``.
2. ``requestState`` is sealed with HMAC-SHA256 under the server's secret and binds the
   method, a digest of the request's salient params (everything except ``_meta``,
   ``inputResponses`` and ``requestState``), the principal and an expiry (ms since the
   epoch). Anything that fails to verify, is expired, or belongs to another request or
   principal is refused with -32602; nothing from it is trusted.
3. Answers accumulate: the state sealed into each ``InputRequiredResult`` holds every
   answer received so far, so a later round need not repeat earlier ones.
4. ``inputResponses`` must be an object whose values are objects (else -32602); keys the
   handler never asks for are ignored, a key it asks for that has no answer is asked
   for again (``input_required``), and an answer that does not match its request (the
   result type, an accepted form's ``requestedSchema``) is -32602
   (:mod:`mcpkit.server.answers`).
5. An input request for a capability the client did not declare is never sent; the
   request fails with -32021 and ``data.requiredCapabilities`` instead.
6. Answer keys starting with :data:`SEALED_KEY_PREFIX` (``io.mcpkit/``) are mcpkit's
   own records inside a sealed ``requestState`` (a mount's carried state, a proxy's
   parked call or upstream state); ``inputResponses`` naming one is -32602, so a client
   cannot forge them (they would otherwise overlay the sealed ones, bypassing rule 2's
   binding to the request and principal).
7. This module is the MRTR layer around dispatch (issue 27): the era front end enters
   it once on the way in, only for a request that carries ``requestState`` or
   ``inputResponses`` (:func:`open_rounds`, which opens the state once even when the
   tracer also needs the first round's context), and once on the way out, only when
   the handler raised :class:`InputRequired` (:func:`seal_round`). A request with
   neither never enters it.
8. The sealed state carries, under ``x.trace``, the first round's trace context
   (:mod:`mcpkit.core.tracing` rule 7): the one a retry's state already carried, else
   the current one (the tracer's span, or the context the request carried).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
import warnings
from typing import Any, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError, dumps, loads
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import current, from_meta

__all__ = [
    "ROUND_TRACE_KEY",
    "SEALED_KEY_PREFIX",
    "InputRequired",
    "RequestStateSealer",
    "Rounds",
    "open_rounds",
    "request_digest",
    "seal_round",
]


_EXCLUDED_PARAMS = frozenset({"_meta", "inputResponses", "requestState"})
SEALED_KEY_PREFIX = "io.mcpkit/"
"""Rule 6: answer keys only a sealed ``requestState`` may carry."""
ROUND_TRACE_KEY = "trace"
"""Rule 8: the key under the sealed state's extra data holding the first round's context."""


class InputRequired(Exception):
    """Raised inside a handler to answer ``input_required``.

    ``input_requests`` maps server-chosen keys to ``{"method", "params"}`` objects
    (``elicitation/create``, ``sampling/createMessage`` or ``roots/list``).
    """

    def __init__(self, input_requests: dict[str, JSON]) -> None:
        super().__init__(f"input required: {', '.join(input_requests)}")
        self.input_requests = input_requests


def request_digest(method: str, params: JSON | None) -> str:
    """A digest of a request's salient params (rule 2), stable across retries."""
    salient = {k: v for k, v in (params or {}).items() if k not in _EXCLUDED_PARAMS}
    payload = dumps({"m": method, "p": _canonical(salient)})
    return hashlib.sha256(payload).hexdigest()[:32]


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        obj = cast(JSON, value)
        return {k: _canonical(obj[k]) for k in sorted(obj)}
    if isinstance(value, list):
        return [_canonical(v) for v in cast(list[Any], value)]
    return value


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class RequestStateSealer:
    """Seals and opens ``requestState`` values (rule 2).

    ``secret``: at least 32 bytes; give every replica of a deployment the same one
    (without one, the configured shared secret: ``MCPKIT_SECRET`` or
    ``MCPKIT_SECRET_FILE``, read by :func:`mcpkit.server.replication.load_secret`, else a
    random per-process key; a configured one that is short, a placeholder or unreadable
    is not used: :attr:`problem` holds why, and a :class:`RuntimeWarning` says so).
    ``ttl_s``: how long a
    state stays valid, in seconds (default 600).
    """

    def __init__(self, secret: bytes | None = None, *, ttl_s: float = 600.0) -> None:
        self.configured = True
        """False when the key is random (no ``secret``, none configured): then
        no other process can open this one's states, and multi-replica mode refuses to
        start (:mod:`mcpkit.server.replication`)."""
        self.problem: ValueError | None = None
        """Why the configured secret was not usable (short, a placeholder, an unreadable
        file), or None: the key is then random, a :class:`RuntimeWarning` says so, and
        multi-replica mode refuses to start with this error."""
        if secret is None:
            from mcpkit.server.replication import SecretError, load_secret

            try:
                secret = load_secret()
            except SecretError as exc:
                self.problem = exc
                warnings.warn(
                    f"{exc}: this process seals requestState with a random key "
                    "(multi-replica mode refuses to start)",
                    RuntimeWarning,
                    stacklevel=3,
                )
            self.configured = secret is not None
            secret = secret if secret is not None else os.urandom(32)
        if len(secret) < 32:
            raise ValueError("requestState secret must be at least 32 bytes")
        self._key = secret
        self.ttl_s = ttl_s

    @property
    def weak(self) -> bool:
        """The key has fewer than 8 distinct byte values (``b"k" * 32``-style: a
        placeholder, not a secret)."""
        return len(set(self._key)) < 8

    def derive(self, purpose: str) -> bytes:
        """A 32-byte key for ``purpose`` (e.g. ``"event-ids"``) derived from this key
        (HMAC-SHA256), so one configured secret keys every shared MAC."""
        return hmac.new(self._key, b"mcpkit/" + purpose.encode(), hashlib.sha256).digest()

    def seal(
        self,
        *,
        method: str,
        digest: str,
        principal: str | None,
        answers: JSON,
        extra: JSON | None = None,
    ) -> str:
        body: JSON = {
            "v": 1,
            "m": method,
            "d": digest,
            "p": principal,
            "exp": int((time.time() + self.ttl_s) * 1000),
            "a": answers,
        }
        if extra:
            body["x"] = extra
        raw = dumps(body)
        mac = hmac.new(self._key, raw, hashlib.sha256).digest()
        return f"{_b64(raw)}.{_b64(mac)}"

    def open(self, token: Any, *, method: str, digest: str, principal: str | None) -> JSON:
        """Verify a state and return its body; raises -32602 on any mismatch."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise _bad_state("it is not a requestState this server issued")
        raw_b64, mac_b64 = token.split(".")
        try:
            raw, mac = _unb64(raw_b64), _unb64(mac_b64)
        except (ValueError, TypeError):
            raise _bad_state("it is not valid base64url") from None
        expected = hmac.new(self._key, raw, hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            raise _bad_state("its integrity check failed (tampered or from another server)")
        body = as_object(loads(raw))
        if body is None or body.get("v") != 1:
            raise _bad_state("unknown state format")
        if body.get("exp", 0) < time.time() * 1000:
            raise _bad_state("it has expired")
        if body.get("m") != method or body.get("d") != digest:
            raise _bad_state("it was issued for a different request")
        if body.get("p") != principal:
            raise _bad_state("it was issued to a different principal")
        return body


def _bad_state(why: str) -> JSONRPCError:
    return JSONRPCError(INVALID_PARAMS, f"Invalid params: requestState refused: {why}")


class Rounds:
    """What a retry carries (rules 3, 4, 8), opened once by :func:`open_rounds`:
    ``answers`` (earlier rounds' from the verified ``requestState`` overlaid with this
    round's ``inputResponses``), ``first`` (the first round's trace context as sealed,
    or None) and ``error`` (the -32602 to answer instead, or None)."""

    __slots__ = ("answers", "error", "first")

    def __init__(self) -> None:
        # kind-ok: unbounded-table one request's answers, bounded by its body size limit
        self.answers: JSON = {}
        self.first: Any = None
        self.error: JSONRPCError | None = None


def open_rounds(
    sealer: RequestStateSealer, method: str, params: JSON, principal: str | None
) -> Rounds:
    """Rules 2-4, 6: open a retry's ``requestState`` (when present, even null) and
    check its ``inputResponses`` (when present, even null). Never raises: a refusal
    is kept in :attr:`Rounds.error`, after ``first`` is read from a state that
    verified. Only retries pay for this."""
    rounds = Rounds()
    try:
        if "requestState" in params:  # present, even as null: a string this server sealed
            body = sealer.open(
                params["requestState"],
                method=method,
                digest=request_digest(method, params),
                principal=principal,
            )
            rounds.answers.update(as_object(body.get("a")) or {})
            rounds.first = (as_object(body.get("x")) or {}).get(ROUND_TRACE_KEY)
        if "inputResponses" in params:  # present, even as null: an InputResponses object
            obj = as_object(params["inputResponses"])
            if obj is None or not all(isinstance(v, dict) for v in obj.values()):
                raise JSONRPCError(
                    INVALID_PARAMS, "Invalid params: inputResponses must map keys to result objects"
                )
            forged = [k for k in obj if k.startswith(SEALED_KEY_PREFIX)]
            if forged:  # rule 6: only the sealed requestState carries these
                raise JSONRPCError(
                    INVALID_PARAMS,
                    f"Invalid params: inputResponses key {forged[0]!r} is reserved for "
                    "the server's requestState",
                )
            rounds.answers.update(obj)
    except JSONRPCError as exc:
        rounds.error = exc
    return rounds


def seal_round(
    sealer: RequestStateSealer,
    need: InputRequired,
    *,
    method: str,
    params: JSON | None,
    principal: str | None,
    rounds: Rounds | None,
    asked: set[str],
) -> JSON:
    """Rules 3, 8: the ``input_required`` result for ``need``, with a freshly sealed
    ``requestState`` holding every answer in ``rounds`` the handler asked for
    (``asked``) and the first round's trace context."""
    used: JSON = {}
    first: Any = None
    if rounds is not None:
        used = {k: v for k, v in rounds.answers.items() if k in asked}
        first = rounds.first
    ctx = from_meta(first) if first is not None else None
    if ctx is None:
        ctx = current()
    return {
        "resultType": "input_required",
        "inputRequests": need.input_requests,
        "requestState": sealer.seal(
            method=method,
            digest=request_digest(method, params),
            principal=principal,
            answers=used,
            extra={ROUND_TRACE_KEY: ctx.to_meta()} if ctx is not None else None,
        ),
    }
