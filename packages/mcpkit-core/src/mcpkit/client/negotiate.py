"""Which protocol era and version to speak: the ``initialize`` handshake, the
``server/discover`` probe, and the adaptive choice between them.

Spec: 2026-07-28 ``basic/versioning`` §Backward Compatibility, ``basic/transports/stdio``
and ``streamable-http`` §Backward Compatibility, ``server/discover``; 2025-11-25
``basic/lifecycle`` §Version Negotiation.

Rules:
1. Modes: ``"legacy"`` always runs ``initialize``; ``"modern"`` always speaks 2026-07-28 and
   never sends ``initialize``; ``"adaptive"`` (the default) probes with ``server/discover``.
2. ``initialize`` asks for the newest handshake-era version (or the one pinned) and
   accepts any of 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 in the answer; any other
   answer is :class:`UnsupportedServerError`. ``notifications/initialized`` follows.
3. The probe's outcome:
   - a ``DiscoverResult`` (``supportedVersions`` a list, ``capabilities`` an object) naming
     a modern version we speak: modern, with that version;
   - -32022 whose ``data.supported`` names a modern version we speak: retry the probe
     with it (at most twice), never falling back;
   - -32022 naming only handshake-era versions, or a ``DiscoverResult`` naming only those:
     legacy;
   - -32020 or -32021: the server is modern but refused us; the error is raised;
   - HTTP 401/403 (:class:`~mcpkit.client.errors.HTTPAuthError`): raised, since
     credentials, not the era, are the problem; so is a stdio server that exited
     (:class:`~mcpkit.client.stdio.ServerExitedError`, with its exit status and the end
     of its stderr): no handshake can follow;
   - anything else: any other error code or HTTP failure, a timeout
     (``probe_timeout_s``), or a result that is not a ``DiscoverResult``: legacy. The
     fallback never depends on one particular error code.
   - a probe that timed out because the server was slow to start (a stdio command that
     installs or imports for longer than ``probe_timeout_s``), on a dual-era server that
     took the unanswered probe as its era: its ``initialize`` answer is -32022 naming
     modern versions; then the client probes again, without the timeout, and speaks
     modern.
4. The era is a property of the server: once decided it is kept for the connection; a
   handshake-era session that expires (HTTP 404) is re-initialized with the same version.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from mcpkit.client._json import as_object
from mcpkit.client.errors import ClientError, HTTPAuthError, UnsupportedServerError
from mcpkit.client.session import ClientSession
from mcpkit.client.stdio import ServerExitedError
from mcpkit.core import meta as M
from mcpkit.core.engine import RequestTimeoutError
from mcpkit.core.jsonrpc import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
)
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import LATEST_LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSIONS

__all__ = ["Mode", "ServerState", "discover", "initialize", "negotiate"]

Mode = Literal["adaptive", "legacy", "modern"]
logger = logging.getLogger("mcpkit.client")


def _empty() -> JSON:
    return {}


def _no_versions() -> list[str]:
    return []


@dataclass(slots=True)
class ServerState:
    """What the client learned about the server when it connected."""

    info: JSON = field(default_factory=_empty)
    capabilities: JSON = field(default_factory=_empty)
    instructions: str | None = None
    supported_versions: list[str] = field(default_factory=_no_versions)
    raw: JSON = field(default_factory=_empty)
    """The ``InitializeResult`` or ``DiscoverResult`` as received."""


def _modern_pick(versions: Any) -> str | None:
    if not isinstance(versions, list):
        return None
    for version in MODERN_VERSIONS:
        if version in versions:
            return version
    return None


def _names_legacy(versions: Any) -> bool:
    return isinstance(versions, list) and any(
        v in LEGACY_VERSIONS for v in cast("list[Any]", versions)
    )


def _is_discover_result(result: JSON) -> bool:
    return isinstance(result.get("supportedVersions"), list) and isinstance(
        result.get("capabilities"), dict
    )


def _state_from_discover(result: JSON) -> ServerState:
    meta = as_object(result.get("_meta"))
    info = as_object(meta.get(M.SERVER_INFO)) if meta is not None else None
    if info is None:
        info = as_object(result.get("serverInfo"))
    instructions = result.get("instructions")
    return ServerState(
        info=dict(info) if info is not None else {},
        capabilities=dict(result.get("capabilities") or {}),
        instructions=instructions if isinstance(instructions, str) else None,
        supported_versions=[v for v in result["supportedVersions"] if isinstance(v, str)],
        raw=result,
    )


async def initialize(session: ClientSession, version: str = LATEST_LEGACY_VERSION) -> ServerState:
    """Run the handshake (rule 2) and mark the session handshake-era."""
    params: JSON = {
        "protocolVersion": version,
        "capabilities": session.capabilities(),
        "clientInfo": session.client_info,
    }
    result = await session.request("initialize", params, envelope=False)
    negotiated = result.get("protocolVersion")
    if negotiated not in LEGACY_VERSIONS:
        raise UnsupportedServerError(
            f"initialize: server answered protocolVersion {negotiated!r}; this client speaks "
            f"{', '.join(LEGACY_VERSIONS)} on the handshake era"
        )
    session.era = "legacy"
    session.protocol_version = negotiated
    session.stream.config.era = "legacy"
    session.stream.config.protocol_version = negotiated
    await session.notify("notifications/initialized")
    await session.stream.session_started()
    info = as_object(result.get("serverInfo"))
    instructions = result.get("instructions")
    return ServerState(
        info=dict(info) if info is not None else {},
        capabilities=dict(result.get("capabilities") or {}),
        instructions=instructions if isinstance(instructions, str) else None,
        supported_versions=[negotiated],
        raw=result,
    )


def _mark_modern(session: ClientSession, version: str) -> None:
    session.era = "modern"
    session.protocol_version = version
    session.stream.config.era = "modern"
    session.stream.config.protocol_version = version


async def discover(
    session: ClientSession, *, timeout_s: float | None = None, fallback: bool = False
) -> ServerState | None:
    """Probe with ``server/discover`` (rule 3). With ``fallback`` a non-modern answer
    returns None (go legacy); without it, it raises."""
    version = session.protocol_version if session.era == "modern" else None
    version = version or MODERN_VERSIONS[0]
    for _ in range(3):
        try:
            result = await session.request(
                "server/discover", None, timeout_s=timeout_s, version=version, envelope=True
            )
        except JSONRPCError as exc:
            data = as_object(exc.data)
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and data is not None:
                supported: Any = data.get("supported")
                pick = _modern_pick(supported)
                if pick is not None:
                    version = pick
                    continue
                if fallback and _names_legacy(supported):
                    return None
                raise UnsupportedServerError(
                    f"server/discover: server supports {supported!r}; this client speaks "
                    f"{', '.join(MODERN_VERSIONS)} (modern) and {', '.join(LEGACY_VERSIONS)}"
                ) from exc
            if exc.code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY) or not fallback:
                raise
            logger.debug("server/discover answered %s; falling back to initialize", exc)
            return None
        except (RequestTimeoutError, ClientError) as exc:
            if not fallback or isinstance(exc, HTTPAuthError | ServerExitedError):
                raise
            logger.debug("server/discover failed (%s); falling back to initialize", exc)
            return None
        if not _is_discover_result(result):
            if fallback:
                return None
            raise UnsupportedServerError("server/discover: the result is not a DiscoverResult")
        pick = _modern_pick(result["supportedVersions"])
        if pick is None:
            if fallback and _names_legacy(result["supportedVersions"]):
                return None
            raise UnsupportedServerError(
                f"server/discover: server supports {result['supportedVersions']!r}; none is "
                f"{', '.join(MODERN_VERSIONS)}"
            )
        _mark_modern(session, pick)
        return _state_from_discover(result)
    raise UnsupportedServerError(
        "server/discover: the server kept refusing the protocol version it advertised"
    )


async def negotiate(
    session: ClientSession,
    mode: Mode,
    *,
    legacy_version: str = LATEST_LEGACY_VERSION,
    probe_timeout_s: float | None = 10.0,
) -> ServerState:
    """Decide the era and version for ``session`` (rule 1) and return the server's state."""
    if mode == "legacy":
        return await initialize(session, legacy_version)
    if mode == "modern":
        state = await discover(session)
        assert state is not None
        return state
    state = await discover(session, timeout_s=probe_timeout_s, fallback=True)
    if state is not None:
        return state
    try:
        return await initialize(session, legacy_version)
    except JSONRPCError as exc:
        data = as_object(exc.data)
        if exc.code != UNSUPPORTED_PROTOCOL_VERSION or data is None:
            raise
        if _modern_pick(data.get("supported")) is None:
            raise
        logger.debug("initialize refused by a modern server after a late probe; probing again")
    state = await discover(session)  # rule 3, last case
    assert state is not None
    return state
