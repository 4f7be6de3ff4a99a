"""Checks a server's configuration before it serves: refusals that name the mistake.

A mistake in a server's configuration (a scope rule naming no tool, a proxy pinned to
an era its upstream does not speak, a multi-replica setup without a shared secret)
should stop the server where it starts, in one line that says what to do, not fail
every request later (issue 26). Core and extensions raise such a refusal as a
:class:`ConfigurationError`; the ones that need I/O to be found (the proxy asks its
upstream) register an async check here, so ``mcpkit run`` can run it before serving on
any transport (an HTTP server would otherwise report a failed lifespan as a traceback).

Rules:
1. :class:`ConfigurationError` marks an exception as a configuration mistake found at
   start-up; it is a mixin (each error keeps its own base: ``ValueError``,
   :class:`~mcpkit.core.jsonrpc.JSONRPCError`). Its message is one line.
2. :func:`add_startup_check` registers ``check()`` (async, no arguments) for a server;
   checks are kept per server, weakly, each once. :func:`run_startup_checks` runs
   :func:`mcpkit.server.names.check_names` first (for a server with lifespans it runs
   once they are entered instead), then each check in the order added.
3. :func:`configuration_error` finds the :class:`ConfigurationError` in what serving
   raised, inside exception groups too (task groups wrap what a lifespan raises), or
   returns ``None``.
4. ``mcpkit run`` and ``mcpkit demo`` (:mod:`mcpkit.cli.main`) run the checks before
   serving, and print a refusal raised then or while serving starts as
   ``mcpkit run: <line>``, status 2.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mcpkit.server.attached import attached, peek
from mcpkit.server.errors import ConfigurationError, configuration_error
from mcpkit.server.names import check_names

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase

__all__ = [
    "ConfigurationError",
    "StartupCheck",
    "add_startup_check",
    "configuration_error",
    "run_startup_checks",
]

StartupCheck = Callable[[], Awaitable[None]]
"""Rule 2: raises a :class:`ConfigurationError` for a mistake; returns otherwise."""


def add_startup_check(server: ServerBase, check: StartupCheck) -> None:
    """Rule 2: run ``check()`` before ``server`` serves (``mcpkit run``)."""
    checks: list[StartupCheck] = attached(server, __name__, list[StartupCheck])  # attached rule 3
    if check not in checks:
        checks.append(check)


async def run_startup_checks(server: ServerBase) -> None:
    """Rule 2: the name rules, then every registered check; raises the first
    :class:`ConfigurationError`."""
    check_names(server, before_lifespans=True)
    known: list[StartupCheck] = peek(server, __name__) or []
    for check in list(known):
        await check()
