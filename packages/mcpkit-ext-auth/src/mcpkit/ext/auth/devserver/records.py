"""What the development authorization server remembers between requests: the test user,
issued authorization codes and refresh tokens (the values of its stores).

Rules:
1. :class:`DevUser` is the test user who consents to everything; Authlib asks it
   ``get_user_id``.
2. A :class:`CodeRecord` keeps what the authorization request carried (client, redirect
   URI, resolved scope, PKCE challenge, RFC 8707 ``resource`` values); a code with no
   ``redirect_uri`` requires none back.
3. A :class:`RefreshRecord` keeps the client, scope, subject, authorized resources and,
   for a DPoP-bound token, the key's thumbprint (``jkt``); only its own client may use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, TokenMixin

from mcpkit.ext.auth.devserver.clients import DevClient

__all__ = ["CodeRecord", "DevUser", "RefreshRecord"]


@dataclass(frozen=True)
class DevUser:
    """Rule 1."""

    subject: str

    def get_user_id(self) -> str:
        return self.subject


@dataclass
class CodeRecord(AuthorizationCodeMixin):
    """An issued authorization code (rule 2; :mod:`.grants` rule 2)."""

    client_id: str
    redirect_uri: str | None
    scope: str
    subject: str
    code_challenge: str
    code_challenge_method: str
    resource: list[str] = field(default_factory=lambda: list[str]())

    def get_redirect_uri(self) -> str:
        return self.redirect_uri or ""  # "": none was sent, none is required back

    def get_scope(self) -> str:
        return self.scope


@dataclass
class RefreshRecord(TokenMixin):
    """An issued refresh token (rule 3; :mod:`.grants` rule 4)."""

    client_id: str
    scope: str
    subject: str
    resource: list[str]
    jkt: str | None

    def check_client(self, client: DevClient) -> bool:
        return client.get_client_id() == self.client_id

    def get_scope(self) -> str:
        return self.scope
