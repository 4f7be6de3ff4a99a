"""``mcpkit run``: find the user's server, check what can be checked, serve it.

Rules:
1. The target is ``module:attr`` or ``path/to/file.py:attr``, loaded by
   :func:`mcpkit.server.loading.load_server` (its rules); without ``:attr`` the
   first of ``server``, ``mcp`` and ``app`` that the module defines is used. A callable
   that is not a :class:`~mcpkit.server.Server` is a factory and is called with no
   arguments; it must return a Server.
2. A user error is one or two lines on stderr (``mcpkit run: ...``) and exit status 2,
   never a traceback: a missing file or module, a missing attribute (naming the
   Servers the module does define), a syntax error in the user's code (``file:line``),
   something that is not a Server, a port already in use, a rule keyed by a name that
   names nothing registered (:mod:`mcpkit.server.names` rule 4). An exception raised by
   the user's module while it is imported is the user's bug: its traceback is shown with
   the user's frames only (mcpkit's own, core or extension, and importlib's are left
   out, counted on one line), and the status is 1.
3. ``--port`` is checked by the parser (0..65535; 0 = any free port). The server's
   configuration (workers, Redis, the shared secret, the HTTP stack, the endpoint's
   options) is checked first, since that is cheap and deterministic; only then is the
   address bound once (:func:`mcpkit.server.http.run.check_listen`), so a port in use
   is reported before the server says it is serving, and never hides a bad
   configuration.
4. ``--reload`` runs the same command without ``--reload`` in a child process and
   restarts it when a ``.py`` file under the target's directory changes (``watchfiles``,
   the ``mcpkit-core[reload]`` extra; without it a one-line message says how to install).
5. ``--log-level`` configures the ``mcpkit`` logger's stderr handler
   (:func:`mcpkit.server.logs.configure_logging`) before the user's module is imported.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path
from typing import Any

from mcpkit.cli.plugins import CliError
from mcpkit.server import loading
from mcpkit.server.app import Server
from mcpkit.server.loading import DEFAULT_ATTRS, LoadError, UserCodeError

__all__ = ["DEFAULT_ATTRS", "UserCodeError", "load_server", "reload"]


def load_server(target: str) -> Server:
    """The :class:`~mcpkit.server.Server` named by ``target`` (rule 1;
    :func:`mcpkit.server.loading.load_server`); raises :class:`CliError` for a user
    error and :class:`UserCodeError` when the module raised (rule 2)."""
    try:
        return loading.load_server(target)
    except LoadError as exc:
        raise CliError(str(exc)) from None


def _watched_dir(target: str) -> Path:
    module_name = target.partition(":")[0]
    if module_name.endswith(".py") or "/" in module_name:
        return Path(module_name).resolve().parent
    return Path.cwd()


def reload(target: str, argv: list[str]) -> int:
    """Rule 4: run ``mcpkit <argv>`` (``--reload`` removed) and restart it on changes;
    returns the last child's exit status."""
    try:
        watchfiles: Any = importlib.import_module("watchfiles")  # an optional extra
    except ImportError:
        raise CliError(
            "--reload needs watchfiles: pip install 'mcpkit-core[reload]' "
            "(or uv pip install watchfiles)"
        ) from None
    command = shlex.join([sys.executable, "-m", "mcpkit.cli.main", *argv])
    watched = _watched_dir(target)
    sys.stderr.write(f"mcpkit run: reloading on changes to .py files under {watched}\n")

    def changed(changes: set[tuple[Any, str]]) -> None:
        names = sorted({Path(p).name for _, p in changes})
        sys.stderr.write(f"mcpkit run: {', '.join(names)} changed; restarting\n")

    status: int = watchfiles.run_process(
        watched,
        target=command,
        target_type="command",
        callback=changed,
        watch_filter=watchfiles.PythonFilter(),
        debounce=400,
    )
    return status
