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
   ``completion/complete`` the requirement of the prompt its ``ref/prompt`` names, or
   of the resource template its ``ref/resource`` names, decided as that template's
   listing is (rule 3: its probe URIs, so a rule spelled with other variable names
   than the server's template still applies), method-wide rules on ``prompts/get`` or
   ``resources/read`` included (they hide the item, so they refuse completing it);
   ``subscriptions/listen`` (2026-07-28) also that of ``resources/subscribe`` on each
   URI of its ``resourceSubscriptions``, as the handshake era's subscribe needs.
2. A call whose requirements the caller's scopes do not meet refuses the whole POST with
   HTTP 403 and ``WWW-Authenticate: Bearer error="insufficient_scope", scope="...",
   resource_metadata="..."`` (``DPoP`` scheme for a DPoP-bound caller), before
   dispatch (a core request guard), on both eras and for every call of a batch. The
   ``scope`` names every scope the POST needs: the all-of ones and, for each any-of
   group the caller misses, its first scope (the one to ask for).
3. One decision, :meth:`ScopePolicy.permits` (``scopes``, a method, an item), answers
   both the guard (rule 2) and, with ``hide_unauthorized``, the ``*/list`` filter, so
   a listed item is usable and a refused one is not listed. An item is listed when
   the call that uses it is permitted: a tool by ``tools/call``, a prompt by
   ``prompts/get``, a resource by ``resources/read`` of its URI (exact rules, every
   matching template rule and method-wide rules alike), a resource template when
   ``resources/read`` of one of its URIs is (probe URIs expanded from the template:
   a template whose every URI a rule covers is hidden; one a rule covers in part
   stays listed and the covered URIs answer 403). Calling a hidden item still
   answers 403, so a client can step up.
4. A POST whose caller is not a :class:`~.principal.Principal` did not pass the auth
   layer (an app built before ``protect()``, an endpoint mounted without
   ``Auth.wrap``): it is refused with 401 and the challenge, and logged at ERROR (fail
   closed; it would otherwise be served anonymously). In list filters such a caller
   holds no scopes, except over stdio and in memory, where no rule applies
   (:mod:`.protect` rule 2) and so nothing is hidden.
5. Every ``require(...)`` is a protecting name-keyed rule of the server
   (:mod:`mcpkit.server.names`): when the server starts serving or its HTTP app is
   built, one naming no registered tool, prompt, resource or method refuses start-up
   with one line (the rule, where it was declared, the closest registered name, the
   fix), unless it is a URI template or was declared ``late_bound=True`` (an item
   added at run time).
6. The decorator options ``all_of_scopes``/``any_of_scopes`` (:mod:`.protect` rule 6)
   take a non-empty list of scope-tokens (RFC 6749 §3.3: no space, quote, backslash
   or control character); anything else fails at registration (:func:`scope_list`).
   Such a rule's source is the decorator (``made_by``): it names the item it was
   registered with, so it is not a name-keyed rule of rule 5 (removing the item does
   not refuse start-up; the rule stays and holds if the item is added again).
7. Rules for the same item add up, whatever their style (a decorator option, a
   ``require()``, several ``require()`` calls): the caller must meet every one. A
   later rule never replaces or loosens an earlier one; the same rule given twice
   counts once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcpkit.core.jsonrpc import INVALID_REQUEST
from mcpkit.ext.auth.server.challenge import Challenge
from mcpkit.ext.auth.server.principal import Principal
from mcpkit.server.guards import GuardedCall, GuardedRequest, HTTPRefusal
from mcpkit.server.names import NamedRule, declared_at
from mcpkit.server.uritemplates import TemplateMatcher

__all__ = [
    "OPTION_KINDS",
    "SCOPE_OPTIONS",
    "SCOPE_OWNER",
    "Requirement",
    "ScopePolicy",
    "scope_list",
]

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
    "ref/resource": ("resourceTemplates", "uri"),  # a template's URI (rule 1)
}
_COMPLETED_USE = {  # rule 1: the call whose method-wide rule also holds for completing
    "prompts": "prompts/get",
    "resources": "resources/read",
    "resourceTemplates": "resources/read",
}
_LISTED_USE = {  # rule 3: list kind -> (the call that uses an item, kind, key field)
    "tools": ("tools/call", "tools", "name"),
    "prompts": ("prompts/get", "prompts", "name"),
    "resources": ("resources/read", "resources", "uri"),
    "resourceTemplates": ("resources/read", "resourceTemplates", "uriTemplate"),
}
_RULE_KIND = {"tools": "tool", "prompts": "prompt", "resources": "resource", "method": "method"}
"""Rule 5: the core kind (:mod:`mcpkit.server.names`) of each ``require()`` target."""
_PROBE_VALUES = ("p", "mcpkit-probe." * 24, "a/b?c#d&e=f %")
"""Rule 3: each template variable takes each of these values in turn: short, long (past
prefix modifiers), and reserved characters (which only ``+``/``#`` keep raw)."""
_PROBE_CACHE_ENTRIES = 256
_PROBE_CACHE_MAX_TEMPLATE_BYTES = 2048
"""Probe URIs are kept for at most this many templates, each at most this long (a
proxied server's templates come from its upstream): longer ones are expanded anew."""
_UNCHECKED_TRANSPORTS = frozenset({"stdio", "memory"})
"""Rule 4: transports where no rule applies (``ctx.transport["name"]``)."""


def scope_list(value: Any) -> tuple[str, ...]:
    """Rule 5: ``value`` as scopes (a list of RFC 6749 §3.3 scope-tokens), else
    ``ValueError`` saying what to give."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        hint = f" (did you mean [{value!r}]?)" if isinstance(value, str) else ""
        raise ValueError(f"give a list of scope strings{hint}")
    scopes = tuple(cast("Iterable[Any]", value))
    for scope in scopes:
        if not isinstance(scope, str) or not scope or any(c in _NOT_IN_SCOPE for c in scope):
            raise ValueError(f"{scope!r} is not a scope (RFC 6749 §3.3 scope-token)")
    if not scopes:
        raise ValueError("give at least one scope")
    return scopes


_NOT_IN_SCOPE = frozenset(' "\\') | frozenset(map(chr, range(0x20))) | {chr(0x7F)}
SCOPE_OWNER = "mcpkit-ext-auth (protect())"
SCOPE_OPTIONS = {"all_of_scopes": scope_list, "any_of_scopes": scope_list}
"""Rule 5: the decorator options :func:`~.protect.protect` adds (core extension options)."""
OPTION_KINDS = frozenset({"tool", "prompt", "resource"})


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
        self._items: dict[str, dict[str, list[Requirement]]] = {
            "tools": {},
            "prompts": {},
            "resources": {},
        }
        # kind-ok: unbounded-table rules the server's code declares
        self._methods: dict[str, list[Requirement]] = {}
        self._templates: list[tuple[TemplateMatcher, Requirement]] = []
        self._base_only = True
        # kind-ok: unbounded-table rules the server's code declares
        self._declared: list[NamedRule] = []
        # kind-ok: unbounded-table rules the server's code declares
        self._sources: dict[tuple[str, str, Requirement], str] = {}
        # kind-ok: unbounded-table _PROBE_CACHE_ENTRIES templates the server lists, probes capped
        self._probes: OrderedDict[str, list[str]] = OrderedDict()

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
        made_by: str | None = None,
    ) -> None:
        """Rule 1: exactly one of ``tool``, ``prompt``, ``resource`` (a URI or a URI
        template) or ``method`` needs ``all_of`` and one of ``any_of``, on top of the
        item's other rules (rule 7). ``late_bound``: the item is added at run time, so
        start-up does not refuse a rule naming nothing registered yet (rule 5).
        ``made_by``: the decorator that made the rule from its options (rule 6)."""
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
        source = made_by or _source(kind, name, requirement)
        self._sources.setdefault((kind, name, requirement), source)
        if made_by is None:
            rule = NamedRule(
                _RULE_KIND[kind],
                name,
                source,
                protects=True,
                late_bound=late_bound,
                fix=(
                    "fix the name, or pass late_bound=True to auth.require() if the "
                    f"{_RULE_KIND[kind]} is added at run time"
                ),
                where=declared_at(),
                logger=logger.name,
            )
            if rule not in self._declared:
                self._declared.append(rule)
        held = self._methods if kind == "method" else self._items[kind]
        rules = held.setdefault(name, [])
        if requirement in rules:  # rule 7: the same rule twice counts once
            return
        rules.append(requirement)
        if kind == "resources" and "{" in name:
            self._templates.append((TemplateMatcher(name), requirement))

    def forget_declared(self, keep: int) -> None:
        """Drop the name-keyed view of the rules declared after the first ``keep`` (a
        rule refused while serving); their requirements stay (fail closed)."""
        del self._declared[keep:]

    def named_rules(self) -> list[NamedRule]:
        """Rule 5: every ``require(...)`` as a core name-keyed rule (not the rules that
        decorator options made: rule 6)."""
        return list(self._declared)

    def requirements_for(self, method: str, kind: str | None, key: Any) -> list[Requirement]:
        """Rule 1: every requirement of a ``method`` call on the item ``key`` of ``kind``
        (``"tools"``, ``"prompts"``, ``"resources"``, ``"resourceTemplates"``; None: no
        item): the base, the
        method's, and the item's (a resource's: its exact URI's rule, else every
        matching template's, since which template serves a URI is the server's
        registration order, which the policy does not know: fail closed)."""
        out = [self.base] if self.base.all_of else []
        out += self._methods.get(method, ())
        if method == "completion/complete" and kind in _COMPLETED_USE:
            by_use = self._methods.get(_COMPLETED_USE[kind], ())  # rule 1: the item's use
            out += [r for r in by_use if r not in out]
        if kind == "resourceTemplates":  # rule 3: what its probe URIs need
            head = len(out)
            for uri in self._probe(key):
                for r in self.requirements_for(method, "resources", uri)[head:]:
                    if r not in out:
                        out.append(r)
            return out
        if kind is None or kind not in self._items or not isinstance(key, str):
            return out
        found = self._items[kind].get(key)
        if found:  # exact rules are the item's own (they may relax a template's)
            out += found
        elif kind == "resources":
            out.extend(r for m, r in self._templates if m.match(key) is not None)
        return out

    def permits(self, scopes: frozenset[str], method: str, kind: str | None, key: Any) -> bool:
        """Rules 1-3: the one decision behind both the guard and the list filter. A
        ``"resourceTemplates"`` item (``key`` a URI template) is permitted when a probe
        URI expanded from it is (rule 3); an invalid template is not."""
        if kind == "resourceTemplates":
            return any(self.permits(scopes, method, "resources", u) for u in self._probe(key))
        return all(r.met_by(scopes) for r in self.requirements_for(method, kind, key))

    def _probe(self, template: Any) -> list[str]:
        """:func:`_probe_uris`, kept (bounded) for templates listed again and again."""
        if not isinstance(template, str):
            return []
        found = self._probes.get(template)
        if found is not None:
            self._probes.move_to_end(template)
            return found
        uris = _probe_uris(template)
        if len(template.encode()) <= _PROBE_CACHE_MAX_TEMPLATE_BYTES:
            self._probes[template] = uris
            if len(self._probes) > _PROBE_CACHE_ENTRIES:
                self._probes.popitem(last=False)
        return uris

    @staticmethod
    def targets(call: GuardedCall) -> list[tuple[str, str | None, Any]]:
        """Rule 1: ``(method, kind, key)`` of each use a call makes of an item."""
        out = [ScopePolicy.target(call)]
        if call.method == "subscriptions/listen":
            wanted: Any = call.params.get("notifications")
            subs: Any = None
            if isinstance(wanted, dict):
                subs = cast("dict[str, Any]", wanted).get("resourceSubscriptions")
            if isinstance(subs, list):
                uris = {u for u in cast("list[Any]", subs) if isinstance(u, str)}
                out.extend(("resources/subscribe", "resources", u) for u in sorted(uris))
        return out

    @staticmethod
    def target(call: GuardedCall) -> tuple[str, str | None, Any]:
        """Rule 1: ``(method, kind, key)`` of the item a call uses (kind None: none)."""
        item = _ITEM_KIND.get(call.method)
        if item is not None:
            return call.method, item[0], call.params.get(item[1])
        if call.method == "completion/complete":  # completing an item's arguments
            ref: Any = call.params.get("ref")
            if isinstance(ref, dict):
                fields = cast("dict[str, Any]", ref)
                kind, key = _COMPLETION_REF.get(str(fields.get("type")), (None, ""))
                if kind is not None:
                    return call.method, kind, fields.get(key)
        return call.method, None, None

    def requirements(self, call: GuardedCall) -> list[Requirement]:
        """Rule 1: every requirement ``call`` must meet."""
        return [r for use in self.targets(call) for r in self.requirements_for(*use)]

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
            calls = request.calls
            uses = [use for call in calls for use in self.targets(call)]
            if all(self.permits(scopes, *use) for use in uses):
                return
            needed = [r for call in calls for r in self.requirements(call)]
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
        """Rule 3 (a core list filter): listed when :meth:`permits` the call that uses
        the item; rule 4 for a caller that is not a :class:`Principal`."""
        use = _LISTED_USE.get(kind)
        if use is None:
            return True
        caller = getattr(ctx, "principal", None)
        if isinstance(caller, Principal):
            scopes = caller.scopes
        else:
            transport: Any = getattr(ctx, "transport", None)
            name: Any = None
            if isinstance(transport, Mapping):
                name = cast("Mapping[str, Any]", transport).get("name")
            if name in _UNCHECKED_TRANSPORTS:
                return True
            scopes = frozenset[str]()
        method, item_kind, field = use
        return self.permits(scopes, method, item_kind, definition.get(field))

    def rules(self) -> list[tuple[str, str, Requirement]]:
        """Every requirement as ``(kind, key, requirement)``, ``kind`` one of
        ``"server"`` (``required_scopes``, key ``""``; only when it names scopes),
        ``"method"``, ``"tool"``, ``"prompt"``, ``"resource"``; in that order, each
        kind in registration order, an item's rules in the order given (rule 7;
        ``mcpkit inspect`` shows them)."""
        out: list[tuple[str, str, Requirement]] = []
        if self.base.all_of or self.base.any_of:
            out.append(("server", "", self.base))
        out += [("method", name, r) for name, reqs in self._methods.items() for r in reqs]
        for kind, items in self._items.items():
            out += [(kind.removesuffix("s"), name, r) for name, reqs in items.items() for r in reqs]
        return out

    def source(self, kind: str, key: str, requirement: Requirement) -> str:
        """Where the rule :meth:`rules` lists as ``(kind, key, requirement)`` came from:
        ``auth.require(...)`` or the decorator (rule 6); ``""`` for ``"server"``."""
        held = "method" if kind == "method" else f"{kind}s"
        return self._sources.get((held, key, requirement), "")


def _source(kind: str, name: str, requirement: Requirement) -> str:
    """Rule 5: the ``require(...)`` call as the user wrote it."""
    parts = [f"{_RULE_KIND[kind]}={name!r}"]
    if requirement.all_of:
        parts.append(f"all_of={list(requirement.all_of)!r}")
    if requirement.any_of:
        parts.append(f"any_of={list(requirement.any_of)!r}")
    return f"auth.require({', '.join(parts)})"


def _probe_uris(template: str) -> list[str]:
    """Rule 3: ``template`` expanded with each probe value for every variable, keeping
    the URIs the template itself matches (those the server would serve with it); []
    for an invalid template."""
    try:
        matcher = TemplateMatcher(template)
    except ValueError:
        return []
    names = matcher.variable_names
    uris = (matcher.expand(dict.fromkeys(names, value)) for value in _PROBE_VALUES)
    return [uri for uri in uris if matcher.match(uri) is not None]
