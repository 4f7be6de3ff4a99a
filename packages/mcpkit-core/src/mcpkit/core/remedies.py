"""What an error tells its reader to do, said once for code and once for a shell.

The same failure reaches two kinds of readers: a program using the library (the fix is
an argument: ``Client(url, auth=...)``) and a person at a shell running ``mcpkit`` (the
fix is a flag: ``--auth``). An error that knows a fix carries it for both, apart from
the statement of what went wrong, so each front end shows its own.

Rules:
1. A remedied error has ``problem`` (what went wrong, no advice) and ``remedy``
   (a :class:`Remedy`); ``str(exc)`` is the problem followed by the Python remedy, so a
   program's traceback reads as before.
2. ``Remedy.cli`` is the fix in ``mcpkit`` commands and flags, or ``""`` when the raiser
   cannot know one (a flag a CLI plugin adds, e.g. the auth extension's ``--auth``):
   the CLI then asks its plugins (:mod:`mcpkit.cli.errors`) and otherwise shows the
   problem alone, never the Python remedy.
3. ``option`` (may be ``""``) names the Python parameter a refused value was given as
   (``issuer_path``); the CLI shows the flag that sets it instead, so a message never
   names a constructor argument the person did not write.
4. :func:`explain` is the one reader of these attributes: ``audience="python"`` gives
   ``str(exc)``'s text, ``"cli"`` the problem and the CLI remedy; an exception without
   them is its ``str()`` for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["OptionError", "Remedied", "Remedy", "explain"]

Audience = Literal["python", "cli"]


@dataclass(frozen=True, slots=True)
class Remedy:
    """The fix of one failure: ``python`` in code, ``cli`` in ``mcpkit`` flags (rule 2);
    either may be ``""`` (no fix known)."""

    python: str = ""
    cli: str = ""


class Remedied(Exception):
    """An exception carrying ``problem``, ``remedy`` and ``option`` (rules 1 and 3);
    mix it into an error class, or raise it as is."""

    def __init__(self, problem: str, remedy: Remedy | None = None, *, option: str = "") -> None:
        self.problem = problem
        self.remedy = remedy or Remedy()
        self.option = option
        super().__init__(explain(self, "python"))


class OptionError(Remedied, ValueError):
    """A value refused for the option ``option`` (a ``ValueError``; rule 3):
    ``str()`` is ``"option: problem"``; the CLI puts the flag in place of ``option``."""


def explain(exc: BaseException, audience: Audience, *, option_as: str = "") -> str:
    """Rule 4: ``exc``'s message for ``audience``. ``option_as`` (CLI only) is how the
    reader spells ``exc.option`` (a flag); without it the option is named as is."""
    problem = getattr(exc, "problem", None)
    remedy = getattr(exc, "remedy", None)
    if not isinstance(problem, str) or not isinstance(remedy, Remedy):
        return str(exc)
    option = str(getattr(exc, "option", "") or "")
    name = option_as if audience == "cli" and option_as else option
    text = f"{name}: {problem}" if name else problem
    advice = remedy.python if audience == "python" else remedy.cli
    return f"{text}; {advice}" if advice else text
