"""Configuration mistakes found at start-up (:mod:`mcpkit.server.startup` rules 1, 3).

Rules:
1. :class:`ConfigurationError` marks an exception as a configuration mistake found at
   start-up; it is a mixin (each error keeps its own base: ``ValueError``,
   :class:`~mcpkit.core.jsonrpc.JSONRPCError`). Its message is one line.
2. :func:`configuration_error` finds the :class:`ConfigurationError` in what serving
   raised, inside exception groups too (task groups wrap what a lifespan raises), or
   returns ``None``.
3. This module imports nothing of the server, so every layer can raise these
   (:mod:`mcpkit.server.startup` re-exports both names).
"""

from __future__ import annotations

from typing import cast

__all__ = ["ConfigurationError", "configuration_error"]


class ConfigurationError(Exception):
    """Rule 1: a mistake in a server's configuration, found when it starts; one line
    naming the mistake and the fix. Mixed into the concrete errors
    (:class:`~mcpkit.server.names.NameRuleError`,
    :class:`~mcpkit.server.replication.ReplicaModeError`,
    :class:`~mcpkit.server.proxy.era.UpstreamEraError`)."""


def configuration_error(exc: BaseException) -> ConfigurationError | None:
    """Rule 3: the :class:`ConfigurationError` ``exc`` is or holds, else ``None``."""
    if isinstance(exc, ConfigurationError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        for inner in group.exceptions:
            found = configuration_error(inner)
            if found is not None:
                return found
    return None
