"""Ready-made upstream providers: GitHub, Google, Entra ID, Auth0, Okta, Keycloak.

Each is a few lines over :class:`~.upstream.OIDCProvider` (or, for GitHub, which is not
an OpenID Provider, :class:`~.upstream.UpstreamProvider`). The IdP-side set-up of each is
in ``docs/extensions/auth.md``, "Use your identity provider".

Rules:
1. A preset only fixes what the provider's documentation fixes: its issuer (or, for
   GitHub, its endpoints and user API), the scopes that give a refresh token, and
   provider-specific authorization parameters; every other keyword goes to the provider.
2. Tenant, domain and realm values are checked when given (no ``/``, ``?``, ``#``, ``@``
   or spaces): a typo fails at start-up, not at the first login. Entra's ``tenant`` is
   a tenant ID (GUID), ``organizations`` or ``common``: for a domain name or
   ``consumers`` Entra's discovery names the GUID's issuer, which OpenID Connect
   Discovery section 4.3 forbids accepting, so those are refused with that reason.
3. :data:`PRESETS` names every preset for the CLI (``--auth-provider NAME``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mcpkit.ext.auth.oauthproxy.upstream import OIDCProvider, UpstreamProvider

__all__ = ["PRESETS", "auth0", "entra", "github", "google", "keycloak", "okta"]


def _part(name: str, value: str) -> str:
    """Rule 2."""
    if not value or any(c in value for c in "/?#@ \t\n"):
        raise ValueError(f"{name} {value!r} is not a bare name (no '/', '?', '#', '@', space)")
    return value


def github(
    *,
    client_id: str,
    client_secret: str,
    scopes: Sequence[str] = ("read:user", "user:email"),
    host: str = "https://github.com",
    api_url: str = "https://api.github.com",
    **options: Any,
) -> UpstreamProvider:
    """A GitHub OAuth app (or GitHub Enterprise Server: ``host`` and
    ``api_url="https://HOST/api/v3"``). Tokens are opaque; the user is ``GET /user``'s
    numeric ``id`` (stable across renames, unlike ``login``)."""
    return UpstreamProvider(
        client_id=client_id,
        client_secret=client_secret,
        authorization_endpoint=host.rstrip("/") + "/login/oauth/authorize",
        token_endpoint=host.rstrip("/") + "/login/oauth/access_token",
        userinfo_endpoint=api_url.rstrip("/") + "/user",
        scopes=scopes,
        subject_claim="id",
        token_auth_method="client_secret_post",
        name="GitHub",
        **options,
    )


def google(
    *,
    client_id: str,
    client_secret: str,
    scopes: Sequence[str] = ("openid", "email", "profile"),
    issuer: str = "https://accounts.google.com",
    **options: Any,
) -> OIDCProvider:
    """Google: ``access_type=offline`` and ``prompt=consent`` so Google returns a refresh
    token."""
    return OIDCProvider(
        issuer,
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        extra_authorize_params={"access_type": "offline", "prompt": "consent"},
        name="Google",
        **options,
    )


def entra(
    *,
    client_id: str,
    client_secret: str,
    tenant: str = "organizations",
    allowed_tenants: Sequence[str] | None = None,
    scopes: Sequence[str] = ("openid", "email", "profile", "offline_access"),
    authority: str = "https://login.microsoftonline.com",
    fetch_userinfo: bool = False,
    **options: Any,
) -> OIDCProvider:
    """Microsoft Entra ID (Azure AD) v2.0. ``tenant``: a tenant ID, a GUID (single
    tenant), or ``organizations``/``common`` (multi-tenant: the discovered issuer holds
    ``{tenantid}`` and each ``id_token``'s ``tid`` fills it in; ``allowed_tenants``
    restricts which tenants may log in). Entra's userinfo lives on Microsoft Graph and
    needs a Graph token, so the identity comes from the ``id_token`` alone by default."""
    _part("tenant", tenant)
    if tenant not in ("organizations", "common"):
        import uuid

        try:
            if str(uuid.UUID(tenant)) != tenant.lower():  # not "{...}", "urn:uuid:..."
                raise ValueError(tenant)
        except ValueError:
            raise ValueError(
                f"tenant {tenant!r}: give the tenant ID (a GUID), 'organizations' or "
                "'common'; Entra's discovery for a domain or 'consumers' names the GUID's "
                "issuer, not the one asked for"
            ) from None
    return OIDCProvider(
        f"{authority.rstrip('/')}/{tenant}/v2.0",
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        allowed_tenants=allowed_tenants,
        fetch_userinfo=fetch_userinfo,
        name="Microsoft Entra ID",
        **options,
    )


def auth0(
    *,
    domain: str,
    client_id: str,
    client_secret: str,
    scopes: Sequence[str] = ("openid", "email", "profile", "offline_access"),
    scheme: str = "https",
    **options: Any,
) -> OIDCProvider:
    """Auth0: the issuer is ``https://<domain>/`` (with the trailing slash)."""
    return OIDCProvider(
        f"{scheme}://{_part('domain', domain)}/",
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        name="Auth0",
        **options,
    )


def okta(
    *,
    domain: str,
    client_id: str,
    client_secret: str,
    authorization_server: str | None = "default",
    scopes: Sequence[str] = ("openid", "email", "profile", "offline_access"),
    scheme: str = "https",
    **options: Any,
) -> OIDCProvider:
    """Okta: a custom authorization server (``default`` unless named) at
    ``https://<domain>/oauth2/<id>``, or the org server (``authorization_server=None``)."""
    issuer = f"{scheme}://{_part('domain', domain)}"
    if authorization_server is not None:
        issuer += f"/oauth2/{_part('authorization_server', authorization_server)}"
    return OIDCProvider(
        issuer,
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        name="Okta",
        **options,
    )


def keycloak(
    *,
    base_url: str,
    realm: str,
    client_id: str,
    client_secret: str,
    scopes: Sequence[str] = ("openid", "email", "profile"),
    **options: Any,
) -> OIDCProvider:
    """Keycloak (17 and later: no ``/auth`` prefix unless ``base_url`` has it): the
    realm's issuer ``<base_url>/realms/<realm>``."""
    return OIDCProvider(
        f"{base_url.rstrip('/')}/realms/{_part('realm', realm)}",
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        name="Keycloak",
        **options,
    )


def oidc(*, issuer: str, client_id: str, client_secret: str, **options: Any) -> OIDCProvider:
    """Any OpenID Provider, from its issuer URL."""
    return OIDCProvider(issuer, client_id=client_id, client_secret=client_secret, **options)


PRESETS: dict[str, Callable[..., UpstreamProvider]] = {
    "oidc": oidc,
    "github": github,
    "google": google,
    "entra": entra,
    "auth0": auth0,
    "okta": okta,
    "keycloak": keycloak,
}
"""Rule 3: ``--auth-provider`` names."""
