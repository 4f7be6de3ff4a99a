"""TEMPORARY stub from h/dx-cli: h/dx-server owns this module; keep theirs on merge.

Rules:
1. :func:`configure_logging` installs one stderr handler on the ``mcpkit`` logger (never
   stdout: on stdio it belongs to the protocol); calling it again only changes the level.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging"]

_HANDLER_NAME = "mcpkit-stderr"


def configure_logging(level: str | int = "INFO") -> None:
    """Log ``mcpkit`` records at ``level`` (a name such as ``"DEBUG"`` or a number) and
    above to stderr. Raises ``ValueError`` for an unknown level name."""
    if isinstance(level, str):
        number = logging.getLevelNamesMapping().get(level.upper())
        if number is None:
            raise ValueError(f"unknown log level {level!r}")
        level = number
    logger = logging.getLogger("mcpkit")
    logger.setLevel(level)
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
