"""Protecting a server: :func:`protect` and the :class:`Auth` object it returns.

``protect(server, AuthSettings(...))`` installs the resource-server side through the
core's extension surfaces only (:mod:`mcpkit.server.guards`):

- ``server.add_http_middleware``: :class:`~.middleware.AuthMiddleware` (401s, token
  validation, DPoP, the principal);
- ``server.add_http_routes``: the RFC 9728 metadata (:mod:`.metadata`);
- ``server.add_request_guard``: scope requirements, HTTP 403 (:mod:`.scopes`);
- ``server.add_list_filter``: ``*/list`` hiding, with ``hide_unauthorized``;
- ``server.add_lifespan``: closes the validator's HTTP client at shutdown.

The middleware and the guard are registered with one
:class:`~mcpkit.server.protections.Protection` (:attr:`Auth.protection`), so composition
carries the scope rules or refuses (rule 5).

Rules:
1. The validator is ``validator=`` when given; else a :class:`~.jwt.JWTValidator` when
   ``jwks_url`` is set (it needs an issuer); else an
   :class:`~.introspection.IntrospectionValidator` when ``introspection_url`` is set;
   else ``ValueError``. Built validators accept the settings' audiences.
2. Over stdio nothing of this runs: a stdio server is reached by a local process that
   holds the user's environment credentials (MCP ``basic/authorization``: "STDIO
   transport SHOULD NOT follow this specification"). ``ctx.principal`` is then None.
3. Installing twice on one server is a ``ValueError`` (two layers would each cache and
   challenge).
4. A user mounting :class:`~mcpkit.server.http.StreamableHTTP` in an app of their own
   wraps it with :meth:`Auth.wrap` and adds :meth:`Auth.routes`; ``server.http_app()``
   and ``server.run("http")`` need nothing more.
5. Composition (issue 25 §4): a protected server mounted into a parent, or proxied in
   memory, travels only into an outer server protected by ``protect()`` for the same
   authorization servers: the outer server's tokens then authenticate its callers, and
   the inner server's scope rules (server-wide ``required_scopes``, ``require(...)``)
   are checked on the outer server's POSTs, with tool and prompt names as the outer
   server lists them (``weather_forecast`` is the inner ``forecast``). Calls naming
   another server's tools or prompts, and session plumbing (``initialize``, ``ping``,
   ``server/discover``, ``logging/setLevel``, notifications), are not held to them;
   every other call is (lists, resources, completions: fail closed). With the outer
   server's ``hide_unauthorized``, its list filter applies the inner rules the same
   way (:meth:`Auth.visible`), so what it lists its guard lets through. An unprotected
   outer server, or one trusting other authorization servers, is refused
   (``ProtectionError`` naming ``protect(parent, ...)``).
6. Scope rules are also given where the item is registered: ``protect()`` adds the
   options ``all_of_scopes`` and ``any_of_scopes`` to ``@server.tool``,
   ``@server.prompt`` and ``@server.resource`` (and their ``add_*``; core's extension
   options, :mod:`mcpkit.server.options`). They make the same rule as
   ``require(tool=<its name>, all_of=..., any_of=...)`` (``prompt=``, ``resource=``
   with its URI or URI template), through the same rule store, and add up with the
   item's other rules (:mod:`.scopes` rule 7); their source is the decorator, and
   removing the item does not make start-up refuse them (:mod:`.scopes` rule 6).
   They are applied only once every check of the registration passed
   (:mod:`mcpkit.server.options` rule 2). ``protect()`` must run
   before the decorators: before it, the options are unknown (``TypeError`` saying
   so). A value that is not a list of scope strings is a ``ValueError`` naming the
   item.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from mcpkit.core.shapes import as_object
from mcpkit.ext.auth.server.cache import TokenCache
from mcpkit.ext.auth.server.challenge import Challenge
from mcpkit.ext.auth.server.dpop import DPoPVerifier
from mcpkit.ext.auth.server.inspection import scope_rules_section
from mcpkit.ext.auth.server.introspection import IntrospectionValidator
from mcpkit.ext.auth.server.jwt import JWTValidator
from mcpkit.ext.auth.server.metadata import metadata_document, metadata_routes, metadata_url
from mcpkit.ext.auth.server.middleware import AuthMiddleware, TokenValidator
from mcpkit.ext.auth.server.scopes import (
    OPTION_KINDS,
    SCOPE_OPTIONS,
    SCOPE_OWNER,
    ScopePolicy,
)
from mcpkit.ext.auth.server.settings import AuthSettings
from mcpkit.server.attached import attached, peek
from mcpkit.server.guards import GuardedCall, GuardedRequest, RequestGuard
from mcpkit.server.inspection import add_inspect_source
from mcpkit.server.names import NameRuleError, check_declared, declare_rules
from mcpkit.server.options import ExtensionOptions
from mcpkit.server.protections import Composition, Installer, Protection

if TYPE_CHECKING:
    from starlette.routing import Route

    from mcpkit.server.app import Server

__all__ = ["Auth", "build_validator", "protect"]

_NAMED = {"tools/call": "name", "prompts/get": "name"}
_SESSION_ONLY = frozenset({"initialize", "ping", "server/discover", "logging/setLevel"})
"""Calls about the outer server's session alone: not held to the inner rules (rule 5)."""


def build_validator(settings: AuthSettings) -> TokenValidator:
    """Rule 1."""
    audience = settings.accepted_audiences
    if settings.jwks_url is not None:
        issuer = settings.expected_issuer
        if issuer is None:
            raise ValueError(
                "AuthSettings: JWT validation needs issuer= (or exactly one authorization server)"
            )
        return JWTValidator(
            issuer=issuer,
            jwks_url=settings.jwks_url,
            audience=audience,
            algorithms=settings.algorithms,
            allow_plain_jwt=settings.allow_plain_jwt,
            leeway_s=settings.leeway_s,
            limits=settings.limits,
        )
    if settings.introspection_url is not None:
        return IntrospectionValidator(
            url=settings.introspection_url,
            audience=audience,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            issuer=settings.expected_issuer,
            leeway_s=settings.leeway_s,
            limits=settings.limits,
        )
    raise ValueError("AuthSettings: give jwks_url=, introspection_url= or a validator=")


class Auth:
    """The resource-server side of one protected server.

    ``settings``: :class:`AuthSettings`; ``validator``: any :class:`TokenValidator`
    (default: rule 1). Attributes: ``resource`` (the canonical resource URI),
    ``metadata_url`` (where clients find the metadata), ``policy`` (the scope
    requirements), ``cache`` (validated tokens).
    """

    def __init__(self, settings: AuthSettings, *, validator: TokenValidator | None = None) -> None:
        self.settings = settings
        self.validator: TokenValidator = validator or build_validator(settings)
        self._installed_on: weakref.ref[Server] | None = None
        self.resource = settings.resource_uri
        self.metadata_url = metadata_url(self.resource)
        dpop = settings.dpop
        self.challenge = Challenge(
            self.metadata_url,
            settings.required_scopes or settings.scopes_supported,
            dpop_algs=dpop.algorithms if dpop is not None else None,
            dpop_required=dpop is not None and dpop.required,
        )
        self.dpop = DPoPVerifier(dpop, settings.limits) if dpop is not None else None
        self.cache = TokenCache(settings.limits.max_cached_tokens)
        self.policy = ScopePolicy(settings.required_scopes, self.challenge)
        self.protection = Protection(
            "mcpkit-ext-auth protect() (bearer tokens and scope rules)",
            "protect the outer server first with protect(parent, AuthSettings(...)) trusting "
            f"the same authorization servers ({', '.join(settings.authorization_servers)}); "
            "the inner server's scope rules then hold there under the mounted names",
            self._carry,
        )
        self._carried: list[RequestGuard] = []
        self._carried_visible: list[Callable[[Any, str, Mapping[str, Any]], bool]] = []

    def require(
        self,
        *,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        method: str | None = None,
        all_of: Iterable[str] = (),
        any_of: Iterable[str] = (),
        late_bound: bool = False,
    ) -> Auth:
        """Scopes needed by one tool, prompt, resource (URI or URI template) or method:
        every one of ``all_of`` and one of ``any_of``, on top of the item's other rules
        (its decorator options, earlier ``require()`` calls: :mod:`.scopes` rule 7). A
        caller without them gets HTTP 403 ``insufficient_scope`` (:mod:`.scopes`).
        Returns ``self`` for chaining.
        A rule naming nothing registered refuses start-up
        (:class:`~mcpkit.server.names.NameRuleError`), unless ``late_bound=True``
        says the item is added at run time (:mod:`.scopes` rule 5); declared while the
        server serves, it raises that error here."""
        declared = len(self.policy.named_rules())
        self.policy.require(
            tool=tool,
            prompt=prompt,
            resource=resource,
            method=method,
            all_of=all_of,
            any_of=any_of,
            late_bound=late_bound,
        )
        server = self._installed_on() if self._installed_on is not None else None
        if server is not None:  # declared while serving: checked now (names rule 9)
            try:
                check_declared(server)
            except NameRuleError:
                # the refused rule leaves the name checks (its requirement stays: fail
                # closed), so the next declaration is not refused for this one
                self.policy.forget_declared(declared)
                raise
        return self

    def metadata(self) -> dict[str, Any]:
        """The RFC 9728 document served at :attr:`metadata_url`."""
        return metadata_document(self.settings)

    def wrap(self, app: Any) -> AuthMiddleware:
        """``app`` (the MCP endpoint) behind the authentication layer (rule 4)."""
        return AuthMiddleware(
            app,
            settings=self.settings,
            validator=self.validator,
            challenge=self.challenge,
            cache=self.cache,
            dpop=self.dpop,
            required=self.policy.base,
        )

    def routes(self, mcp_path: str) -> list[Route]:
        """The metadata routes for an endpoint served at ``mcp_path`` (rule 4)."""
        return metadata_routes(self.settings, mcp_path)

    def install(self, server: Server) -> Auth:
        """Install on ``server`` (module docstring; rule 3)."""
        if peek(server, __name__) is not None:
            raise ValueError("this server is already protected")
        attached(server, __name__, lambda: self)  # owned by the server
        self._installed_on = weakref.ref(server)
        server.add_http_middleware(self.wrap, protection=self.protection)
        server.add_http_routes(self.routes)
        server.add_request_guard(self.guard, protection=self.protection)
        if self.settings.hide_unauthorized:
            server.add_list_filter(self.visible)
        server.add_lifespan(self._lifespan)
        add_inspect_source(server, partial(scope_rules_section, self))  # mcpkit inspect
        declare_rules(server, self.policy.named_rules)  # scopes rule 5
        server.add_options(
            ExtensionOptions(SCOPE_OWNER, SCOPE_OPTIONS, self._apply_options, OPTION_KINDS)
        )
        return self

    def _apply_options(self, kind: str, key: str, item: Any, values: dict[str, Any]) -> None:
        """Rule 6: a decorator's scope options become the item's ``require(...)`` rule."""
        all_of, any_of = values.get("all_of_scopes", ()), values.get("any_of_scopes", ())
        given = ", ".join(f"{k}={list(v)!r}" for k, v in values.items())
        made_by = f"@server.{kind}({given}) of {kind} {key!r}"  # scopes rule 6
        target: dict[str, Any] = {kind: key}  # tool=, prompt= or resource=
        self.policy.require(**target, all_of=all_of, any_of=any_of, made_by=made_by)

    async def guard(self, request: GuardedRequest) -> None:
        """The scope rules of this server and of those composed into it (rule 5)."""
        await self.policy.guard(request)
        for carried in self._carried:
            await carried(request)

    def visible(self, ctx: Any, kind: str, definition: Mapping[str, Any]) -> bool:
        """The list filter of ``hide_unauthorized``: this server's rules and those of
        the servers composed into it (rule 5), as :meth:`guard` holds them, so a listed
        item is one the guard lets through."""
        if not self.policy.visible(ctx, kind, definition):
            return False
        return all(visible(ctx, kind, definition) for visible in self._carried_visible)

    def _carry(self, site: Composition) -> Installer | None:
        """Rule 5: hold this server's scope rules on ``site.outer``'s POSTs, or None."""
        outer: Auth | None = peek(site.outer, __name__)
        mine = frozenset(self.settings.authorization_servers)
        if outer is None or frozenset(outer.settings.authorization_servers) != mine:
            return None
        inner_guard = self.guard

        async def composed(request: GuardedRequest) -> None:
            calls = [c for c in map(partial(_as_inner, site), request.calls) if c is not None]
            if calls:
                inner = GuardedRequest(request.era, calls, request.principal, request.scope)
                await inner_guard(inner)

        inner_visible = self.visible

        def composed_visible(ctx: Any, kind: str, definition: Mapping[str, Any]) -> bool:
            name: Any = definition.get("name")
            if kind in ("tools", "prompts") and isinstance(name, str):
                inner = site.inner_name(name)
                if inner is None:  # not the inner server's: its rules do not apply
                    return True
                definition = {**definition, "name": inner}
            return inner_visible(ctx, kind, definition)

        def install() -> None:
            outer._carried.append(composed)
            outer._carried_visible.append(composed_visible)

        return install

    @asynccontextmanager
    async def _lifespan(self, _server: Server) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            await self.validator.aclose()


def _as_inner(site: Composition, call: GuardedCall) -> dict[str, Any] | None:
    """Rule 5: ``call`` as the inner server sees it (a JSON-RPC message), or None when it
    names a tool or prompt that is not the inner server's, or concerns the session alone
    (``initialize``, ``ping``, ``server/discover``, ``logging/setLevel``, notifications)."""
    if call.id is None or call.method in _SESSION_ONLY:
        return None
    params: dict[str, Any] = dict(call.params)
    field = _NAMED.get(call.method)
    if field is not None and isinstance(params.get(field), str):
        name = site.inner_name(params[field])
        if name is None:
            return None
        params[field] = name
    ref = as_object(params.get("ref"))
    if call.method == "completion/complete" and ref is not None:
        named: dict[str, Any] = dict(ref)
        if named.get("type") == "ref/prompt" and isinstance(named.get("name"), str):
            name = site.inner_name(named["name"])
            if name is None:
                return None
            params["ref"] = {**named, "name": name}
    return {"jsonrpc": "2.0", "id": call.id, "method": call.method, "params": params}


def protect(
    server: Server, settings: AuthSettings, *, validator: TokenValidator | None = None
) -> Auth:
    """Protect ``server`` with OAuth 2.1 (the module docstring); returns the
    :class:`Auth` to add scope requirements to (``auth.require(tool=..., all_of=...)``).
    ``ValueError`` when no validator can be built (rule 1) or the server is already
    protected (rule 3)."""
    return Auth(settings, validator=validator).install(server)
