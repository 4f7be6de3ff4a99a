"""The ``mcpkit`` command: serve a server, serve the demo, inspect and call servers.

Rules:
1. ``mcpkit run module[:attr]`` (or ``path/to/file.py[:attr]``) serves any user's server;
   the attribute (default: ``server``, ``mcp`` or ``app``) is a
   :class:`~mcpkit.server.Server` or a zero-argument factory of one (:mod:`mcpkit.cli.run`).
2. ``mcpkit demo`` serves the bundled demo server; ``ls``, ``call``, ``read`` and
   ``prompt`` are the client commands (:mod:`mcpkit.cli.inspect`); ``inspect`` summarises
   a server offline (:mod:`mcpkit.cli.offline`); ``install`` writes a host's
   configuration entry (:mod:`mcpkit.cli.install`); ``proxy`` serves another server
   through a proxy (:mod:`mcpkit.cli.proxy`). ``run`` is :mod:`mcpkit.cli.run`.
3. Diagnostics go to stderr; on stdio, stdout belongs to the protocol, from the moment
   the user's module is imported.
4. Serving stops on SIGINT/SIGTERM without a traceback: one line saying what is still in
   flight, ``--shutdown-grace`` seconds (default 5) for it to be answered, a second
   signal exits at once (:mod:`mcpkit.server.signals`). A Ctrl-C before serving starts
   (while the user's module is imported) exits with status 130, also without a traceback.
5. A closed stdin, stdout or stderr is replaced by ``/dev/null`` before anything else
   opens a descriptor (:func:`mcpkit.core.stdio.ensure_std_fds`).
6. Installed distributions add subcommands and ``ls``/``call`` options through the
   ``mcpkit.cli`` entry-point group (:mod:`mcpkit.cli.plugins`); a broken plugin is a
   warning naming it, never a broken ``mcpkit``.
7. A closed stdout (``mcpkit ls ... | head``) ends the command quietly with status 141.
8. ``--workers N``, ``--redis URL``, ``--secret-file PATH``, ``--http-stack`` go to
   :func:`~mcpkit.server.http.run.run_http`; a multi-replica setup that cannot work (no
   shared secret, stateful HTTP on several workers without Redis) or a missing extra is
   one line on stderr and exit status 2, before anything is bound.
9. Every message speaks flags: a numeric flag refuses nonsense while parsing
   (:mod:`mcpkit.cli.flags`: ``--workers 0``, ``--shutdown-grace -1``, ``--port
   70000``); an option value the server refuses (``--path`` without a leading ``/``)
   is named by its flag (:mod:`mcpkit.cli.errors`), status 2; so is a library error
   carrying a remedy (:mod:`mcpkit.core.remedies`) that a subcommand, a plugin's
   included, lets through (a port in use under ``mcpkit ui-demo``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from mcpkit.cli.flags import count, port, seconds
from mcpkit.cli.plugins import (
    CliError,
    CliParser,
    CliPlugin,
    LazyCommand,
    LoadedPlugin,
    load_plugins,
)
from mcpkit.core.remedies import Remedied
from mcpkit.core.stdio import ensure_std_fds
from mcpkit.server.signals import DEFAULT_SHUTDOWN_GRACE_S

__all__ = ["build_parser", "main", "port"]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
OFFLINE_COMMANDS = (
    LazyCommand(
        "inspect",
        "offline summary of a server: tools with typed signatures, prompts, resources",
        "mcpkit.cli.offline",
    ),
    LazyCommand(
        "install",
        "add a server to Claude Desktop, Cursor or Claude Code (or print mcp.json)",
        "mcpkit.cli.install",
    ),
)
"""Imported only when used (plugins rule 6), so they cost ``mcpkit`` nothing at start."""


def __getattr__(name: str) -> Any:
    if name == "load_server":  # kept importable from here; lives in mcpkit.cli.run
        from mcpkit.cli.run import load_server

        return load_server
    raise AttributeError(name)


def _add_serve_options(p: argparse.ArgumentParser, default_transport: str) -> None:
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default=default_transport,
        help=f"transport to serve (default: {default_transport})",
    )
    p.add_argument(
        "--shutdown-grace",
        type=seconds(zero=True),
        default=DEFAULT_SHUTDOWN_GRACE_S,
        metavar="SECONDS",
        dest="shutdown_grace_s",
        help="on SIGINT/SIGTERM, seconds running requests get to finish (default "
        f"{DEFAULT_SHUTDOWN_GRACE_S:g}); a second signal exits at once",
    )
    http = p.add_argument_group("streamable HTTP")
    http.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    http.add_argument(
        "--port", type=port, default=8765, help="port 0..65535, 0 = any free (default 8765)"
    )
    http.add_argument("--path", default="/mcp", help="endpoint path (default /mcp)")
    http.add_argument(
        "--stateless", action="store_true", help="no sessions: every request stands alone"
    )
    http.add_argument(
        "--response-mode",
        choices=("auto", "json", "sse"),
        default="auto",
        help="auto: JSON unless the handler streams (default); json: JSON-response mode; "
        "sse: always an SSE stream",
    )
    http.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="accept this Host (repeatable; enables DNS-rebinding protection on any bind)",
    )
    http.add_argument(
        "--allowed-origin",
        action="append",
        dest="allowed_origins",
        metavar="ORIGIN",
        help="accept this Origin (repeatable)",
    )
    scale = p.add_argument_group("several processes (docs/deployment.md)")
    scale.add_argument(
        "--workers",
        type=count(),
        default=1,
        metavar="N",
        help="worker processes serving one socket (default 1); N > 1 needs a shared "
        "secret, and Redis or --stateless for the handshake era",
    )
    scale.add_argument(
        "--redis",
        metavar="URL",
        help="share event store and notifications with other replicas through this Redis "
        "(default: MCPKIT_REDIS_URL; needs mcpkit-core[redis])",
    )
    scale.add_argument(
        "--secret-file",
        metavar="PATH",
        help="the secret every replica shares (default: MCPKIT_SECRET, 64 hex digits)",
    )
    scale.add_argument(
        "--http-stack",
        choices=("auto", "fast", "standard"),
        default="auto",
        help="auto: uvloop + httptools when mcpkit-core[fast] is installed (default); "
        "fast; standard: asyncio + h11",
    )
    p.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        default="INFO",
        help="level of the server's own log on stderr (default INFO)",
    )


def _serve(server: Any, args: argparse.Namespace) -> None:
    import anyio

    from mcpkit.cli.errors import cli_message, option_flags
    from mcpkit.core.remedies import OptionError
    from mcpkit.server.http.run import ListenError
    from mcpkit.server.startup import run_startup_checks

    try:  # startup rule 4: a mistake found before or while serving starts is one line
        anyio.run(run_startup_checks, server)
        if args.transport == "stdio":
            server.run("stdio", shutdown_grace_s=args.shutdown_grace_s)
        else:
            _serve_http(server, args)
    except (ListenError, OptionError) as exc:  # run rule 3; rule 9: flags, not arguments
        flags = option_flags(lambda p: _add_serve_options(p, args.transport))
        raise CliError(cli_message(exc, args, flags=flags)) from None
    except Exception as exc:
        refused = _refused(exc, args)
        if refused is None:
            raise
        raise refused from None


def _refused(exc: Exception, args: argparse.Namespace) -> CliError | None:
    """Startup rule 4: what ``mcpkit`` reports for ``exc`` raised while serving starts:
    a refusal set by flags (``--workers``, ``--redis``: it carries a CLI remedy) in
    those flags, one from the user's code as it says; None for anything else."""
    from mcpkit.cli.errors import cli_message
    from mcpkit.cli.plugins import RefusedAtStartup
    from mcpkit.core.remedies import Remedied
    from mcpkit.server.startup import configuration_error

    refusal = configuration_error(exc)
    if refusal is None:
        return None
    if isinstance(refusal, Remedied):
        return CliError(cli_message(refusal, args, bare=True))
    return RefusedAtStartup(refusal)


def _serve_http(server: Any, args: argparse.Namespace) -> None:
    server.run(
        "http",
        shutdown_grace_s=args.shutdown_grace_s,
        host=args.host,
        port=args.port,
        path=args.path,
        stateless=args.stateless,
        response_mode=args.response_mode,
        allowed_hosts=args.allowed_hosts,
        allowed_origins=args.allowed_origins,
        workers=args.workers,
        redis=args.redis,
        secret_file=args.secret_file,
        stack=args.http_stack,
        target={"run": getattr(args, "target", None), "demo": _DEMO_TARGET}.get(args.command),
    )


_DEMO_TARGET = "mcpkit.server.demo:build_demo_server"


def build_parser(plugins: list[LoadedPlugin] | None = None) -> argparse.ArgumentParser:
    """The ``mcpkit`` parser, with the commands and options of ``plugins`` (rule 6)."""
    plugins = plugins or []
    parser = argparse.ArgumentParser(prog="mcpkit", description="mcpkit: MCP servers and clients")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    run = sub.add_parser(
        "run",
        help="serve a server: module[:attr] or file.py[:attr] (attr: server, mcp or app)",
        description="Serve a server object. Without :attr the first of server, mcp and app "
        "is used; a function is called to make the server.",
    )
    run.add_argument("target", help="module[:attr] or path/to/file.py[:attr]")
    run.add_argument(
        "--reload",
        action="store_true",
        help="restart when a .py file changes (needs the mcpkit-core[reload] extra)",
    )
    _add_serve_options(run, "stdio")
    for plugin in plugins:  # plugins rule 8
        plugin.call("add_server_options", run)
    demo = sub.add_parser("demo", help="serve the bundled demo server")
    _add_serve_options(demo, "http")
    from mcpkit.cli.inspect import add_client_commands

    add_client_commands(sub, plugins)
    core = LoadedPlugin("mcpkit", "mcpkit-core", CliPlugin(commands=OFFLINE_COMMANDS))
    core.add_lazy_commands(sub)
    from mcpkit.cli.proxy import add_proxy_command

    add_proxy_command(sub, _add_serve_options, _serve, plugins)
    for plugin in plugins:
        plugin.add_lazy_commands(sub)
        plugin.call("add_commands", sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    ensure_std_fds()  # rule 5
    try:
        _main(argv)
    except KeyboardInterrupt:  # rule 4: before the serving loop's own handlers
        sys.stderr.write("mcpkit: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:  # rule 7: `mcpkit ls ... | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)


def _main(argv: list[str] | None) -> None:
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is not None:  # a plugin's subcommand or one of ours (rule 6)
        try:
            status = handler(args)
        except CliError as exc:
            sys.stderr.write(f"mcpkit {args.command}: {exc}\n")
            sys.exit(2)
        except Remedied as exc:  # rule 9: a plugin's command met a library error
            from mcpkit.cli.errors import cli_message

            sys.stderr.write(f"mcpkit {args.command}: {cli_message(exc, args, plugins)}\n")
            sys.exit(2)
        sys.exit(status or 0)
    if args.command in ("run", "demo"):
        sys.exit(_run_or_demo(args, sys.argv[1:] if argv is None else argv, plugins))
    from mcpkit.cli.inspect import run_client_command

    sys.exit(run_client_command(args, plugins))


def _run_or_demo(
    args: argparse.Namespace, argv: list[str], plugins: list[LoadedPlugin] | None = None
) -> int:
    from mcpkit.cli.plugins import configure_server
    from mcpkit.cli.run import UserCodeError, load_server, reload
    from mcpkit.server.logs import configure_logging
    from mcpkit.server.replication import ReplicaModeError

    try:
        if args.command == "run" and args.reload:
            return reload(args.target, [a for a in argv if a != "--reload"])
        configure_logging(args.log_level)  # run rule 5
        if args.command == "demo":
            from mcpkit.server.demo import build_demo_server

            _serve(build_demo_server(), args)
        elif args.transport == "stdio":
            # stdout belongs to the protocol (rule 3): what user code prints while it is
            # imported goes to stderr, like what it prints while serving (P1).
            with contextlib.redirect_stdout(sys.stderr):
                server = load_server(args.target)
            configure_server(plugins or [], args, server)
            _serve(server, args)
        else:
            server = load_server(args.target)
            configure_server(plugins or [], args, server)
            _serve(server, args)
    except ReplicaModeError as exc:  # rule 9: its shell fix, not its Python one
        from mcpkit.cli.errors import cli_message

        sys.stderr.write(f"mcpkit {args.command}: {cli_message(exc, args, bare=True)}\n")
        return 2
    except (CliError, ImportError) as exc:
        sys.stderr.write(f"mcpkit {args.command}: {exc}\n")
        return 2
    except UserCodeError as exc:
        sys.stderr.write(f"mcpkit {args.command}: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    main()
