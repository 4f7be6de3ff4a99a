"""``mcpkit proxy TARGET``: serve another MCP server through mcpkit's proxy.

Usage::

    mcpkit proxy http://127.0.0.1:8765/mcp                # a remote server, on stdio
    mcpkit proxy "python server.py" --transport http --port 9000
    mcpkit proxy --upstream-era legacy -- python server.py --verbose

Rules:
1. ``TARGET`` is an ``http://``/``https://`` URL (a Streamable HTTP upstream) or a
   command (a stdio upstream): one word is split like a shell would, as ``mcpkit ls``
   does (``"python server.py"``); several words, after ``--``, are the argument vector
   as given.
2. The proxy serves over stdio by default and over Streamable HTTP with exactly the
   options of ``mcpkit run`` (``--transport http --host --port --path --stateless
   --response-mode`` ...; the same option builder), both protocol eras downstream.
3. ``--upstream-era adaptive|legacy|modern`` pins the era spoken to the upstream
   (default: adaptive, the client's probe); ``--upstream-version`` the handshake-era
   version asked for. Pinning the other era than the downstream client speaks is the
   era bridge (``docs/proxy.md``).
4. Upstream credentials are the proxy's own: ``--header`` values and what CLI plugins
   add through their client options (for example the auth extension's OAuth options),
   HTTP upstreams only (else status 2). Nothing the downstream client sends
   (``Authorization``, cookies) is forwarded: the spec forbids token passthrough. A
   proxy holding such credentials refuses anonymous HTTP callers with 403 (they would
   borrow the upstream's protection, issue 25 §4) unless ``--serve-anonymous``.
5. ``--timeout`` (seconds one forwarded request may wait for the upstream) and
   ``--connect-timeout`` (seconds to reach the upstream) set the proxy's
   :class:`~mcpkit.proxy.ProxyLimits`; a slow or dead upstream is a JSON-RPC
   error to the client, never a hang.
6. A usage error (bad header, empty command, plugin refusal) exits with status 2 and
   one line on stderr; on stdio, stdout belongs to the protocol.
7. With ``--upstream-era legacy|modern`` the upstream is reached once before serving:
   one that speaks only the other era stops the start with status 2 and one line
   naming the era it speaks and the ``--upstream-era`` to use
   (:mod:`mcpkit.proxy.era`). An upstream that cannot be reached at all is a
   warning; the proxy serves and reaches it when it can.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from mcpkit.cli.flags import seconds
from mcpkit.cli.plugins import CliError, LoadedPlugin, RefusedAtStartup

__all__ = ["add_proxy_command", "build_proxy", "run_proxy"]

AddServeOptions = Callable[[argparse.ArgumentParser, str], None]
Serve = Callable[[Any, argparse.Namespace], None]


def add_proxy_command(
    sub: Any, add_serve_options: AddServeOptions, serve: Serve, plugins: Sequence[LoadedPlugin]
) -> None:
    """Register ``proxy`` on the ``mcpkit`` subparsers ``sub``: ``add_serve_options`` and
    ``serve`` are ``mcpkit run``'s own (rule 2); ``plugins`` add upstream options
    (rule 4)."""
    p = sub.add_parser(
        "proxy",
        help="serve another MCP server (URL or command) through a proxy; bridges eras "
        "and transports",
        description="Forward everything to the MCP server TARGET: a URL or a command. "
        "Serves stdio by default (--transport http for Streamable HTTP).",
    )
    p.add_argument(
        "target",
        nargs="+",
        metavar="TARGET",
        help="upstream URL (http[s]://...) or command line; words after -- are the argv",
    )
    add_serve_options(p, "stdio")
    upstream = p.add_argument_group("upstream")
    upstream.add_argument(
        "--upstream-era",
        choices=("adaptive", "legacy", "modern"),
        default="adaptive",
        help="protocol era spoken to the upstream: probe (default), handshake era, 2026-07-28",
    )
    upstream.add_argument(
        "--upstream-version",
        default=None,
        metavar="VERSION",
        help="handshake-era protocol version asked of the upstream (default: the newest)",
    )
    upstream.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="HTTP header sent to the upstream (repeatable; the proxy's own credentials)",
    )
    upstream.add_argument(
        "--serve-anonymous",
        action="store_true",
        help="over HTTP, serve callers without a principal although the proxy holds "
        "upstream credentials (default: refused with 403; protect the proxy instead)",
    )
    upstream.add_argument(
        "--timeout",
        type=seconds(),
        default=30.0,
        metavar="SECONDS",
        dest="upstream_timeout_s",
        help="seconds one forwarded request waits for the upstream (default 30)",
    )
    upstream.add_argument(
        "--connect-timeout",
        type=seconds(),
        default=10.0,
        metavar="SECONDS",
        dest="upstream_connect_timeout_s",
        help="seconds to reach the upstream (default 10)",
    )
    for plugin in plugins:
        plugin.call("add_client_options", p)
    p.set_defaults(handler=partial(run_proxy, serve=serve, plugins=plugins))


def _target(words: Sequence[str]) -> str | list[str]:
    """Rule 1: a URL as is, else the command's argument vector."""
    if len(words) == 1:
        word = words[0]
        if word.startswith(("http://", "https://")):
            return word
        argv = shlex.split(word)
    else:
        argv = list(words)
    if not argv:
        raise CliError("empty command")
    return argv


def build_proxy(args: argparse.Namespace, plugins: Sequence[LoadedPlugin] = ()) -> Any:
    """The proxy :class:`~mcpkit.server.Server` the parsed ``args`` describe (rules
    1, 3-5); raises :class:`CliError` for a usage error."""
    from mcpkit.cli.inspect import client_config
    from mcpkit.proxy import ProxyLimits, proxy

    target = _target(args.target)
    shown = target if isinstance(target, str) else shlex.join(target)
    config = client_config(argparse.Namespace(**{**vars(args), "target": shown}), plugins)
    upstream: Any = target
    credentialed = False
    if isinstance(target, str):
        from mcpkit.client import HttpTransport
        from mcpkit.client.targets import is_plugin

        auth: Any = config.auth
        http_plugins: list[Any] = []
        if auth is not None and is_plugin(auth):
            http_plugins, auth = [auth], None
        upstream = HttpTransport(  # one transport, every upstream connection (rule 4)
            target, headers=config.headers, auth=auth, plugins=http_plugins
        )
        credentialed = bool(config.headers) or auth is not None or bool(http_plugins)
    connect_s = args.upstream_connect_timeout_s
    if config.connect_timeout_s is not None:  # a plugin waits for a person (plugins rule 4)
        connect_s = max(connect_s, config.connect_timeout_s)
    return proxy(
        upstream,
        mode=args.upstream_era,
        protocol_version=args.upstream_version,
        proxy_limits=ProxyLimits(timeout_s=args.upstream_timeout_s, connect_timeout_s=connect_s),
        credentialed=credentialed,
        serve_anonymous=bool(getattr(args, "serve_anonymous", False)),
    )


def run_proxy(
    args: argparse.Namespace, *, serve: Serve, plugins: Sequence[LoadedPlugin] = ()
) -> int:
    """Build the proxy and serve it until stopped (rule 2); returns the exit status."""
    from mcpkit.proxy.era import UpstreamEraError

    server = build_proxy(args, plugins)
    try:  # rule 7: serve() checks the pinned era before serving, on every transport
        serve(server, args)
    except RefusedAtStartup as exc:
        if isinstance(exc.refusal, UpstreamEraError):  # set by --upstream-era: say so
            raise CliError(exc.refusal.advice(cli=True)) from None
        raise
    except UpstreamEraError as exc:  # found while serving (an upstream down at start)
        raise CliError(exc.advice(cli=True)) from None
    return 0
