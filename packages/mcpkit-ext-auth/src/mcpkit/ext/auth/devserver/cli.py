"""Command line of the development authorization server:
``python -m mcpkit.ext.auth.devserver`` (and, through the CLI plugin, ``mcpkit auth-server``).

::

    python -m mcpkit.ext.auth.devserver --port 9000 --scope mcp:read \\
        --client-id my-app --redirect-uri http://127.0.0.1/callback

Rules:
1. Binds 127.0.0.1 unless ``--host`` says otherwise; ``--port 0`` takes a free port.
2. Once listening, prints ``issuer: <url>``, ``metadata: <url>`` and ``jwks: <url>`` on
   stdout (one line each, flushed), so a script can read the issuer; notes go to stderr.
3. ``--client-id`` pre-registers one client (``--client-secret`` makes it confidential,
   ``client_secret_basic``/``client_secret_post``; ``--redirect-uri`` repeatable, loopback
   ones match any port). Without it clients register dynamically or by CIMD URL.
4. Runs until SIGINT or SIGTERM, then exits 0; a bind failure exits 2 with the reason.
5. ``--client-scopes offered`` (the default here, unlike the library class's
   ``"registered"``): a client that registered with a ``scope`` may still ask for any
   scope the server offers, so the official SDKs (which register with their first
   challenge's scope) can step up; ``--client-scopes registered`` limits it to its
   registered scope, as a production server may. The stderr note names the policy.
6. A refused option value exits 2 naming the flag (``--issuer-path``), not the
   constructor argument (:func:`mcpkit.cli.errors.cli_message`); ``--port`` outside
   0..65535 and a ``--token-ttl`` that is not a positive integer are refused while
   parsing (:mod:`mcpkit.cli.flags`), status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

import anyio

from mcpkit.cli.flags import count, port
from mcpkit.ext.auth.devserver.clients import CLIENT_SCOPES
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.server import DevAuthServer, serve_dev_auth_server

__all__ = ["add_arguments", "build_server", "main", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the server (rules 1 and 3) on ``parser``."""
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=9000, help="port; 0 = any free (9000)")
    parser.add_argument("--issuer-path", default="", metavar="PATH", help="issuer URL path")
    parser.add_argument(
        "--issuer",
        metavar="URL",
        help="fix the issuer URL (e.g. https://auth.example behind a TLS proxy); "
        "default http://HOST:PORT + --issuer-path",
    )
    parser.add_argument(
        "--scope",
        action="append",
        dest="scopes_supported",
        metavar="SCOPE",
        help="a scope it offers (repeatable; default: any scope is granted)",
    )
    parser.add_argument(
        "--client-scopes",
        choices=CLIENT_SCOPES,
        default="offered",
        help="offered (default, development): a registered client may ask for any scope "
        "offered, so clients that registered with their first scope can step up; "
        "registered: only scopes within its registered scope (RFC 7591)",
    )
    parser.add_argument("--alg", choices=("ES256", "RS256"), default="ES256")
    parser.add_argument("--subject", default="dev-user", help="the test user (dev-user)")
    parser.add_argument(
        "--token-ttl",
        type=count(unit=" (seconds)"),
        default=3600,
        metavar="SECONDS",
        help="access token lifetime (a positive integer)",
    )
    parser.add_argument(
        "--dpop-nonce",
        action="store_true",
        help="require the server's DPoP nonce in token-endpoint proofs (RFC 9449 section 8)",
    )
    parser.add_argument(
        "--trust-issuer",
        action="append",
        dest="trusted_issuers",
        default=[],
        metavar="URL",
        help="accept JWT-bearer assertions from this workload identity issuer "
        "(keys by OpenID discovery; repeatable; SEP-1933)",
    )
    parser.add_argument("--client-id", help="pre-register a client with this id")
    parser.add_argument("--client-secret", help="its secret (default: a public client)")
    parser.add_argument(
        "--redirect-uri",
        action="append",
        dest="redirect_uris",
        default=[],
        metavar="URI",
        help="a redirect URI of --client-id (repeatable)",
    )


def build_server(args: argparse.Namespace) -> DevAuthServer:
    """A :class:`DevAuthServer` from parsed options (``ValueError`` on bad values)."""
    server = DevAuthServer(
        issuer=args.issuer,
        issuer_path=args.issuer_path,
        scopes_supported=args.scopes_supported,
        alg=args.alg,
        subject=args.subject,
        limits=DevServerLimits(access_token_ttl_s=args.token_ttl),
        require_dpop_nonce=args.dpop_nonce,
        trusted_issuers=dict.fromkeys(args.trusted_issuers),
        client_scopes=args.client_scopes,
    )
    if args.client_id:
        server.register_client(
            args.client_id, client_secret=args.client_secret, redirect_uris=args.redirect_uris
        )
    return server


def run(args: argparse.Namespace) -> int:
    """Rules 1, 2 and 4: serve until a signal; the exit status."""
    try:
        server = build_server(args)
    except ValueError as error:  # rule 5: the option named by its flag
        from mcpkit.cli.errors import cli_message, option_flags

        message = cli_message(error, args, flags=option_flags(add_arguments), bare=True)
        print(f"mcpkit auth-server: {message}", file=sys.stderr)
        return 2

    async def serve() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with serve_dev_auth_server(server, host=args.host, port=args.port) as running:
                print(f"issuer: {running.issuer}", flush=True)
                print(f"metadata: {running.metadata_url}", flush=True)
                print(f"jwks: {running.jwks_url}", flush=True)
                scopes = (
                    "registered clients may ask for any offered scope (--client-scopes)"
                    if running.client_scopes == "offered"
                    else "registered clients get only their registered scope"
                )
                print(
                    f"mcpkit auth-server: development only; {running.subject!r} consents to "
                    f"every request; {scopes}. Ctrl-C stops it.",
                    file=sys.stderr,
                    flush=True,
                )
                async for _ in signals:
                    break

    try:
        anyio.run(serve)
    except OSError as error:
        where = f"{args.host}:{args.port}"
        print(f"mcpkit auth-server: cannot serve on {where}: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcpkit.ext.auth.devserver",
        description="A development OAuth 2.1 authorization server (never expose it).",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
