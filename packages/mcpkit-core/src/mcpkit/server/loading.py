"""Loading a server named by ``module:attr`` (``mcpkit run``, HTTP worker processes).

Rules:
1. The target is ``module:attr`` or ``path/to/file.py:attr``; without ``:attr`` the
   first of ``server``, ``mcp`` and ``app`` that the module defines is used. A callable
   that is not a :class:`~mcpkit.server.Server` is a factory and is called with no
   arguments; it must return a Server.
2. A user error raises :class:`LoadError` with one or two lines of text, never a
   traceback: a missing file or module, a missing attribute (naming the Servers the
   module does define), a syntax error in the user's code (``file:line``), something
   that is not a Server. An exception raised by the user's module while it is imported
   is the user's bug: :class:`UserCodeError` carries its traceback with the user's
   frames only (mcpkit's own, core or extension, and importlib's are left out, counted
   on one line).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from mcpkit.server.app import Server

__all__ = ["DEFAULT_ATTRS", "LoadError", "UserCodeError", "load_server"]

DEFAULT_ATTRS = ("server", "mcp", "app")
"""Attributes tried, in order, when the target names none (rule 1)."""


class LoadError(Exception):
    """A user error: the target cannot be found, imported or used (rule 2: one or two
    lines, no traceback). ``mcpkit run`` reports it as a CLI error (exit status 2)."""


class UserCodeError(Exception):
    """The user's module raised while it was imported (rule 2: traceback, status 1)."""


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise LoadError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {path} as a Python module")
    loader = spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    sys.path.insert(0, str(path.parent))
    _execute(lambda: loader.exec_module(module), str(path))
    return module


def _import_module(name: str) -> Any:
    sys.path.insert(0, str(Path.cwd()))
    holder: list[Any] = []
    _execute(lambda: holder.append(importlib.import_module(name)), name, module=name)
    return holder[0]


def _is_users(frame: FrameType) -> bool:
    """Rule 2: a frame of the user's code, not of mcpkit (core or an extension) or of
    the import machinery."""
    module = str(frame.f_globals.get("__name__", ""))
    if module == "mcpkit" or module.startswith("mcpkit."):
        return False
    return not frame.f_code.co_filename.startswith("<frozen")


def _strip_frames(tb: traceback.TracebackException, exc: BaseException | None) -> int:
    """Keep only the user's frames of ``tb`` (built from ``exc``) and of the exceptions
    chained to it; returns how many frames left out were called by the user's code."""
    if exc is None:
        return 0
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    hidden = 0
    if len(frames) == len(tb.stack):
        users = [_is_users(f) for f in frames]
        kept = [s for s, mine in zip(tb.stack, users, strict=True) if mine]
        # what the user's code called into (the loader's own frames go unsaid)
        hidden = users[users.index(True) :].count(False) if True in users else 0
        tb.stack = traceback.StackSummary.from_list(kept)
    if tb.__cause__ is not None:
        hidden += _strip_frames(tb.__cause__, exc.__cause__)
    if tb.__context__ is not None:
        hidden += _strip_frames(tb.__context__, exc.__context__)
    return hidden


def _user_traceback(exc: BaseException) -> str:
    """Rule 2: the traceback of ``exc`` without mcpkit's and importlib's own frames
    (and a line saying how many of mcpkit's the user's code had called)."""
    tb = traceback.TracebackException.from_exception(exc)
    hidden = _strip_frames(tb, exc)
    text = "".join(tb.format()).rstrip()
    if hidden:
        text += f"\n({hidden} frames inside mcpkit not shown)"
    return text


def _execute(run: Any, what: str, *, module: str | None = None) -> None:
    """Run the user's code (rule 2): ``module`` names the module being imported, so a
    missing module of that name is told apart from a missing dependency."""
    try:
        run()
    except SyntaxError as exc:
        where = f"{exc.filename}:{exc.lineno}" if exc.lineno else str(exc.filename or what)
        line = (exc.text or "").strip()
        raise LoadError(f"{where}: {exc.msg}" + (f"\n    {line}" if line else "")) from None
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module is not None and (missing == module or module.startswith(missing + ".")):
            raise LoadError(
                f"no module named {missing!r} (searched the current directory and sys.path; "
                "for a file give path/to/file.py)"
            ) from None
        raise LoadError(
            f"importing {what}: {exc}\n    is it installed for {sys.executable}?"
        ) from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise UserCodeError(f"importing {what} raised:\n{_user_traceback(exc)}") from None


def _servers_in(module: ModuleType) -> list[str]:
    names = vars(module)
    return [name for name, value in names.items() if isinstance(value, Server)]


def load_server(target: str) -> Server:
    """The :class:`~mcpkit.server.Server` named by ``target`` (rule 1); raises
    :class:`LoadError` for a user error and :class:`UserCodeError` when the module raised
    (rule 2)."""
    module_name, _, attr = target.partition(":")
    if module_name.endswith(".py") or "/" in module_name:
        module = _import_file(Path(module_name).resolve())
    else:
        module = _import_module(module_name)
    if not attr:
        attr = next((a for a in DEFAULT_ATTRS if hasattr(module, a)), "")
        if not attr:
            found = _servers_in(module)
            hint = f"; it defines {', '.join(found)}" if found else ""
            raise LoadError(
                f"{module_name} has no 'server', 'mcp' or 'app'{hint}: name one as "
                f"{module_name}:NAME"
            )
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            found = _servers_in(module)
            hint = f" (Servers there: {', '.join(found)})" if found else ""
            raise LoadError(f"{module_name} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    if not isinstance(obj, Server) and callable(obj):
        try:
            inspect.signature(obj).bind()
        except TypeError:
            raise LoadError(f"{target} is a function that needs arguments, not a factory") from None
        except ValueError:
            pass
        holder: list[Any] = []
        _execute(lambda: holder.append(obj()), f"{target}()")
        obj = holder[0]
    if not isinstance(obj, Server):
        raise LoadError(f"{target} is not an mcpkit Server (got {type(obj).__name__})")
    return obj
