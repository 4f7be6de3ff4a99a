"""Authlib's ``AuthorizationServer`` wired to the development server's stores.

Rules:
1. The authorization endpoint grants every valid request for the test user at once (no
   login page, no consent page): a headless client following the redirect gets the code.
2. Errors before the client and its redirect URI are validated (unknown client, a
   redirect URI not registered) are answered ``400`` JSON and never redirected (RFC 6749
   section 4.1.2.1); later ones redirect to the client with ``error`` and ``state``.
3. Every authorization response that redirects, success or error, carries ``iss``
   (RFC 9207 section 2), through Authlib's ``IssuerParameter`` extension.
4. ``client_credentials=False`` leaves that grant out (a server whose tokens must name a
   user, such as the OAuth proxy).
5. Dynamic client registration (RFC 7591) is open (no initial access token); the
   registered metadata is echoed; a client registered with ``none`` or ``private_key_jwt``
   gets no secret. A client asking for ``authorization_code`` must register
   ``redirect_uris``. ``application_type`` (``native``/``web``) is validated and echoed.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from authlib.oauth2.claims import BaseClaims
from authlib.oauth2.rfc6749 import AuthorizationServer, OAuth2Error, UnsupportedResponseTypeError
from authlib.oauth2.rfc7591 import (
    ClientMetadataClaims,
    ClientRegistrationEndpoint,
    InvalidClientMetadataError,
)
from authlib.oauth2.rfc9207 import IssuerParameter
from joserfc.errors import InvalidClaimError

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.glue import FormRequest, JsonBodyRequest, Reply
from mcpkit.ext.auth.devserver.grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    PrivateKeyJwt,
    RefreshTokenGrant,
    S256CodeChallenge,
)
from mcpkit.ext.auth.devserver.introspection import Introspection, Revocation
from mcpkit.ext.auth.devserver.metadata import metadata
from mcpkit.ext.auth.devserver.records import DevUser
from mcpkit.ext.auth.devserver.state import DevState
from mcpkit.ext.auth.devserver.workload import WorkloadGrant

__all__ = ["DevAuthorizationServer"]


class _Issuer(IssuerParameter):
    """Rule 3."""

    def __init__(self, dev: DevState) -> None:
        self.dev = dev

    def get_issuer(self) -> str:
        return self.dev.issuer


class _ApplicationType(BaseClaims):
    """Rule 5: ``application_type`` (``native`` or ``web``; MCP 2026-07-28 asks clients to
    send it, SEP-837) is kept and echoed; RFC 7591's claims would drop it."""

    REGISTERED_CLAIMS = ["application_type"]  # noqa: RUF012 - Authlib's class attribute

    def validate(self, now: Any = None, leeway: Any = 0) -> None:
        del now, leeway
        claims: dict[str, Any] = dict(self)
        if claims.get("application_type", "web") not in ("native", "web"):
            raise InvalidClaimError("application_type")


class _RegistrationBase(Protocol):
    """Authlib's RFC 7591 endpoint, typed (typeshed's stub leaves ``server`` and
    ``request`` untyped)."""

    def __init__(
        self, server: DevAuthorizationServer, claims_classes: list[type[Any]] | None = None
    ) -> None: ...

    def generate_client_secret(self, request: Any) -> str: ...


class _Registration(ClientRegistrationEndpoint):
    """Rule 5."""

    def __init__(self, server: DevAuthorizationServer) -> None:
        claims = [ClientMetadataClaims, _ApplicationType]
        cast(_RegistrationBase, super()).__init__(server, claims_classes=claims)
        self.dev = server.dev

    def authenticate_token(self, request: Any) -> bool:
        return True  # open registration (rule 5)

    def resolve_public_key(self, request: Any) -> None:
        return None

    def get_server_metadata(self) -> dict[str, Any]:
        return cast(DevAuthorizationServer, self.server).metadata()

    def generate_client_secret(self, request: Any) -> str | None:  # pyright: ignore[reportIncompatibleMethodOverride] - None: no secret for a public client; Authlib 1.9 accepts it, typeshed's stub says str
        method = request.payload.data.get("token_endpoint_auth_method", "client_secret_basic")
        if method in ("none", "private_key_jwt"):
            return None
        return cast(_RegistrationBase, super()).generate_client_secret(request)

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
    ) -> DevClient:
        grant_types: list[str] = client_metadata.get("grant_types") or ["authorization_code"]
        redirect_uris: list[str] = client_metadata.get("redirect_uris") or []
        if "authorization_code" in grant_types and not redirect_uris:
            raise InvalidClientMetadataError("'redirect_uris' is required for authorization_code")
        client = DevClient(
            client_id=client_info["client_id"],
            client_secret=client_info.get("client_secret"),
            redirect_uris=redirect_uris,
            grant_types=grant_types,
            response_types=client_metadata.get("response_types") or ["code"],
            token_endpoint_auth_method=client_metadata["token_endpoint_auth_method"],
            scope=client_metadata.get("scope"),
            jwks=client_metadata.get("jwks"),
            metadata=dict(client_metadata),
        )
        return self.dev.clients.add_dynamic(client)


class DevAuthorizationServer(AuthorizationServer):
    """Authlib's server with the three framework hooks (see :mod:`.glue`) and the grants
    of :mod:`.grants` registered."""

    def __init__(self, dev: DevState, *, client_credentials: bool = True) -> None:
        super().__init__(scopes_supported=dev.scopes_supported)
        self.dev = dev
        self.client_credentials = client_credentials
        # Authlib 1.9 ships no type information and typeshed's stubs describe an older
        # Authlib: its methods are called through this untyped view of ``self``.
        self._authlib: Any = self
        self.register_grant(AuthorizationCodeGrant, [S256CodeChallenge(required=True)])
        self.register_grant(RefreshTokenGrant)
        if client_credentials:
            self.register_grant(ClientCredentialsGrant)
        if dev.trusted.issuers:
            self.register_grant(WorkloadGrant)
        self._authlib.register_client_auth_method("private_key_jwt", PrivateKeyJwt(dev))
        self._authlib.register_endpoint(_Registration(self))
        self._authlib.register_endpoint(Introspection(self))
        self._authlib.register_endpoint(Revocation(self))
        self._issuer_parameter: Any = _Issuer(dev)
        self._authlib.register_extension(self._issuer_parameter)

    # -- Authlib's integration hooks --------------------------------------------------------

    def query_client(self, client_id: str) -> Any:  # a DevClient or None
        return self.dev.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        del token, request  # refresh tokens are stored as they are issued (grants._issue)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        del name, args, kwargs

    def create_oauth2_request(self, request: Any) -> FormRequest:
        assert isinstance(request, FormRequest)
        return request

    def create_json_request(self, request: Any) -> JsonBodyRequest:
        assert isinstance(request, JsonBodyRequest)
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Reply:
        return Reply(status, body, list(headers))

    # -- entry points used by the routes ----------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 document (:mod:`.metadata`) of the grants registered here."""
        return metadata(self.dev, client_credentials=self.client_credentials)

    def authorize(self, request: FormRequest) -> Reply:
        """Rules 1-3."""
        grant = self.consent_grant(request)
        if isinstance(grant, Reply):
            return grant
        return self.respond(request, grant, self.dev.subject)

    def consent_grant(self, request: FormRequest) -> Any:
        """Rules 2-3: the validated grant of an authorization request (what a consent
        page shows), else the error :class:`Reply`."""
        authlib = self._authlib
        try:
            grant = authlib.get_authorization_grant(request)
            grant.validate_no_multiple_request_parameter(request)
            grant.validate_consent_request()
        except OAuth2Error as error:
            if isinstance(error, UnsupportedResponseTypeError) or error.redirect_uri:
                error.state = request.params.state
            return self.error_reply(request, error)
        return grant

    def error_reply(self, request: FormRequest, error: OAuth2Error) -> Reply:
        """Rules 2-3: ``error`` as Authlib answers it, with ``iss`` when redirected."""
        reply: Reply = self._authlib.handle_error_response(request, error)
        if reply.location:
            self._issuer_parameter.add_issuer_parameter(self, reply)
        return reply

    def respond(self, request: FormRequest, grant: Any, subject: str | None) -> Reply:
        """Rule 3: the redirect with a code for ``subject``, or ``access_denied`` when
        ``None`` (the user refused)."""
        user = DevUser(subject) if subject is not None else None
        return self._authlib.create_authorization_response(
            request=request, grant_user=user, grant=grant
        )

    def token(self, request: FormRequest) -> Reply:
        return self._authlib.create_token_response(request)

    def endpoint(self, name: str, request: FormRequest) -> Reply:
        """``introspection`` or ``revocation`` (:mod:`.introspection`)."""
        return self._authlib.create_endpoint_response(name, request)

    def register(self, request: JsonBodyRequest) -> Reply:
        """Rule 5: drop the ``None`` secret fields of a public client's answer."""
        reply: Reply = self._authlib.create_endpoint_response("client_registration", request)
        answer: dict[str, Any] | None = reply.body if reply.status == 201 else None
        if answer is not None:
            body = {k: v for k, v in answer.items() if v is not None}
            if "client_secret" not in body:
                body.pop("client_secret_expires_at", None)
            reply.body = body
        return reply
