"""Which era an upstream speaks, when the era the proxy was told to speak fails (issue 26).

A proxy pinned to one era upstream (``mode="legacy"`` or ``"modern"``, ``mcpkit proxy
--upstream-era``) in front of a server that speaks only the other era cannot reach it:
a handshake-only server refuses ``server/discover`` with an implementation-defined error
or says nothing, a 2026-07-28-only server refuses ``initialize`` (2026-07-28
``basic/versioning`` §Backward Compatibility, compatibility matrix). Without this
module that looked like an ordinary outage, or worse, like a server with no
capabilities.

Rules:
1. When the proxy's shared connection cannot be opened in its pinned era, the proxy
   opens one probe connection in the other era (bounded by
   ``ProxyLimits.connect_timeout_s``) and closes it at once. When the probe negotiates,
   the failure is an :class:`UpstreamEraError` (-32603) naming the era asked, the era
   and protocol version the upstream speaks, what the pinned era's attempt answered,
   and the fix; when the probe fails too, the original error stands (the upstream is
   down, or refuses the proxy's credentials in both eras).
2. Nothing is probed in ``"adaptive"`` mode (it probes by itself, 2026-07-28 stdio and
   Streamable HTTP §Backward Compatibility), nor for a ``Client`` instance or a client
   factory target: their era is their maker's choice, and the proxy cannot make another.
3. At start-up (:meth:`~mcpkit.proxy.upstream.Upstream.running`, the first
   serving) an :class:`UpstreamEraError` refuses to start: it is a mistake in the
   proxy's configuration, not an outage. Any other failure to reach the upstream at
   start-up stays a warning (the upstream may come up later). A mismatch found later
   (the upstream was down at start-up, or was replaced) reaches each request that needs
   the upstream as this error.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.server.startup import ConfigurationError

if TYPE_CHECKING:
    from mcpkit.client.client import Client
    from mcpkit.client.negotiate import Mode

__all__ = ["PROBE_PAUSE", "EraProbe", "UpstreamEraError", "era_name"]

PROBE_PAUSE = 3
"""Rule 1: after a probe that showed no mismatch, nothing is probed for this many
``connect_timeout_s``."""
_ERA_NAMES = {"legacy": "the handshake era", "modern": "2026-07-28"}


def era_name(era: str, version: str | None = None) -> str:
    """``"the handshake era (2025-11-25)"`` / ``"2026-07-28"``: an era as docs name it."""
    name = _ERA_NAMES.get(era, era)
    if era == "legacy" and version:
        name += f" ({version})"
    return name


class UpstreamEraError(ConfigurationError, JSONRPCError):
    """The upstream does not speak the era the proxy was told to speak upstream (rule 1).

    ``asked``: the proxy's mode (``"legacy"`` or ``"modern"``); ``spoken``: the era the
    upstream answered in (``"legacy"``/``"modern"``), ``version`` its protocol version;
    ``why``: what the attempt in ``asked`` ended with. JSON-RPC code -32603, ``data``
    ``{"askedEra", "upstreamEra", "upstreamProtocolVersion"}``. The message advises the
    Python option (``mode=``); :meth:`advice` gives it for the command line too."""

    def __init__(self, asked: str, spoken: str, version: str | None, why: str) -> None:
        self.asked = asked
        self.spoken = spoken
        self.version = version
        self.why = why
        super().__init__(
            INTERNAL_ERROR,
            self.advice(cli=False),
            {"askedEra": asked, "upstreamEra": spoken, "upstreamProtocolVersion": version},
        )

    def advice(self, *, cli: bool) -> str:
        """The whole message; ``cli=True`` names ``--upstream-era`` instead of ``mode=``."""
        fix = (
            f"--upstream-era {self.spoken} (or adaptive)"
            if cli
            else f"proxy(..., mode={self.spoken!r}) (or 'adaptive')"
        )
        return (
            f"the upstream does not speak {era_name(self.asked)}, the era the proxy was told "
            f"to speak to it ({self.why}); it speaks {era_name(self.spoken, self.version)}: "
            f"use {fix}"
        )


class EraProbe:
    """Rule 1: ``make(mode)`` makes an upstream client in ``mode``; ``asked`` is the
    proxy's pinned mode."""

    def __init__(self, make: Callable[[Mode], Client], asked: str, timeout_s: float) -> None:
        self.make = make
        self.asked = asked
        self.timeout_s = timeout_s
        self.quiet_until = 0.0
        """``time.monotonic()`` before which nothing is probed (rule 1)."""

    async def explain(self, failure: JSONRPCError) -> JSONRPCError:
        """``failure`` of the pinned era, or the :class:`UpstreamEraError` the probe
        shows it to be (rule 1)."""
        if time.monotonic() < self.quiet_until:
            return failure
        other: Mode = "modern" if self.asked == "legacy" else "legacy"
        spoken: Any = None
        version: str | None = None
        try:
            with anyio.fail_after(self.timeout_s):
                async with self.make(other) as client:
                    spoken, version = client.era, client.protocol_version
        except Exception:  # the other era fails too: not an era mismatch
            spoken = None
        if spoken != other:
            self.quiet_until = time.monotonic() + PROBE_PAUSE * self.timeout_s
            return failure
        return UpstreamEraError(self.asked, other, version, failure.message)
