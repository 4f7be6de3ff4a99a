"""CLI plugins: installed distributions add subcommands and client options to ``mcpkit``.

A distribution declares an entry point in the ``mcpkit.cli`` group whose object is a
:class:`CliPlugin` (or a zero-argument callable returning one)::

    [project.entry-points."mcpkit.cli"]
    auth = "mcpkit.ext.auth.cli:plugin"

Rules:
1. Core never imports an extension: plugins are found only through
   :func:`importlib.metadata.entry_points` (group ``mcpkit.cli``), in entry-point name
   order, and nothing else names them.
2. A plugin that fails to load, or whose hook raises while the parser is built, is left
   out with one warning on stderr naming the plugin and its distribution; every other
   command and plugin still works. Options a failing ``add_client_options`` had already
   added stay (argparse cannot take them back); its ``configure_client`` is not called.
3. ``add_commands(subparsers)`` adds subcommands with ``subparsers.add_parser(...)`` and
   sets ``parser.set_defaults(handler=fn)``; ``mcpkit`` calls ``fn(args)`` and exits with
   its return value (``None`` = 0).
4. ``add_client_options(parser)`` adds options to the client commands (``mcpkit ls``,
   ``call``, ``read``, ``prompt``; called once per command); ``configure_client(args,
   config)`` then turns them into :class:`ClientConfig` changes (``headers``, ``auth``,
   ``connect_timeout_s``) before the client connects. Two plugins may not both set
   ``auth``: the second one is a usage error.
5. A hook that wants to stop the command with a message raises :class:`CliError`
   (status 2, the message on stderr, no traceback). Any other exception from
   ``configure_client`` is a plugin fault: a warning naming the plugin, and the command
   goes on without that plugin's changes (rule 2).
6. A :class:`LazyCommand` costs nothing until it is used: ``mcpkit`` registers its name and
   help, and imports its module (``add_arguments(parser)`` and ``run(args) -> int``) only
   when that subcommand is parsed or its help shown, so a plugin's heavy dependencies do
   not slow every ``mcpkit`` start. A module that fails to import then is a usage error
   (status 2) naming the plugin.
7. ``explain_error(exc, args)`` says how to fix a library error with this plugin's flags
   (``--auth`` for an HTTP 401), or returns None; ``mcpkit`` shows the first answer
   after the error's problem, in place of the library's Python advice
   (:mod:`mcpkit.cli.errors`).
8. ``add_server_options(parser)`` adds options to ``mcpkit run``; ``configure_server(args,
   server)`` applies them to the loaded :class:`~mcpkit.server.Server` before its start-up
   checks and before it serves (an auth plugin protects it). Unlike the client hooks it
   fails closed: any exception from it stops the command (status 2, one line naming the
   plugin), since serving without what the options asked for (say, unprotected) is
   worse than not serving.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar, overload

__all__ = [
    "ENTRY_POINT_GROUP",
    "CliError",
    "CliParser",
    "CliPlugin",
    "ClientConfig",
    "LazyCommand",
    "LoadedPlugin",
    "configure_server",
    "load_plugins",
]

ENTRY_POINT_GROUP = "mcpkit.cli"


class CliError(Exception):
    """Raised by a plugin hook to stop the command: ``mcpkit`` prints
    ``mcpkit: <message>`` on stderr and exits with status 2 (rule 5)."""


class RefusedAtStartup(CliError):
    """A server's configuration mistake found as it starts
    (:class:`mcpkit.server.startup.ConfigurationError`), worded for the code that
    configured it; ``refusal`` is the error, for a command whose flags configured the
    server to word it in those flags instead (``mcpkit proxy --upstream-era``)."""

    def __init__(self, refusal: BaseException) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


@dataclass
class ClientConfig:
    """What ``mcpkit ls``/``call`` connect with; plugins change it in ``configure_client``.

    ``target``: the URL or command line as given. ``headers``: extra HTTP headers
    (``--header`` values are already in it). ``auth``: the object passed as
    ``Client(url, auth=...)``: an :class:`~mcpkit.client.http.HttpPlugin` (e.g. the auth
    extension's OAuth provider) or an ``httpx2.Auth``; None = no authorization.
    ``set_by``: the plugin that set ``auth`` (rule 4). ``connect_timeout_s``: seconds the
    first request may take, when a plugin makes it wait for a person (an interactive login
    runs inside it); None = ``--connect-timeout``. Plugins only raise it.
    """

    target: str
    # kind-ok: unbounded-table configuration the user writes
    headers: dict[str, str] = field(default_factory=dict[str, str])
    auth: Any = None
    set_by: str | None = None
    connect_timeout_s: float | None = None

    @property
    def is_http(self) -> bool:
        """True for a Streamable HTTP target (``http://`` or ``https://``)."""
        return self.target.startswith(("http://", "https://"))


@dataclass(frozen=True)
class LazyCommand:
    """A subcommand imported on use (rule 6): ``name`` and ``help`` as ``mcpkit --help``
    shows them; ``module`` (dotted) defines ``add_arguments(parser)`` and
    ``run(args) -> int | None``."""

    name: str
    help: str
    module: str


_Namespace = TypeVar("_Namespace")


class CliParser(argparse.ArgumentParser):
    """The parser class of ``mcpkit``'s subcommands: ``populate``, when set, is called
    once, before the parser is first used to parse or to show help (rule 6)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.populate: Callable[[CliParser], None] | None = None

    def _populated(self) -> None:
        populate, self.populate = self.populate, None
        if populate is not None:
            populate(self)

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(
        self, args: Iterable[str] | None, namespace: _Namespace
    ) -> tuple[_Namespace, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _Namespace) -> tuple[_Namespace, list[str]]: ...
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        self._populated()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._populated()
        return super().format_help()


@dataclass(frozen=True)
class CliPlugin:
    """One distribution's additions to ``mcpkit`` (every hook optional).

    ``commands``: :class:`LazyCommand` subcommands (rule 6). ``add_commands(subparsers)``:
    add subcommands directly (rule 3). ``add_client_options(parser)``: add options to
    ``ls`` and ``call``. ``configure_client(args, config)``: apply them to the
    :class:`ClientConfig` (rule 4). ``explain_error(exc, args)``: the fix of a library
    error in this plugin's flags, or None (rule 7).
    """

    commands: tuple[LazyCommand, ...] = ()
    add_commands: Callable[[Any], None] | None = None
    add_client_options: Callable[[argparse.ArgumentParser], None] | None = None
    configure_client: Callable[[argparse.Namespace, ClientConfig], None] | None = None
    explain_error: Callable[[BaseException, argparse.Namespace], str | None] | None = None
    add_server_options: Callable[[argparse.ArgumentParser], None] | None = None
    configure_server: Callable[[argparse.Namespace, Any], None] | None = None


@dataclass
class LoadedPlugin:
    """A plugin that loaded: its entry-point ``name``, its distribution (``dist``, may be
    ``"?"``) and the :class:`CliPlugin`. ``broken`` is set when a hook failed (rule 2)."""

    name: str
    dist: str
    plugin: CliPlugin
    broken: bool = False

    @property
    def label(self) -> str:
        return f"{self.name!r} ({self.dist})"

    def add_lazy_commands(self, sub: Any) -> None:
        """Rule 6: register :attr:`CliPlugin.commands` on the subparsers ``sub`` (a failure,
        e.g. a name already taken, is rule 2's warning)."""
        try:
            for command in self.plugin.commands:
                parser = sub.add_parser(command.name, help=command.help, description=command.help)
                parser.populate = self._loader(command)
        except Exception as exc:
            self.broken = True
            warn(f"plugin {self.label} failed in commands: {type(exc).__name__}: {exc}")

    def _loader(self, command: LazyCommand) -> Callable[[CliParser], None]:
        def populate(parser: CliParser) -> None:
            import importlib

            try:
                module = importlib.import_module(command.module)
                module.add_arguments(parser)
            except Exception as exc:
                parser.error(
                    f"plugin {self.label} cannot provide {command.name!r}: "
                    f"{type(exc).__name__}: {exc}"
                )
            parser.set_defaults(handler=module.run)

        return populate

    def call(self, hook: str, *args: Any) -> bool:
        """Run ``hook`` if the plugin has it; a :class:`CliError` propagates, any other
        exception is a warning and marks the plugin broken (rule 2). Returns True when
        the hook ran (or is absent) without fault."""
        if self.broken:
            return False
        fn = getattr(self.plugin, hook)
        if fn is None:
            return True
        try:
            fn(*args)
        except CliError:
            raise
        except Exception as exc:
            self.broken = True
            warn(f"plugin {self.label} failed in {hook}: {type(exc).__name__}: {exc}")
            return False
        return True


def configure_server(
    plugins: Iterable[LoadedPlugin], args: argparse.Namespace, server: Any
) -> None:
    """Rule 8: every plugin's ``configure_server``; any fault is a :class:`CliError`."""
    for loaded in plugins:
        fn = loaded.plugin.configure_server
        if fn is None or loaded.broken:
            continue
        try:
            fn(args, server)
        except CliError:
            raise
        except Exception as exc:
            raise CliError(f"plugin {loaded.label}: {type(exc).__name__}: {exc}") from None


def warn(message: str) -> None:
    """One diagnostic line on stderr (stdout may belong to the protocol)."""
    sys.stderr.write(f"mcpkit: warning: {message}\n")


def _dist_name(ep: EntryPoint) -> str:
    dist = ep.dist
    return dist.name if dist is not None else "?"


def load_plugins(group: str = ENTRY_POINT_GROUP) -> list[LoadedPlugin]:
    """Every plugin of ``group`` that loads, in name order (rules 1 and 2)."""
    loaded: list[LoadedPlugin] = []
    seen: set[str] = set()
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        if ep.name in seen:  # the same distribution on sys.path twice
            continue
        seen.add(ep.name)
        dist = _dist_name(ep)
        try:
            obj: Any = ep.load()
            if not isinstance(obj, CliPlugin) and callable(obj):
                obj = obj()
            if not isinstance(obj, CliPlugin):
                raise TypeError(f"{ep.value} is a {type(obj).__name__}, not a CliPlugin")
        except Exception as exc:
            warn(f"plugin {ep.name!r} ({dist}) not loaded: {type(exc).__name__}: {exc}")
            continue
        loaded.append(LoadedPlugin(ep.name, dist, obj))
    return loaded
