"""The auth extension's ``mcpkit`` commands, through core's ``mcpkit.cli`` plugin hook.

::

    mcpkit ls https://mcp.example.com/mcp --auth          # sign in in the browser, once
    mcpkit call https://mcp.example.com/mcp add '{"a": 1, "b": 2}' --auth
    mcpkit ls http://127.0.0.1:8765/mcp --token "$TOKEN"   # a bearer token you already have
    mcpkit auth-server --port 9000                         # the development authorization server

Rules:
1. ``--auth`` runs the authorization code flow with PKCE
   (:class:`~mcpkit.ext.auth.client.authcode.AuthorizationCode` through a
   :class:`~mcpkit.ext.auth.client.redirect.LoopbackRedirect` on 127.0.0.1, port
   ``--redirect-port``, 0 = any) the first time, and reuses or refreshes the tokens after:
   they are kept in a :class:`~mcpkit.ext.auth.client.storage.FileTokenStorage` (mode 0600
   in a 0700 directory) at ``--token-file``, else ``$MCPKIT_TOKEN_FILE``, else
   ``$XDG_CONFIG_HOME/mcpkit/tokens.json`` (``~/.config/mcpkit/tokens.json``), one entry
   per server URL with the issuer and resource each token was obtained for: a token is
   sent only to its server, and only while that server's metadata names its issuer
   (:mod:`~mcpkit.ext.auth.client.provider` rules 9 and 11). The
   login runs inside the first request, so that request gets ``LOGIN_TIMEOUT_S`` (300 s)
   for the browser plus a minute, not the client's 10 s probe bound
   (``ClientConfig.connect_timeout_s``).
2. The authorization URL is opened with :mod:`webbrowser` (``$BROWSER`` is honoured); when
   no browser opens, it is printed on stderr, never on stdout (stdout holds results).
3. ``--token TOKEN`` sends ``Authorization: Bearer TOKEN`` on every request; ``--auth`` and
   ``--token`` together are a usage error (status 2), and so is either on a stdio target.
4. ``--scope`` (repeatable) replaces the scopes the server's challenge asks for.
5. ``mcpkit auth-server`` serves the development authorization server
   (:mod:`mcpkit.ext.auth.devserver.cli`: options, output and exit status) on 127.0.0.1
   by default; a lazy command, imported only when used (rule 6).
6. Importing this module imports nothing of the OAuth or crypto libraries: ``mcpkit`` loads
   it on every start, so they are imported only when an option is used.
7. An HTTP 401 or 403 the client could not resolve is explained in these flags (core's
   ``explain_error`` hook): without credentials, ``--auth`` or ``--token``; a refused
   ``--token`` or ``--auth`` token, how to get another; a challenge naming scopes,
   ``--auth --scope S`` for each.
8. ``mcpkit run app.py --auth-provider NAME ...`` (or ``--auth-config FILE``) serves the
   server behind the OAuth proxy (:mod:`mcpkit.ext.auth.oauthproxy.cli`: flags, file,
   checks); a misconfiguration stops ``mcpkit run`` before it serves.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from mcpkit.cli.flags import port
from mcpkit.cli.plugins import ClientConfig, CliError, CliPlugin, LazyCommand

__all__ = ["default_token_file", "plugin"]


def default_token_file() -> Path:
    """Rule 1: ``$MCPKIT_TOKEN_FILE``, else ``$XDG_CONFIG_HOME/mcpkit/tokens.json`` (with
    ``~/.config`` when ``XDG_CONFIG_HOME`` is unset)."""
    explicit = os.environ.get("MCPKIT_TOKEN_FILE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "mcpkit" / "tokens.json"


def add_client_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("authorization (mcpkit-ext-auth)")
    group.add_argument(
        "--auth",
        action="store_true",
        help="sign in with OAuth (authorization code + PKCE in the browser); tokens are "
        "cached in --token-file and refreshed",
    )
    group.add_argument(
        "--token", metavar="TOKEN", help="send this bearer token (Authorization: Bearer ...)"
    )
    group.add_argument(
        "--scope",
        action="append",
        dest="auth_scopes",
        metavar="SCOPE",
        help="scope to ask for with --auth (repeatable; default: what the server asks for)",
    )
    group.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="where --auth keeps tokens (default $MCPKIT_TOKEN_FILE or "
        "~/.config/mcpkit/tokens.json; mode 0600)",
    )
    group.add_argument(
        "--redirect-port",
        type=port,
        default=0,
        metavar="PORT",
        help="127.0.0.1 port receiving the --auth redirect (default 0: any free port)",
    )


def _show_url(url: str) -> None:
    """Rule 2."""
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except Exception:
        opened = False
    if not opened:
        sys.stderr.write(f"mcpkit: open this URL to authorize:\n{url}\n")
    else:
        sys.stderr.write("mcpkit: waiting for the authorization in your browser...\n")
    sys.stderr.flush()


LOGIN_TIMEOUT_S = 300.0
"""Seconds ``--auth`` waits for the person to finish the login in the browser."""


def interactive_provider(args: argparse.Namespace) -> Any:
    """The ``auth=`` object of ``--auth`` (rule 1)."""
    from mcpkit.ext.auth.client import FileTokenStorage
    from mcpkit.ext.auth.client.authcode import AuthorizationCode
    from mcpkit.ext.auth.client.provider import OAuthProvider
    from mcpkit.ext.auth.client.redirect import LoopbackRedirect

    path: Path = args.token_file or default_token_file()
    redirect = LoopbackRedirect(
        port=args.redirect_port, open_url=_show_url, timeout_s=LOGIN_TIMEOUT_S
    )
    return OAuthProvider(
        AuthorizationCode(redirect),
        storage=FileTokenStorage(path),
        scopes=args.auth_scopes,
        client_metadata={"client_name": "mcpkit CLI"},
    )


class BearerToken:
    """An :class:`~mcpkit.client.http.HttpPlugin` putting ``Authorization: Bearer <token>``
    on every request (rule 3); a 401 is left to fail the command. The token is not part
    of its ``repr``."""

    max_resends = 0
    extensions: tuple[Any, ...] = ()

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "BearerToken(***)"

    async def on_request(self, request: Any, http: Any) -> None:
        request.headers["Authorization"] = f"Bearer {self._token}"

    async def on_response(self, response: Any, http: Any) -> None:
        return None


def configure_client(args: argparse.Namespace, config: ClientConfig) -> None:
    """Rules 1, 3 and 4: ``--auth``/``--token`` become ``config.auth``."""
    if not args.auth and args.token is None:
        if args.auth_scopes or args.token_file:
            raise CliError("--scope and --token-file go with --auth")
        return
    if args.auth and args.token is not None:
        raise CliError("use one of --auth and --token")
    if not config.is_http:
        raise CliError("--auth and --token need an http(s):// target")
    if args.token is not None:
        if not args.token.strip():
            raise CliError("--token is empty")
        config.auth = BearerToken(args.token.strip())
        return
    config.auth = interactive_provider(args)
    # The login runs inside the first request: give it the redirect's own bound and a
    # minute for the token exchange, not the 10 s probe bound (rule 1).
    config.connect_timeout_s = LOGIN_TIMEOUT_S + 60.0


def explain_error(exc: BaseException, args: argparse.Namespace) -> str | None:
    """Rule 7: the fix of an HTTP 401/403 in this plugin's flags, from what was passed
    and what the server's challenge asks for; None for any other error."""
    from mcpkit.client.errors import HTTPAuthError

    if not isinstance(exc, HTTPAuthError):
        return None
    from mcpkit.ext.auth.client._http import bearer_challenge

    challenge = bearer_challenge(exc.challenge)
    scopes = challenge.get("scope", "").split()
    if exc.status == 403 or challenge.get("error") == "insufficient_scope":
        if scopes:
            wanted = " ".join(f"--scope {s}" for s in scopes)
            return f"the credentials lack a scope it asks for: sign in again with --auth {wanted}"
        return "these credentials are not allowed this: sign in as someone who is (--auth)"
    if getattr(args, "token", None) is not None:
        return "the server refused the --token: get a fresh one, or sign in with --auth"
    if getattr(args, "auth", False):
        return "the server refused the token --auth obtained: sign in again with --auth"
    return "sign in with --auth (OAuth in the browser), or send a bearer token with --token TOKEN"


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """Rule 8: the OAuth proxy's ``mcpkit run`` flags (:mod:`.oauthproxy.cli`)."""
    from mcpkit.ext.auth.oauthproxy.cli import add_server_options as add

    add(parser)


def configure_server(args: argparse.Namespace, server: Any) -> None:
    """Rule 8: protect ``server`` behind the OAuth proxy when the flags ask for it."""
    from mcpkit.ext.auth.oauthproxy.cli import configure_server as configure

    configure(args, server)


plugin = CliPlugin(
    commands=(
        LazyCommand(
            "auth-server",
            "serve the development OAuth authorization server (tests and demos; never expose it)",
            "mcpkit.ext.auth.devserver.cli",
        ),
    ),
    add_client_options=add_client_options,
    configure_client=configure_client,
    explain_error=explain_error,
    add_server_options=add_server_options,
    configure_server=configure_server,
)
"""The ``mcpkit.cli`` entry point of mcpkit-ext-auth (``auth = "mcpkit.ext.auth.cli:plugin"``)."""
