"""Where the client keeps tokens and registrations between runs.

Spec: 2026-07-28 ``basic/authorization`` §Security Considerations (token storage);
OAuth 2.1 §7.1 (refresh token rotation).

Rules:
1. Storage is keyed by the MCP server's canonical resource URI: one entry holds the
   :class:`~.grant.TokenSet` (which records the ``issuer`` that issued it and the
   ``resource`` it was requested for) and the client registrations per issuer for that
   resource. The provider sends a stored token only to that server, and only while the
   server's authorization server is that issuer (:mod:`.provider` rules 9 and 11).
2. :class:`MemoryTokenStorage` (the default) lives as long as the object.
3. :class:`FileTokenStorage` keeps one JSON file. It is created with mode 0600 inside a
   directory created 0700, never readable by others: an existing file with group or
   other permission bits is refused with ``PermissionError`` (POSIX). Writes are atomic:
   a 0600 temporary file in the same directory, flushed and ``fsync``ed, then
   ``os.replace``; a crash leaves the old file or the new one, never half of one.
4. A refreshed token set replaces the stored one whole, so a rotated refresh token is
   never kept next to the new access token (OAuth 2.1 §4.3.1).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Protocol

import anyio

from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.auth.client.grant import ClientRegistration, TokenSet

__all__ = ["FileTokenStorage", "MemoryTokenStorage", "TokenStorage"]


class TokenStorage(Protocol):
    """Async storage of tokens and client registrations per resource (rule 1)."""

    async def get_tokens(self, resource: str) -> TokenSet | None: ...

    async def set_tokens(self, resource: str, tokens: TokenSet | None) -> None: ...

    async def get_registration(self, resource: str, issuer: str) -> ClientRegistration | None: ...

    async def set_registration(self, resource: str, registration: ClientRegistration) -> None: ...


class MemoryTokenStorage:
    """Rule 2."""

    def __init__(self) -> None:
        # kind-ok: unbounded-table keys are the resources this client is configured for
        self._tokens: dict[str, TokenSet] = {}
        # kind-ok: unbounded-table keys are configured resources and their issuers
        self._registrations: dict[tuple[str, str], ClientRegistration] = {}

    async def get_tokens(self, resource: str) -> TokenSet | None:
        return self._tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: TokenSet | None) -> None:
        if tokens is None:
            self._tokens.pop(resource, None)
        else:
            self._tokens[resource] = tokens

    async def get_registration(self, resource: str, issuer: str) -> ClientRegistration | None:
        return self._registrations.get((resource, issuer))

    async def set_registration(self, resource: str, registration: ClientRegistration) -> None:
        self._registrations[(resource, registration.issuer or "")] = registration


class FileTokenStorage:
    """Rule 3: one JSON file at ``path`` (e.g. ``~/.config/mcpkit/tokens.json``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = anyio.Lock()

    # -- file ---------------------------------------------------------------------------
    def _check(self) -> None:
        if os.name != "posix" or not self.path.exists():
            return
        mode = stat.S_IMODE(self.path.stat().st_mode)
        if mode & 0o077:
            raise PermissionError(
                f"{self.path}: token file has mode {oct(mode)}; it must not be readable or "
                f"writable by group or others (chmod 600 {self.path})"
            )

    def _read(self) -> JSON:
        self._check()
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        return as_object(data) or {}

    def _write(self, data: JSON) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600) if hasattr(os, "fchmod") else None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def _update(self, resource: str, key: str, value: Any) -> None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
            entry: JSON = data.setdefault(resource, {})
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = value
            await anyio.to_thread.run_sync(self._write, data)

    async def _entry(self, resource: str) -> JSON:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
        return as_object(data.get(resource)) or {}

    # -- TokenStorage -------------------------------------------------------------------
    async def get_tokens(self, resource: str) -> TokenSet | None:
        raw = as_object((await self._entry(resource)).get("tokens"))
        return TokenSet.from_json(raw) if raw is not None else None

    async def set_tokens(self, resource: str, tokens: TokenSet | None) -> None:
        await self._update(resource, "tokens", tokens.to_json() if tokens else None)

    async def get_registration(self, resource: str, issuer: str) -> ClientRegistration | None:
        regs = as_object((await self._entry(resource)).get("registrations"))
        raw = as_object(regs.get(issuer)) if regs is not None else None
        return ClientRegistration.from_json(raw) if raw is not None else None

    async def set_registration(self, resource: str, registration: ClientRegistration) -> None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
            entry: JSON = data.setdefault(resource, {})
            regs: JSON = entry.setdefault("registrations", {})
            regs[registration.issuer or ""] = registration.to_json()
            await anyio.to_thread.run_sync(self._write, data)
