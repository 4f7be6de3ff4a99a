"""The ``mcpkit`` command: serve a server, serve the demo, inspect and call servers.

Rules:
1. ``mcpkit run module:attr`` (or ``path/to/file.py:attr``) serves any user's server; the
   attribute is a :class:`~mcpkit.server.Server` or a zero-argument factory of one.
2. ``mcpkit demo`` serves the bundled demo server; ``mcpkit ls`` and ``mcpkit call`` are
   the client commands (:mod:`mcpkit.cli.inspect`); ``mcpkit proxy`` serves another
   server through a proxy (:mod:`mcpkit.cli.proxy`).
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
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from mcpkit.cli.plugins import CliError, CliParser, LoadedPlugin, load_plugins
from mcpkit.core.stdio import ensure_std_fds
from mcpkit.server.signals import DEFAULT_SHUTDOWN_GRACE_S

__all__ = ["load_server", "main"]


def load_server(target: str) -> Any:
    """Resolve ``module:attr`` or ``file.py:attr`` (attr defaults to ``server``)."""
    module_name, _, attr = target.partition(":")
    attr = attr or "server"
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"mcpkit: cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, str(Path.cwd()))
        module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    from mcpkit.server.app import Server

    if not isinstance(obj, Server) and callable(obj):
        obj = obj()
    if not isinstance(obj, Server):
        raise SystemExit(f"mcpkit: {target} is not an mcpkit Server (got {type(obj).__name__})")
    return obj


def _add_serve_options(p: argparse.ArgumentParser, default_transport: str) -> None:
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default=default_transport,
        help=f"transport to serve (default: {default_transport})",
    )
    p.add_argument(
        "--shutdown-grace",
        type=float,
        default=DEFAULT_SHUTDOWN_GRACE_S,
        metavar="SECONDS",
        dest="shutdown_grace_s",
        help="on SIGINT/SIGTERM, seconds running requests get to finish (default "
        f"{DEFAULT_SHUTDOWN_GRACE_S:g}); a second signal exits at once",
    )
    http = p.add_argument_group("streamable HTTP")
    http.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    http.add_argument("--port", type=int, default=8765, help="port, 0 = any free (default 8765)")
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


def _serve(server: Any, args: argparse.Namespace) -> None:
    if args.transport == "stdio":
        server.run("stdio", shutdown_grace_s=args.shutdown_grace_s)
        return
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
    )


def build_parser(plugins: list[LoadedPlugin] | None = None) -> argparse.ArgumentParser:
    """The ``mcpkit`` parser, with the commands and options of ``plugins`` (rule 6)."""
    plugins = plugins or []
    parser = argparse.ArgumentParser(prog="mcpkit", description="mcpkit: MCP servers and clients")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    run = sub.add_parser("run", help="serve a server object: module:attr or file.py:attr")
    run.add_argument("target")
    _add_serve_options(run, "stdio")
    demo = sub.add_parser("demo", help="serve the bundled demo server")
    _add_serve_options(demo, "http")
    from mcpkit.cli.inspect import add_client_commands

    add_client_commands(sub, plugins)
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


def _main(argv: list[str] | None) -> None:
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is not None:  # a plugin's subcommand (rule 6)
        try:
            status = handler(args)
        except CliError as exc:
            sys.stderr.write(f"mcpkit {args.command}: {exc}\n")
            sys.exit(2)
        sys.exit(status or 0)
    if args.command == "run":
        if args.transport == "stdio":
            # stdout belongs to the protocol (rule 3): what user code prints while it is
            # imported goes to stderr, like what it prints while serving (P1).
            with contextlib.redirect_stdout(sys.stderr):
                server = load_server(args.target)
        else:
            server = load_server(args.target)
        _serve(server, args)
    elif args.command == "demo":
        from mcpkit.server.demo import build_demo_server

        _serve(build_demo_server(), args)
    elif args.command in ("ls", "call"):
        from mcpkit.cli.inspect import run_client_command

        sys.exit(run_client_command(args, plugins))


if __name__ == "__main__":
    main()
