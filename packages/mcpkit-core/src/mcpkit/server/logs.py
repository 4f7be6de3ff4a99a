"""Operator-facing logging: one stderr handler for the ``mcpkit`` loggers.

Rules:
1. :func:`configure_logging` installs exactly one handler on the ``mcpkit`` logger,
   writing to ``sys.stderr`` (never stdout: over stdio, stdout is the protocol channel),
   and sets that logger's level. Calling it again changes the level and the stream but
   adds no second handler.
2. :meth:`Server.run <mcpkit.server.app.Server.run>` calls it (stdio and HTTP) only when
   logging is not configured yet: neither the root logger nor the ``mcpkit`` logger has a
   handler. An application that configures logging itself (``logging.basicConfig``,
   ``dictConfig``, a framework) keeps full control; ``mcpkit run --log-level`` calls it
   explicitly.
3. Handler failures are logged on the ``mcpkit.server`` logger at ERROR with their
   traceback and the error id the client was given (:func:`new_error_id`), so an
   operator can match a client's report to the log line.
"""

from __future__ import annotations

import logging
import sys

__all__ = [
    "LOG_FORMAT",
    "configure_logging",
    "logging_configured",
    "new_error_id",
    "report_failure",
]

logger = logging.getLogger("mcpkit.server")

LOG_FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"
"""Time, level, logger name and message: one line per record (tracebacks follow)."""


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at emit time (tests and tools swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stream = sys.stderr
            stream.write(self.format(record) + "\n")
            stream.flush()
        except Exception:
            self.handleError(record)


def configure_logging(level: str | int = "INFO") -> None:
    """Log the ``mcpkit`` loggers to stderr at ``level`` (a name such as ``"DEBUG"`` or a
    :mod:`logging` number); idempotent (rule 1). Raises ``ValueError`` for an unknown
    level name."""
    if isinstance(level, str):
        number = logging.getLevelNamesMapping().get(level.upper())
        if number is None:
            raise ValueError(
                f"unknown log level {level!r}; use DEBUG, INFO, WARNING, ERROR or CRITICAL"
            )
        level = number
    root = logging.getLogger("mcpkit")
    root.setLevel(level)
    for handler in root.handlers:
        if isinstance(handler, _StderrHandler):
            handler.setLevel(level)
            return
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.setLevel(level)
    root.addHandler(handler)


def logging_configured() -> bool:
    """Whether the application already set up logging (rule 2): a handler on the root
    logger or on the ``mcpkit`` logger."""
    return bool(logging.getLogger().handlers or logging.getLogger("mcpkit").handlers)


def new_error_id() -> str:
    """A short random id (8 hex digits) naming one handler failure (rule 3)."""
    import secrets  # on the first failure only: importing it costs a stdio server's start

    return secrets.token_hex(4)


def report_failure(what: str, exc: BaseException, expose: bool) -> str:
    """Log ``exc`` (``what`` failed, e.g. ``"Tool 'add'"``) at ERROR with its traceback
    and a fresh error id (rule 3), and return the message the client gets: generic with
    the id, or with the exception's type and text too when ``expose`` is true
    (``Server(expose_errors=True)``)."""
    error_id = new_error_id()
    logger.error("%s failed (error id %s)", what, error_id, exc_info=exc)
    if expose:
        return f"{what} failed: {type(exc).__name__}: {exc} (error id {error_id})"
    return f"{what} failed with an internal error (error id {error_id}); see the server log"
