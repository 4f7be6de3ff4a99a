"""argparse ``type=`` functions for numeric flags: nonsense is refused while parsing.

Every numeric flag of ``mcpkit`` and of its plugins (``--port``, ``--workers``,
``--timeout``, ``--token-ttl``...) takes its ``type`` from here, so a value that cannot
work stops the command at once (status 2) with argparse's ``argument --flag:`` prefix,
never later with a traceback or, worse, silently (a token lifetime of -5 s).

Rules:
1. :func:`port`: an integer from 0 to 65535 (0: any free port).
2. :func:`count` (``low`` 1 by default) and :func:`seconds` (positive, or 0 or more
   with ``zero=True``; finite: ``nan`` and ``inf`` are refused) say what is allowed in
   the words of :func:`mcpkit.core.limits.number_refusal`, the check every limits
   dataclass makes, so a flag and the field it sets refuse the same values alike.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from mcpkit.core.limits import number_refusal

__all__ = ["count", "port", "seconds"]


def port(text: str) -> int:
    """Rule 1: argparse ``type`` for a port."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not in 0..65535 (0 = any free port)")
    return value


def _parse(text: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None


def count(*, zero: bool = False, unit: str = "") -> Callable[[str], int]:
    """Rule 2: argparse ``type`` for a positive integer (0 or more with ``zero``);
    ``unit`` as :func:`~mcpkit.core.limits.number_refusal` takes it (``" (seconds)"``)."""

    def parse(text: str) -> int:
        value = int(_parse(text, int))
        allowed = number_refusal(value, int, zero=zero, unit=unit)
        if allowed is not None:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text}")
        return value

    return parse


def seconds(*, zero: bool = False) -> Callable[[str], float]:
    """Rule 2: argparse ``type`` for a finite, positive number of seconds (0 or more with
    ``zero``)."""

    def parse(text: str) -> float:
        value = float(_parse(text, float))
        allowed = number_refusal(value, float, zero=zero, unit=" (seconds)")
        if allowed is not None:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text}")
        return value

    return parse
