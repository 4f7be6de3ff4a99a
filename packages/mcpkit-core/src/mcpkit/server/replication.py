"""Multi-replica mode: what several processes serving one deployment must share, and
the checks run before any of them starts serving.

"Multi-replica mode" means Redis is configured (``redis=`` / ``--redis`` /
``MCPKIT_REDIS_URL``) or more than one worker process runs (``workers=N`` /
``--workers N``). Every process then must seal MRTR ``requestState`` (SEP-2322,
2026-07-28 ``basic/patterns/mrtr``) and sign SSE event ids with one shared secret, or a
retry or a resumption landing on another process is refused.

Rules:
1. The shared secret is, in order: the one given in code (``secret=``), a file
   (``secret_file=`` / ``--secret-file``), ``MCPKIT_SECRET``, ``MCPKIT_SECRET_FILE``,
   else ``MCPKIT_STATE_SECRET`` (hex, the older name: it still works and warns once per
   process with a :class:`FutureWarning` naming ``MCPKIT_SECRET``). A value of 64 or more
   hex digits is decoded as hex; anything else is taken as its UTF-8 bytes. It must be at
   least 32 bytes with at least 8 distinct byte values (:class:`SecretError` otherwise).
   :func:`load_secret` is the one reader of these names: the CLI, ``run_http``, the
   worker processes and :class:`~mcpkit.server.mrtr.RequestStateSealer` all go through it
   (and :func:`secret_origin`, which says where it comes from).
2. In multi-replica mode a server whose secret is random (none configured, or the one
   configured was unusable: its :class:`SecretError` is raised) or a
   placeholder (``Server(state_secret=b"k" * 32)``) is refused with a one-line
   :class:`SecretError` before anything is served; the CLI prints it and exits 2
   (:func:`mcpkit.server.replicas.apply_shared_secret`).
3. Without Redis, ``workers > 1`` refuses stateful HTTP (the handshake era keeps its
   sessions in one process) with :class:`ReplicaModeError`, unless the endpoint is
   stateless or the server speaks only 2026-07-28 (no sessions)
   (:func:`mcpkit.server.replicas.check_workers`).
4. The secret is never logged or printed; errors name where it was looked for only.
5. An error that knows its fix says it for code and for the shell
   (:mod:`mcpkit.core.remedies`): ``secret_file=``/``redis=``/``stateless=True`` in
   code, ``--secret-file``/``--redis``/``--stateless`` at the shell (issue 26, "the CLI
   giving Python advice", and its mirror: the library giving shell advice).
"""

from __future__ import annotations

import os
import string
import warnings
from pathlib import Path

from mcpkit.core.remedies import Remedied, Remedy
from mcpkit.server.errors import ConfigurationError

__all__ = [
    "LEGACY_SECRET_ENV",
    "SECRET_ENV",
    "SECRET_FILE_ENV",
    "SET_SECRET",
    "ReplicaModeError",
    "SecretError",
    "load_secret",
    "secret_origin",
]

SECRET_ENV = "MCPKIT_SECRET"
SECRET_FILE_ENV = "MCPKIT_SECRET_FILE"
LEGACY_SECRET_ENV = "MCPKIT_STATE_SECRET"
"""The older name of :data:`SECRET_ENV` (hex only); read last, with a warning (rule 1)."""
_legacy_warned = False
_HEX = frozenset(string.hexdigits)
SET_SECRET = Remedy(
    python=f"set {SECRET_ENV} (64 hex digits) or pass secret_file=PATH",
    cli=f"set {SECRET_ENV} (64 hex digits) or --secret-file PATH",
)
"""How to configure the shared secret, in code and at the shell (rule 5)."""


class ReplicaModeError(ConfigurationError, Remedied, ValueError):
    """A multi-replica configuration that cannot work (rules 2, 3); one line, with its
    fix in code and at the shell when it knows one (rule 5)."""


class SecretError(ReplicaModeError):
    """The shared secret is missing, short or a placeholder (rules 1, 2); one line."""


def _decode(text: str | bytes, where: str) -> bytes:
    if isinstance(text, str):
        text = text.strip()
        raw = (
            bytes.fromhex(text)
            if len(text) >= 64 and len(text) % 2 == 0 and set(text) <= _HEX
            else text.encode()
        )
    else:
        raw = text
    if len(raw) < 32:
        raise SecretError(f"the shared secret from {where} is shorter than 32 bytes")
    if len(set(raw)) < 8:
        raise SecretError(f"the shared secret from {where} is a placeholder, not a secret")
    return raw


def _warn_legacy() -> None:
    global _legacy_warned
    if _legacy_warned:
        return
    _legacy_warned = True
    warnings.warn(
        f"{LEGACY_SECRET_ENV} is the older name of the shared secret: set {SECRET_ENV} "
        f"(64 hex digits) or {SECRET_FILE_ENV} instead",
        FutureWarning,
        stacklevel=4,
    )


def secret_origin(secret_file: str | Path | None = None) -> tuple[str, str] | None:
    """Where the shared secret comes from (rule 1, after ``secret=``):
    ``("file", path)``, ``("env", name)`` or None when none is configured. Reading
    :data:`LEGACY_SECRET_ENV` warns once per process (:class:`FutureWarning`)."""
    env = os.environ
    if secret_file:
        return ("file", str(secret_file))
    if env.get(SECRET_ENV):
        return ("env", SECRET_ENV)
    if env.get(SECRET_FILE_ENV):
        return ("file", env[SECRET_FILE_ENV])
    if env.get(LEGACY_SECRET_ENV):
        _warn_legacy()
        return ("env", LEGACY_SECRET_ENV)
    return None


def load_secret(
    secret: bytes | str | None = None, *, secret_file: str | Path | None = None
) -> bytes | None:
    """The configured shared secret (rule 1), or None when none is configured. Raises
    :class:`SecretError` for an unreadable file or a short or placeholder secret."""
    if secret is not None:
        return _decode(secret, "secret=")
    origin = secret_origin(secret_file)
    if origin is None:
        return None
    kind, where = origin
    if kind == "file":
        try:
            text = Path(where).read_text(encoding="utf-8")
        except OSError as exc:
            raise SecretError(f"cannot read the secret file {where}: {exc.strerror}") from None
        return _decode(text, f"the file {where}")
    if where == LEGACY_SECRET_ENV:
        try:
            return _decode(bytes.fromhex(os.environ[where]), where)
        except ValueError:
            raise SecretError(f"{where} is not hex") from None
    return _decode(os.environ[where], where)
