"""Scope requirements per tool, prompt, resource and method, and their HTTP 403.

Sources: MCP ``basic/authorization`` §Scope Challenge Handling, §Runtime Insufficient
Scope Errors (both eras); RFC 6750 §3.1 (``insufficient_scope``).

Rules:
1. A :class:`Requirement` is ``all_of`` (every scope) plus ``any_of`` (at least one,
   when given). A call needs the server-wide ``required_scopes``, its method's
   requirement, and its item's: the tool (``tools/call``, by ``name``), the prompt
   (``prompts/get``, by ``name``), the resource (``resources/read``,
   ``resources/subscribe``, ``resources/unsubscribe``, by ``uri``: an exact URI, else
   every URI template registered as a requirement's key that matches it); and
   ``completion/complete`` the requirement of the prompt or resource its ``ref`` names.
2. A call whose requirements the caller's scopes do not meet refuses the whole POST with
   HTTP 403 and ``WWW-Authenticate: Bearer error="insufficient_scope", scope="...",
   resource_metadata="..."`` (``DPoP`` scheme for a DPoP-bound caller), before
   dispatch (a core request guard), on both eras and for every call of a batch. The
   ``scope`` names every scope the POST needs: the all-of ones and, for each any-of
   group the caller misses, its first scope (the one to ask for).
3. With ``hide_unauthorized``, ``*/list`` leaves out the tools, prompts, resources and
   templates whose requirement the caller does not meet (core list filter). Calling
   one still answers 403, so a client can step up.
4. A POST whose caller is not a :class:`~.principal.Principal` did not pass the auth
   layer (an app built before ``protect()``, an endpoint mounted without
   ``Auth.wrap``): it is refused with 401 and the challenge, and logged at ERROR (fail
   closed; it would otherwise be served anonymously). In list filters such a caller
   holds no scopes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcpkit.core.jsonrpc import INVALID_REQUEST
from mcpkit.ext.auth.server.challenge import Challenge
from mcpkit.ext.auth.server.principal import Principal
from mcpkit.server.guards import GuardedCall, GuardedRequest, HTTPRefusal
from mcpkit.server.uritemplates import TemplateMatcher

__all__ = ["Requirement", "ScopePolicy"]

logger = logging.getLogger("mcpkit.ext.auth")

_ITEM_KIND = {
    "tools/call": ("tools", "name"),
    "prompts/get": ("prompts", "name"),
    "resources/read": ("resources", "uri"),
    "resources/subscribe": ("resources", "uri"),
    "resources/unsubscribe": ("resources", "uri"),
}
_COMPLETION_REF: dict[str, tuple[str | None, str]] = {
    "ref/prompt": ("prompts", "name"),
    "ref/resource": ("resources", "uri"),
}
_LIST_FIELD = {
    "tools": ("tools", "name"),
    "prompts": ("prompts", "name"),
    "resources": ("resources", "uri"),
    "resourceTemplates": ("resources", "uriTemplate"),
}


@dataclass(frozen=True, slots=True)
class Requirement:
    """Rule 1: ``all_of`` every scope, and one of ``any_of`` when it is not empty."""

    all_of: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()

    def met_by(self, scopes: frozenset[str]) -> bool:
        if any(s not in scopes for s in self.all_of):
            return False
        return not self.any_of or any(s in scopes for s in self.any_of)

    def challenge_scopes(self, scopes: frozenset[str]) -> list[str]:
        """Rule 2: what to name in a challenge."""
        named = list(self.all_of)
        if self.any_of and not any(s in scopes for s in self.any_of):
            named.append(self.any_of[0])
        return named


class ScopePolicy:
    """The requirements of one protected server (rules 1-4)."""

    def __init__(self, required: Iterable[str], challenge: Challenge) -> None:
        self.base = Requirement(tuple(required))
        self.challenge = challenge
        # kind-ok: unbounded-table rules the server's code declares
        self._items: dict[str, dict[str, Requirement]] = {
            "tools": {},
            "prompts": {},
            "resources": {},
        }
        # kind-ok: unbounded-table rules the server's code declares
        self._methods: dict[str, Requirement] = {}
        self._templates: list[tuple[TemplateMatcher, Requirement]] = []
        self._base_only = True

    def require(
        self,
        *,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        method: str | None = None,
        all_of: Iterable[str] = (),
        any_of: Iterable[str] = (),
    ) -> None:
        """Rule 1: exactly one of ``tool``, ``prompt``, ``resource`` (a URI or a URI
        template) or ``method`` needs ``all_of`` and one of ``any_of``."""
        targets = [
            (k, v)
            for k, v in (
                ("tools", tool),
                ("prompts", prompt),
                ("resources", resource),
                ("method", method),
            )
            if v is not None
        ]
        if len(targets) != 1:
            raise ValueError("require() needs exactly one of tool=, prompt=, resource=, method=")
        requirement = Requirement(tuple(all_of), tuple(any_of))
        if not requirement.all_of and not requirement.any_of:
            raise ValueError("require() needs scopes: all_of= and/or any_of=")
        kind, name = targets[0]
        self._base_only = False
        if kind == "method":
            self._methods[name] = requirement
            return
        self._items[kind][name] = requirement
        if kind == "resources" and "{" in name:
            self._templates = [(m, r) for m, r in self._templates if m.template != name]
            self._templates.append((TemplateMatcher(name), requirement))

    def _item(self, kind: str, name: Any) -> list[Requirement]:
        if not isinstance(name, str):
            return []
        found = self._items[kind].get(name)
        if found is not None or kind != "resources":
            return [found] if found is not None else []
        # Every matching template's requirement: which template serves the URI is the
        # server's registration order, which the policy does not know (fail closed).
        return [r for matcher, r in self._templates if matcher.match(name) is not None]

    def requirements(self, call: GuardedCall) -> list[Requirement]:
        """Rule 1: every requirement ``call`` must meet."""
        out = [self.base] if self.base.all_of else []
        by_method = self._methods.get(call.method)
        if by_method is not None:
            out.append(by_method)
        item = _ITEM_KIND.get(call.method)
        if item is not None:
            out.extend(self._item(item[0], call.params.get(item[1])))
        elif call.method == "completion/complete":  # completing an item's arguments
            ref: Any = call.params.get("ref")
            if isinstance(ref, dict):
                fields = cast("dict[str, Any]", ref)
                kind, key = _COMPLETION_REF.get(str(fields.get("type")), (None, ""))
                if kind is not None:
                    out.extend(self._item(kind, fields.get(key)))
        return out

    async def guard(self, request: GuardedRequest) -> None:
        """Rule 2 (a core request guard)."""
        caller = request.principal
        if not isinstance(caller, Principal):  # rule 4: the auth layer did not run
            logger.error(
                "auth: a request reached the protected endpoint without the auth layer "
                "(an app built before protect(), or a StreamableHTTP not wrapped with "
                "Auth.wrap); refused"
            )
            raise HTTPRefusal(
                401,
                "Unauthorized: an access token is required (see the WWW-Authenticate header)",
                headers=self.challenge.unauthorized(),
            )
        scopes = caller.scopes
        if self._base_only:  # no per-item or per-method rules: one check per POST
            if self.base.met_by(scopes):
                return
            needed = [self.base]
        else:
            needed = [r for call in request.calls for r in self.requirements(call)]
        if all(r.met_by(scopes) for r in needed):
            return
        named: list[str] = []
        for requirement in needed:
            for s in requirement.challenge_scopes(scopes):
                if s not in named:
                    named.append(s)
        dpop = caller.confirmation_jkt is not None
        raise HTTPRefusal(
            403,
            "Forbidden: insufficient_scope: the operation needs scope " + " ".join(named),
            code=INVALID_REQUEST,
            data={"error": "insufficient_scope", "scope": " ".join(named)},
            headers=self.challenge.forbidden(named, dpop=dpop),
        )

    def visible(self, ctx: Any, kind: str, definition: Mapping[str, Any]) -> bool:
        """Rule 3 (a core list filter)."""
        where = _LIST_FIELD.get(kind)
        if where is None:
            return True
        requirement = self._items[where[0]].get(definition.get(where[1]))  # pyright: ignore[reportArgumentType]
        if requirement is None:
            return True
        caller = getattr(ctx, "principal", None)
        scopes = caller.scopes if isinstance(caller, Principal) else frozenset[str]()
        return requirement.met_by(scopes)
