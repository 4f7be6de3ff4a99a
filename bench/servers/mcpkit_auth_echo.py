"""mcpkit's ``echo`` server (``mcpkit_echo.py``) behind the auth extension's resource server.

``--auth none`` serves it unprotected, with the same process layout, as the baseline;
``--auth jwt`` protects it with ``protect(server, AuthSettings(...))``: every request
needs an RFC 9068 access token signed by a key of ``--jwks-url`` (issuer ``--issuer``,
audience the endpoint URL ``http://127.0.0.1:<port>/mcp``). ``--no-token-cache`` sets
``ResourceServerLimits(max_cached_tokens=0)``, so every request pays the signature check.
HTTP only; the default response mode (JSON unless the handler streams), stateful.
"""

from __future__ import annotations

from _serve import check_args, parser, serve_asgi
from mcpkit_echo import build


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--auth", choices=["none", "jwt"], default="jwt")
    p.add_argument("--issuer", default="https://issuer.bench.invalid")
    p.add_argument("--jwks-url", help="the issuer's key set (JWKS), on loopback")
    p.add_argument("--no-token-cache", action="store_true")
    args = p.parse_args()
    check_args(args)
    if args.transport != "http":
        p.error("--transport http only")
    server = build()
    if args.auth == "jwt":
        from mcpkit.ext.auth.server import AuthSettings, ResourceServerLimits, protect

        limits = ResourceServerLimits(max_cached_tokens=0 if args.no_token_cache else 10_000)
        protect(
            server,
            AuthSettings(
                server_url=f"http://127.0.0.1:{args.port}/mcp",
                authorization_servers=[args.issuer],
                jwks_url=args.jwks_url,
                limits=limits,
            ),
        )
    serve_asgi(server.http_app(), args.host, args.port)


if __name__ == "__main__":
    main()
