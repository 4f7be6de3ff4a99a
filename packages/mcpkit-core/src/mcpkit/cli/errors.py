"""How ``mcpkit`` words a library error: in flags and commands, never constructor arguments.

Library errors say their fix for code (``Client(url, auth=...)``); a person at a shell
needs the flag (``--auth``). This module is the one translation, used by every command
that prints an error it did not raise itself.

Rules:
1. :func:`cli_message` gives an error's problem (:mod:`mcpkit.core.remedies`) followed
   by its CLI remedy: the first a CLI plugin's ``explain_error(exc, args)`` returns
   (plugins know their own flags: the auth extension's ``--auth``/``--token``), else the
   error's own ``remedy.cli``, else nothing. The Python remedy is never shown.
2. A refused option value (``exc.option``, e.g. ``issuer_path``) is named by the flag
   that sets it, found in the command's parser (:func:`option_flags`: each option's
   ``dest`` to its longest flag) or in the ``flags`` a command passes for options whose
   flag has another name.
3. A plugin whose ``explain_error`` raises is skipped with one warning naming it
   (:mod:`mcpkit.cli.plugins` rule 2); the message is still printed.
4. An exception that carries no remedy is shown as ``Type: text`` (or its text alone
   for ``ValueError``/``OSError`` families when ``bare``), as before.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit.cli.plugins import LoadedPlugin, warn
from mcpkit.core.remedies import Remedied, explain

__all__ = ["cli_message", "option_flags"]


def option_flags(add_arguments: Callable[[argparse.ArgumentParser], Any]) -> dict[str, str]:
    """Rule 2: ``{dest: "--flag"}`` of the options ``add_arguments`` adds to a parser."""
    parser = _Recorder()
    add_arguments(parser)
    return {
        action.dest: max(action.option_strings, key=len)
        for action in parser.recorded
        if action.option_strings
    }


class _Recorder(argparse.ArgumentParser):
    """A parser that keeps the actions ``add_argument`` returns (argparse's public
    surface has no list of them), including those added through its groups."""

    def __init__(self) -> None:
        super().__init__(add_help=False)
        self.recorded: list[argparse.Action] = []

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.recorded.append(action)
        return action

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        return self._watch(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs: Any) -> Any:
        return self._watch(super().add_mutually_exclusive_group(**kwargs))

    def _watch(self, group: Any) -> Any:
        add = group.add_argument

        def recording(*args: Any, **kwargs: Any) -> argparse.Action:
            action = add(*args, **kwargs)
            self.recorded.append(action)
            return action

        group.add_argument = recording
        return group


def _plugin_remedy(
    exc: BaseException, args: argparse.Namespace | None, plugins: Sequence[LoadedPlugin]
) -> str:
    for plugin in plugins:
        hook = plugin.plugin.explain_error
        if hook is None or plugin.broken:
            continue
        try:
            advice = hook(exc, args if args is not None else argparse.Namespace())
        except Exception as error:  # rule 3
            warn(f"plugin {plugin.label} failed in explain_error: {type(error).__name__}: {error}")
            continue
        if advice:
            return advice
    return ""


def cli_message(
    exc: BaseException,
    args: argparse.Namespace | None = None,
    plugins: Sequence[LoadedPlugin] = (),
    *,
    flags: Mapping[str, str] | None = None,
    bare: bool = False,
) -> str:
    """Rules 1-4: the one-line (or few-line) message for ``exc`` at a shell."""
    advice = _plugin_remedy(exc, args, plugins)
    if not isinstance(exc, Remedied):
        text = str(exc) if bare else f"{type(exc).__name__}: {exc}"
        return f"{text}; {advice}" if advice else text
    option_as = (flags or {}).get(exc.option, "")
    if advice:
        base = explain(Remedied(exc.problem, option=exc.option), "cli", option_as=option_as)
        return f"{base}; {advice}"
    return explain(exc, "cli", option_as=option_as)
