"""``mcpkit run app.py --auth-provider google ...``: serve a server behind the OAuth
proxy from the command line or a config file (the auth plugin's ``configure_server``).

::

    export MCPKIT_AUTH_CLIENT_SECRET=...        # never on the command line
    mcpkit run app.py --transport http --port 8000 \\
        --auth-provider google --auth-client-id 123.apps.googleusercontent.com \\
        --auth-public-url https://mcp.example.com
    mcpkit run app.py --transport http --auth-config proxy.toml

Rules:
1. Every setting comes from a flag, else the TOML file of ``--auth-config`` (keys are
   the flags' names without ``--auth-``/``--``, with ``_``: ``provider``, ``client_id``,
   ``issuer``, ``domain``, ``tenant``, ``realm``, ``base_url``, ``public_url``,
   ``upstream_scopes``, ``scopes``, ``client_secret_env``); an unknown key is an error
   naming the closest known one. The scopes are arrays of non-empty strings without
   spaces, every other value a non-empty string; another type is an error (a bare
   string of scopes would otherwise be read as one scope per character).
2. The client secret is read from the environment variable ``client_secret_env``
   (default ``MCPKIT_AUTH_CLIENT_SECRET``), never from a flag or the file.
3. Everything is checked before the server serves, each problem one line naming the
   flag: an unknown provider (with the closest name), a missing client id or secret, a
   provider's missing field (``--auth-issuer`` for ``oidc``, ``--auth-domain`` for
   ``auth0``/``okta``, ``--auth-realm`` and ``--auth-base-url`` for ``keycloak``), the
   stdio transport, a public URL that is not absolute ``https`` (plain ``http`` only on
   loopback), and, with ``--redis``, a missing shared secret
   (``MCPKIT_AUTH_SECRET``, 64 hex digits) or signing key (``--auth-signing-key-file``).
4. The public URL defaults to ``http://<host>:<port>`` when the server listens on
   loopback with a fixed port; otherwise ``--auth-public-url`` is required.
"""

from __future__ import annotations

import argparse
import difflib
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpkit.cli.plugins import CliError
from mcpkit.core.shapes import as_list

__all__ = ["add_server_options", "configure_server"]

_KEYS = (
    "provider",
    "client_id",
    "client_secret_env",
    "issuer",
    "domain",
    "tenant",
    "realm",
    "base_url",
    "public_url",
    "upstream_scopes",
    "scopes",
    "signing_key_file",
)
_NEEDS: dict[str, tuple[str, ...]] = {
    "oidc": ("issuer",),
    "auth0": ("domain",),
    "okta": ("domain",),
    "keycloak": ("realm", "base_url"),
}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """The flags (rule 1); imports nothing heavy (the CLI loads this on ``mcpkit run``)."""
    g = parser.add_argument_group(
        "OAuth proxy in front of your identity provider (mcpkit-ext-auth)"
    )
    g.add_argument(
        "--auth-provider",
        metavar="NAME",
        help="oidc, github, google, entra, auth0, okta or keycloak: protect the server and "
        "log users in there",
    )
    g.add_argument("--auth-config", type=Path, metavar="PATH", help="a TOML file of these settings")
    g.add_argument("--auth-client-id", metavar="ID", help="the proxy's client id at the provider")
    g.add_argument(
        "--auth-client-secret-env",
        metavar="VAR",
        help="environment variable holding the client secret (default MCPKIT_AUTH_CLIENT_SECRET)",
    )
    g.add_argument("--auth-issuer", metavar="URL", help="the OpenID Provider's issuer (oidc)")
    g.add_argument("--auth-domain", metavar="HOST", help="the tenant's domain (auth0, okta)")
    g.add_argument("--auth-tenant", metavar="ID", help="tenant id or organizations/common (entra)")
    g.add_argument("--auth-realm", metavar="NAME", help="the realm (keycloak)")
    g.add_argument("--auth-base-url", metavar="URL", help="the Keycloak server's URL (keycloak)")
    g.add_argument(
        "--auth-public-url",
        metavar="URL",
        help="the URL clients reach this server at (the proxy's issuer)",
    )
    g.add_argument(
        "--auth-upstream-scope",
        action="append",
        dest="auth_upstream_scopes",
        metavar="SCOPE",
        help="scope to ask the provider for (repeatable; default: the preset's)",
    )
    g.add_argument(
        "--auth-scope",
        action="append",
        dest="auth_scopes",
        metavar="SCOPE",
        help="scope this server offers its clients (repeatable)",
    )
    g.add_argument(
        "--auth-signing-key-file",
        type=Path,
        metavar="PATH",
        help="the tokens' ES256 private key (PEM); replicas sharing --redis need one",
    )


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """Rule 1: the file's settings under the flags'."""
    found: dict[str, Any] = {}
    path: Path | None = args.auth_config
    if path is not None:
        import tomllib

        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CliError(f"--auth-config {path}: {exc}") from None
        for key, value in data.items():
            if key not in _KEYS:
                close = difflib.get_close_matches(key, _KEYS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise CliError(f"--auth-config {path}: unknown key {key!r}{hint}")
            found[key] = _typed(path, key, value)
    flags = {
        "provider": args.auth_provider,
        "client_id": args.auth_client_id,
        "client_secret_env": args.auth_client_secret_env,
        "issuer": args.auth_issuer,
        "domain": args.auth_domain,
        "tenant": args.auth_tenant,
        "realm": args.auth_realm,
        "base_url": args.auth_base_url,
        "public_url": args.auth_public_url,
        "upstream_scopes": args.auth_upstream_scopes,
        "scopes": args.auth_scopes,
        "signing_key_file": args.auth_signing_key_file,
    }
    found.update({k: v for k, v in flags.items() if v is not None})
    return found


def _typed(path: Path, key: str, value: object) -> object:
    """Rule 1: a file value of the right type, else :class:`CliError`."""
    if key in ("upstream_scopes", "scopes"):
        items = as_list(value)
        if items is not None and all(
            isinstance(v, str) and v and not any(c.isspace() for c in v) for v in items
        ):
            return items
        raise CliError(f'--auth-config {path}: {key} must be an array of scopes, e.g. ["a", "b"]')
    if isinstance(value, str) and value.strip():
        return value
    raise CliError(f"--auth-config {path}: {key} must be a non-empty string")


def _public_url(args: argparse.Namespace, given: str | None) -> str:
    """Rules 3-4."""
    if given is None:
        host = str(getattr(args, "host", "") or "")
        port = int(getattr(args, "port", 0) or 0)
        if host in _LOOPBACK and port:
            shown = f"[{host}]" if ":" in host else host
            return f"http://{shown}:{port}"
        raise CliError("--auth-public-url is required: the URL clients reach this server at")
    parts = urlsplit(given)
    loopback = parts.hostname in _LOOPBACK
    if (
        parts.scheme not in ("https", "http")
        or not parts.netloc
        or (parts.scheme == "http" and not loopback)
    ):
        raise CliError(
            f"--auth-public-url {given!r}: an absolute https:// URL (http only on loopback)"
        )
    return given.rstrip("/")


def configure_server(args: argparse.Namespace, server: Any) -> None:
    """Rules 1-4: install the proxy on ``server``, or raise :class:`CliError`."""
    if args.auth_provider is None and args.auth_config is None:
        return
    from mcpkit.ext.auth.oauthproxy.presets import PRESETS

    s = _settings(args)
    name = s.get("provider")
    if not isinstance(name, str) or name not in PRESETS:
        close = difflib.get_close_matches(str(name), PRESETS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise CliError(f"--auth-provider {name!r} is not one of {', '.join(PRESETS)}{hint}")
    if getattr(args, "transport", "http") != "http":
        raise CliError("--auth-provider needs --transport http (a stdio server has no login)")
    client_id = s.get("client_id")
    if not client_id:
        raise CliError("--auth-client-id is required")
    env = str(s.get("client_secret_env") or "MCPKIT_AUTH_CLIENT_SECRET")
    secret = os.environ.get(env, "").strip()
    if not secret:
        raise CliError(f"the client secret goes in the environment variable {env}, which is empty")
    for need in _NEEDS.get(name, ()):
        if not s.get(need):
            raise CliError(f"--auth-provider {name} needs --auth-{need.replace('_', '-')}")
    public = _public_url(args, s.get("public_url"))
    options: dict[str, Any] = {"client_id": client_id, "client_secret": secret}
    for key in ("issuer", "domain", "tenant", "realm", "base_url"):
        if s.get(key):
            options[key] = s[key]
    if s.get("upstream_scopes"):
        options["scopes"] = list(s["upstream_scopes"])
    try:
        upstream = PRESETS[name](**options)
    except (TypeError, ValueError) as exc:
        raise CliError(f"--auth-provider {name}: {exc}") from None
    _install(args, server, upstream, public, s)


def _install(
    args: argparse.Namespace, server: Any, upstream: Any, public: str, s: dict[str, Any]
) -> None:
    from mcpkit.ext.auth.oauthproxy.proxy import OAuthProxy

    path = str(getattr(args, "path", "/mcp") or "/mcp")
    proxy_options: dict[str, Any] = {}
    key_file = s.get("signing_key_file")
    if key_file is not None:
        try:
            proxy_options["signing_key"] = Path(key_file).read_bytes()
        except OSError as exc:
            raise CliError(f"--auth-signing-key-file: {exc}") from None
    redis_url = getattr(args, "redis", None)
    if redis_url:
        from mcpkit.ext.auth.oauthproxy.store import RedisProxyStore
        from mcpkit.server.redis import RedisSettings

        secret_hex = os.environ.get("MCPKIT_AUTH_SECRET", "")
        try:
            proxy_options["secret_key"] = bytes.fromhex(secret_hex)
        except ValueError:
            raise CliError("MCPKIT_AUTH_SECRET must be 64 hex digits") from None
        if len(proxy_options["secret_key"]) < 32:
            raise CliError(
                "with --redis, MCPKIT_AUTH_SECRET (64 hex digits) must be set on all replicas"
            )
        if "signing_key" not in proxy_options:
            raise CliError("with --redis, --auth-signing-key-file must name the replicas' key")
        proxy_options["store"] = RedisProxyStore(RedisSettings(redis_url))
    try:
        proxy = OAuthProxy(
            upstream,
            base_url=public,
            resource=public + path,
            scopes_supported=list(s.get("scopes") or ()) or None,
            **proxy_options,
        )
    except ValueError as exc:
        raise CliError(f"OAuth proxy: {exc}") from None
    proxy.install(server)
