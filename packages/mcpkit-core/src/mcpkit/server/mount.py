"""Server composition: ``parent.mount(child, namespace="weather")``.

A mounted server's tools, prompts, resources, resource templates and completions are
served as part of the parent, on both protocol eras and every transport the parent
serves. The parent reads the child through the child's own method handlers
(``child.method(era, "tools/list")`` & co.), never through its registries, so a child
whose lists are produced by handlers (a proxy, :func:`mcpkit.server.proxy`) mounts like
any other server.

Rules:
1. Names: the child's tools and prompts appear as ``{namespace}_{name}``; its resources
   and resource templates keep their URIs. ``namespace=None`` adds no prefix. A
   namespace is 1 to 64 characters of ``A-Z a-z 0-9 _ - .`` (the spec's tool-name
   alphabet), else ``ValueError``.
2. Live view: every request reads the child's current lists, so entries added to or
   removed from the child after mounting appear or disappear at once.
3. Collisions, by precedence: the parent's own entries win, then the mounts in mount
   order; a shadowed entry is neither listed nor reachable (resources: the first that
   does not answer "resource not found" serves a URI). ``mount`` raises ``ValueError``
   for what is known when it is called: a namespace mounted already, a child that is
   the parent or mounts it (a cycle), or a tool or prompt name registered on both
   sides that collides after prefixing. A collision made later (a name registered
   after mounting) is one WARNING when the parent starts serving or its HTTP app is
   built (:func:`shadowed`, :mod:`mcpkit.server.names`).
4. Delegation: a request for a mounted entry runs the child's handler inside the
   child's receive middleware, with a :class:`~mcpkit.server.context.Context` whose
   ``server`` is the child and which carries the parent request's channel, session,
   era, protocol version, client capabilities and info, log level, principal,
   transport facts, MRTR answers, ``input_provider`` and ``state``. Progress, logs and
   elicitation, sampling and roots requests (live on the handshake era, MRTR
   ``input_required`` on 2026-07-28) reach the client through the parent's session.
   Results and errors pass through unchanged: a tool error stays ``isError: true``, a
   protocol error keeps its code.
5. Completions route to the owner: ``ref/prompt`` by the prefixed prompt name (the
   child sees its own name), ``ref/resource`` by resource URI or URI template.
6. Change notifications: the child's ``list_changed`` and ``resources/updated`` are
   republished on the parent's hub, so the parent's sessions and listen streams get
   them (through any depth of mounts).
7. Capabilities: the parent advertises ``tools``, ``prompts``, ``resources`` (with
   ``listChanged``; ``subscribe`` on the handshake era) and ``completions`` when it or
   a mount has them. Not mounted: the child's extensions and extension methods,
   notification handlers, send middleware and HTTP hooks; those of the parent serve
   (what the child's HTTP hooks protect is carried or refused: rule 13).
   ``subscriptions/listen`` honours ``resourceSubscriptions`` for the parent's own
   resources only; ``resources/subscribe`` (handshake era) reaches mounted ones.
8. The child's lifespan is entered with the parent's (``Server.add_lifespan``). A
   mount while the parent serves checks the child's name-keyed rules first
   (:func:`mcpkit.server.names.check_declared`): a protecting one naming nothing
   refuses the mount.
9. The parent's list filters (:mod:`mcpkit.server.visibility`) apply to mounted
   entries, seen with their prefixed definitions; the child's own filters apply inside
   the child.
10. Reading a mounted list takes at most ``Limits.max_mount_list_pages`` pages per
    mount and request (the parent's ``Limits``); more, or a repeated cursor, is
    -32603 naming the mount.
11. Cost: a server without mounts is untouched. With mounts, a call on one of the
    parent's own tools is one dictionary lookup more; a call on a mounted one is
    routed by its prefix without listing anything unless names are ambiguous (a
    ``None`` namespace, nested prefixes, dynamic children in between) or the parent
    has list filters.
12. 2026-07-28 input rounds: a mounted server that raises ``InputRequired`` is sealed
    by the parent's front-end as usual. One that answers ``input_required`` with a
    ``requestState`` of its own (a proxy) has that state opened with its sealer and
    its answers carried inside a ``requestState`` the parent seals for the parent's
    request; on the retry they are handed back to it as ``ctx.answers``. The parent's
    ``requestState`` is never passed to a mounted server.
13. Protections (:mod:`mcpkit.server.protections`, issue 25 §4): what protects the
    child at its HTTP endpoint (request guards, HTTP middleware: auth, scope rules) is
    carried onto the parent, or ``mount`` raises ``ProtectionError`` naming how to
    protect the parent, before anything is mounted. What protects it inside dispatch
    (its list filters, receive middleware: auth's ``hide_unauthorized``, Apps
    visibility, tasks ownership) runs inside the child (rules 4, 9) and travels as is.
    ``parent_protects=True`` skips the check (the parent enforces them itself).
"""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND_LEGACY,
    JSONRPCError,
)
from mcpkit.core.shapes import JSON, as_list, as_object
from mcpkit.core.tracing import set_target
from mcpkit.core.versions import Era
from mcpkit.server.attached import attached, peek
from mcpkit.server.completions import parse_ref
from mcpkit.server.context import Context
from mcpkit.server.hub import Change, Listener, NotificationHub
from mcpkit.server.identity import principal_key
from mcpkit.server.methods import BUILTIN_METHODS
from mcpkit.server.mounted import (
    Mounted,
    entries,
    mount_table,
    mounted,
    reaches,
    shadowed,
    static_names,
)
from mcpkit.server.mrtr import request_digest
from mcpkit.server.names import check_declared
from mcpkit.server.pagination import page
from mcpkit.server.protections import compose
from mcpkit.server.resources import ResourceNotFoundError
from mcpkit.server.tools import quoted_name, unknown_tool
from mcpkit.server.visibility import ListKind

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase
    from mcpkit.server.handlers import MethodSpec

__all__ = ["mount", "mounted", "shadowed"]

Kind = Literal["tools", "prompts", "refs"]
"""What a name is looked up among: tools, prompts, or completion references to a
resource (a URI or URI template)."""
logger = logging.getLogger("mcpkit.server")

_NAMESPACE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_LISTS: dict[str, tuple[ListKind, str, bool]] = {
    # list method: (result key, identifying field, prefixed)
    "tools/list": ("tools", "name", True),
    "prompts/list": ("prompts", "name", True),
    "resources/list": ("resources", "uri", False),
    "resources/templates/list": ("resourceTemplates", "uriTemplate", False),
}
_ROUTED = (
    "tools/call",
    "prompts/get",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
)
_CALL_METHOD: dict[Kind, str] = {
    "tools": "tools/call",
    "prompts": "prompts/get",
    "refs": "completion/complete",
}
_RELAYED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
CARRIED = "io.mcpkit/mount-state"
"""Key, in the parent's sealed ``requestState``, of the answers a mounted server sealed
into its own (rule 12)."""
_KEY = __name__
"""The mounts of a parent hang off it (:mod:`mcpkit.server.attached`)."""


def mount(
    parent: ServerBase,
    child: ServerBase,
    namespace: str | None = None,
    *,
    parent_protects: bool = False,
    child_lifespan: Callable[[], AbstractAsyncContextManager[None]],
) -> None:
    """Serve ``child``'s tools, prompts, resources and completions as part of
    ``parent`` (see the module rules); ``child_lifespan()`` enters the child's
    lifespans (``Server.lifespan``) and is entered with the parent's (rule 8). Raises
    ``ValueError`` for a bad or already mounted namespace, a cycle, or a known name
    collision (rule 3), and :class:`~mcpkit.server.protections.ProtectionError` for a
    protection that would be dropped (rule 13)."""
    if namespace is not None and not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"mount namespace {namespace!r} must be 1 to 64 characters of A-Z a-z 0-9 _ - ."
        )
    if reaches(child, parent):
        raise ValueError(f"cannot mount server {child.info['name']!r}: it would mount itself")
    mounts: _Mounts | None = peek(parent, _KEY)
    prefix = "" if namespace is None else f"{namespace}_"
    if namespace is not None and any(m.namespace == namespace for m in entries(parent)):
        raise ValueError(f"namespace {namespace!r} is already mounted on this server")
    for kind in ("tools", "prompts"):
        clash = sorted(static_names(parent, kind) & {prefix + n for n in static_names(child, kind)})
        if clash:
            raise ValueError(
                f"mounting {child.info['name']!r} as {namespace!r}: {kind} "
                f"{', '.join(clash[:10])} would exist twice"
            )
    if not parent_protects:
        compose(parent, child, "mount", prefix)  # rule 13
    check_declared(parent, child)
    if mounts is None:
        mounts = attached(parent, _KEY, partial(_Mounts, parent))
    relay = _Relay(parent.hub)
    entry = Mounted(child, namespace, prefix, child.hub.subscribe(relay))
    mounts.entries.append(entry)
    parent.add_lifespan(lambda _parent: child_lifespan())
    for kind in ("tools", "prompts", "resources"):
        parent.notify_list_changed(kind)


@dataclass(frozen=True, slots=True)
class _Source:
    """Where entries come from: the parent itself (``own``) or a mount."""

    server: ServerBase
    prefix: str
    own: bool


class _Relay(Listener):
    """Rule 6: republishes a child's change notifications on the parent's hub. It never
    queues (``offer`` forwards at once), so it needs no task and no event loop; it holds
    the hub, not the parent (the registry of mounts must not keep a parent alive)."""

    __slots__ = ("target",)

    def __init__(self, target: NotificationHub) -> None:  # pyright: ignore[reportMissingSuperCall] - no queue, so no anyio.Event (needs no loop)
        self.target = target
        self.accepts = _RELAYED.__contains__
        # kind-ok: unbounded-table relayed notifications, coalesced per accepted change
        self._pending = {}
        self.closed = False

    def offer(self, change: Change) -> None:
        if not self.closed and change.method in _RELAYED:
            self.target.publish(change)

    def close(self) -> None:
        self.closed = True


def _filtered(server: ServerBase) -> bool:
    """Whether what ``server`` lists depends on the caller: a list filter of its own or
    of a server mounted into it, at any depth (rule 9; a public cache hint would let a
    shared cache hand one caller's listing to another)."""
    return bool(server.visibility.filters) or any(_filtered(m.server) for m in entries(server))


def _not_found(exc: JSONRPCError, uri: str) -> bool:
    """A "resource not found" answer of either era (resources rule 2)."""
    if isinstance(exc, ResourceNotFoundError) or exc.code == RESOURCE_NOT_FOUND_LEGACY:
        return True
    data = as_object(exc.data)
    return exc.code == INVALID_PARAMS and data is not None and data.get("uri") == uri


def _derive(ctx: Context, server: ServerBase, method: str, params: JSON) -> Context:
    """Rule 4: the context a mounted server's handler runs with (its answers: those the
    parent's ``requestState`` carried for it, overlaid with this round's, rule 12)."""
    answers = dict(ctx.answers)
    carried = as_object(answers.pop(CARRIED, None))
    if carried is not None:
        answers = {**carried, **answers}
    derived = Context(
        server,
        request_id=ctx.request_id,
        method=method,
        params=params,
        era=ctx.era,
        protocol_version=ctx.protocol_version,
        client_capabilities=ctx.client_capabilities,
        client_info=ctx.client_info,
        channel=ctx.channel,
        session=ctx.session,
        log_level=ctx.log_level,
        principal=ctx.principal,
        transport=ctx.transport,
        answers=answers,
    )
    derived.state = ctx.state
    derived.input_provider = ctx.input_provider
    return derived


class _Mounts:
    """The mounts of one parent and the method handlers that serve them."""

    def __init__(self, parent: ServerBase) -> None:
        self._parent = weakref.ref(parent)
        self.entries = mount_table(parent)
        # kind-ok: unbounded-table methods the parent and mounted servers register
        self.originals: dict[tuple[Era, str], MethodSpec] = {}
        # kind-ok: unbounded-table methods the parent and mounted servers register
        self.installed: dict[tuple[Era, str], MethodSpec] = {}
        handlers: dict[str, Callable[[Context], Awaitable[JSON]]] = {
            **{m: partial(self.listing, m) for m in _LISTS},
            "tools/call": partial(self.call, "tools"),
            "prompts/get": partial(self.call, "prompts"),
            "resources/read": self.by_uri,
            "resources/subscribe": self.by_uri,
            "resources/unsubscribe": self.unsubscribe,
            "completion/complete": self.complete,
        }
        for era in ("legacy", "modern"):
            for method in (*_LISTS, *_ROUTED):
                spec = parent.method(era, method)
                if spec is None:
                    continue
                self.originals[(era, method)] = spec
                parent.add_method(
                    method,
                    handlers[method],
                    eras=(era,),
                    input_capable=spec.input_capable,
                    name_param=spec.name_param,
                )
                self.installed[(era, method)] = parent.methods[era][method]
        for kind in ("tools", "prompts", "resources", "completions"):
            parent.add_capability(kind, partial(self.capability, kind))

    @property
    def parent(self) -> ServerBase:
        parent = self._parent()
        assert parent is not None, "a mounting server is in use, so it is alive"
        return parent

    # -- sources -----------------------------------------------------------------------
    def sources(self) -> list[_Source]:
        """The parent, then the mounts in mount order (rule 3's precedence)."""
        return [
            _Source(self.parent, "", True),
            *(_Source(m.server, m.prefix, False) for m in self.entries),
        ]

    def spec(self, era: Era, src: _Source, method: str) -> MethodSpec | None:
        if src.own:
            return self.originals.get((era, method))
        return src.server.method(era, method)

    async def run(self, src: _Source, ctx: Context, method: str, params: JSON) -> JSON:
        """Run ``method`` on ``src`` for the parent's request ``ctx`` (rule 4)."""
        spec = self.spec(ctx.era, src, method)
        if spec is None:
            raise JSONRPCError(INVALID_PARAMS, f"{method} is not served on this era")
        params = {k: v for k, v in params.items() if k != "requestState"}
        derived = _derive(ctx, src.server, method, params)
        try:
            if src.own:  # the parent's middleware already wraps this request
                return await spec.handler(derived)
            result = await src.server.invoke(spec, derived)
        finally:
            ctx.asked.update(derived.asked)
            derived.close()
        state = result.get("requestState")
        if result.get("resultType") == "input_required" and state is not None:
            result = {**result, "requestState": self.carry(ctx, src, method, params, state)}
        return result

    def carry(self, ctx: Context, src: _Source, method: str, params: JSON, state: Any) -> str:
        """Rule 12: the child's sealed ``requestState`` becomes one of the parent's, its
        answers kept under :data:`CARRIED`."""
        principal = principal_key(ctx.principal) if ctx.principal is not None else None
        body = src.server.sealer.open(
            state, method=method, digest=request_digest(method, params), principal=principal
        )
        return self.parent.sealer.seal(
            method=ctx.method,
            digest=request_digest(ctx.method, ctx.params),
            principal=principal,
            answers={CARRIED: as_object(body.get("a")) or {}},
        )

    # -- lists -------------------------------------------------------------------------
    async def gather(self, src: _Source, ctx: Context, method: str) -> list[JSON]:
        """Every page of ``src``'s list (rule 10)."""
        if self.spec(ctx.era, src, method) is None:
            return []
        key = _LISTS[method][0]
        limit = self.parent.limits.max_mount_list_pages
        items: list[JSON] = []
        cursor: Any = None
        seen: set[str] = set()
        meta = ctx.params.get("_meta")
        for _ in range(limit):
            params: JSON = {} if meta is None else {"_meta": meta}
            if cursor is not None:
                params["cursor"] = cursor
            result = await self.run(src, ctx, method, params)
            for item in as_list(result.get(key)) or ():
                definition = as_object(item)
                if definition is not None:
                    items.append(definition)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                return items
            if cursor in seen:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"{method}: server {src.server.info['name']!r} repeated a cursor",
                )
            seen.add(cursor)
        raise JSONRPCError(
            INTERNAL_ERROR,
            f"{method}: server {src.server.info['name']!r} has more than {limit} pages "
            "(Limits.max_mount_list_pages)",
            {"limit": limit},
        )

    async def merged(self, ctx: Context, method: str) -> list[tuple[JSON, _Source, str]]:
        """``(definition as shown, source, the source's own name)`` in precedence order,
        shadowed and filtered entries left out (rules 3, 9)."""
        key, field, prefixed = _LISTS[method]
        visibility = self.parent.visibility
        out: list[tuple[JSON, _Source, str]] = []
        taken: set[str] = set()
        for src in self.sources():
            for item in await self.gather(src, ctx, method):
                local = item.get(field)
                if not isinstance(local, str):
                    continue
                shown = {**item, field: src.prefix + local} if prefixed and src.prefix else item
                ident: str = shown[field]
                if ident in taken:
                    continue
                if not src.own and visibility.filters and not visibility.shows(ctx, key, shown):
                    continue
                taken.add(ident)
                out.append((shown, src, local))
        return out

    async def listing(self, method: str, ctx: Context) -> JSON:
        key = _LISTS[method][0]
        items = [shown for shown, _, _ in await self.merged(ctx, method)]
        chunk, nxt = page(key, items, ctx.params, self.parent.page_size)
        result: JSON = {key: chunk}
        if nxt is not None:
            result["nextCursor"] = nxt
        hint = self.parent.cache_hints.get(method)
        if ctx.era == "modern" and hint is not None:  # methods rule 1
            result["ttlMs"] = hint.ttl_ms
            per_caller = _filtered(self.parent)  # a mounted server's filters count too
            result["cacheScope"] = "private" if per_caller else hint.scope
        return result

    # -- routing by name ---------------------------------------------------------------
    def knows(self, era: Era, src: _Source, kind: Kind, local: str) -> bool | None:
        """Whether ``src`` serves ``local`` without asking it: True/False from a plain
        server's registries, None when only its handlers can tell (rule 11)."""
        method = _CALL_METHOD[kind]
        spec = self.spec(era, src, method)
        if spec is None:
            return False
        server = src.server
        inner: _Mounts | None = None if src.own else peek(server, _KEY)
        if inner is not None and inner.installed.get((era, method)) is spec:
            return inner.knows_any(era, kind, local)
        if spec.handler is not BUILTIN_METHODS[method][0] or server.visibility.filters:
            return None
        if kind == "tools":
            return local in server.tools
        if kind == "prompts":
            return local in server.prompts
        return local in server.resources or any(
            t.matcher.template == local for t in server.templates
        )

    def knows_any(self, era: Era, kind: Kind, name: str) -> bool | None:
        unknown = False
        for src in self.sources():
            if kind != "refs" and not name.startswith(src.prefix):
                continue
            known = self.knows(era, src, kind, name[len(src.prefix) :] if kind != "refs" else name)
            if known:
                return True
            unknown = unknown or known is None
        return None if unknown else False

    async def owner(self, ctx: Context, kind: Kind, name: str) -> tuple[_Source, str] | None:
        """The source serving ``name`` and its name there (rules 3, 11)."""
        candidates = [s for s in self.sources() if kind == "refs" or name.startswith(s.prefix)]
        if not self.parent.visibility.filters:
            for i, src in enumerate(candidates):
                local = name if kind == "refs" else name[len(src.prefix) :]
                known = self.knows(ctx.era, src, kind, local)
                if known:
                    return src, local
                if known is None:
                    if i == len(candidates) - 1:
                        return src, local  # the last candidate: let it answer
                    break
            else:
                return None
        methods = (
            ("resources/list", "resources/templates/list") if kind == "refs" else (f"{kind}/list",)
        )
        for method in methods:
            field = _LISTS[method][1]
            for shown, src, local in await self.merged(ctx, method):
                if shown[field] == name:
                    return src, local
        return None

    async def names(self, ctx: Context, kind: Literal["tools", "prompts"]) -> list[str]:
        return [shown["name"] for shown, _, _ in await self.merged(ctx, f"{kind}/list")]

    async def call(self, kind: Literal["tools", "prompts"], ctx: Context) -> JSON:
        """``tools/call`` and ``prompts/get`` (rules 3, 4)."""
        method = _CALL_METHOD[kind]
        name = ctx.params.get("name")
        if not isinstance(name, str):  # the parent's own handler answers the error
            return await self.originals[(ctx.era, method)].handler(ctx)
        found = await self.owner(ctx, kind, name)
        if found is None:
            known = await self.names(ctx, kind)
            if kind == "tools":
                raise unknown_tool(name, known)
            shown = ", ".join(sorted(known)[:20]) or "(none)"
            raise JSONRPCError(
                INVALID_PARAMS,
                f"prompts/get: unknown prompt {quoted_name(name)}; known prompts: {shown}",
            )
        src, local = found
        if src.own:
            return await self.originals[(ctx.era, method)].handler(ctx)
        try:
            result = await self.run(src, ctx, method, {**ctx.params, "name": local})
        except BaseException:
            set_target(None)  # not served: the mounted server's own name is not ours
            raise
        set_target(name)  # served under this name: the parent's registered name
        return result

    async def complete(self, ctx: Context) -> JSON:
        """``completion/complete`` (rule 5)."""
        kind, name = parse_ref(ctx.params)
        found = await self.owner(ctx, "prompts" if kind == "ref/prompt" else "refs", name)
        if found is None:
            what = "prompt" if kind == "ref/prompt" else "resource"
            raise JSONRPCError(
                INVALID_PARAMS, f"completion/complete: unknown {what} {quoted_name(name)}"
            )
        src, local = found
        if src.own:
            return await self.originals[(ctx.era, "completion/complete")].handler(ctx)
        ref: JSON = (
            {**ctx.params["ref"], "name": local} if kind == "ref/prompt" else ctx.params["ref"]
        )
        return await self.run(src, ctx, "completion/complete", {**ctx.params, "ref": ref})

    # -- routing by URI ----------------------------------------------------------------
    async def by_uri(self, ctx: Context) -> JSON:
        """``resources/read`` and ``resources/subscribe``: the first source that does not
        answer "resource not found" (rule 3)."""
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            return await self.originals[(ctx.era, ctx.method)].handler(ctx)
        sources = self.sources()
        if self.parent.visibility.filters:
            sources = await self.uri_owners(ctx, uri)
        for src in sources:
            try:
                if src.own:
                    return await self.originals[(ctx.era, ctx.method)].handler(ctx)
                if self.spec(ctx.era, src, ctx.method) is not None:
                    return await self.run(src, ctx, ctx.method, ctx.params)
            except JSONRPCError as exc:
                if not _not_found(exc, uri):
                    raise
        raise ResourceNotFoundError(uri)

    async def uri_owners(self, ctx: Context, uri: str) -> list[_Source]:
        """With list filters: the parent, then the mounts showing ``uri`` to this
        request as a resource or a template match (rule 9)."""
        from mcpkit.server.uritemplates import TemplateMatcher

        owners = [s for s in self.sources() if s.own]
        for shown, src, _ in await self.merged(ctx, "resources/list"):
            if shown["uri"] == uri and src not in owners:
                owners.append(src)
        for shown, src, _ in await self.merged(ctx, "resources/templates/list"):
            if src in owners:
                continue
            try:
                if TemplateMatcher(shown["uriTemplate"]).match(uri) is not None:
                    owners.append(src)
            except ValueError:
                continue
        return owners

    async def unsubscribe(self, ctx: Context) -> JSON:
        """``resources/unsubscribe``: every source forgets the URI."""
        for src in self.sources():
            if self.spec(ctx.era, src, ctx.method) is None:
                continue
            try:
                if src.own:
                    await self.originals[(ctx.era, ctx.method)].handler(ctx)
                else:
                    await self.run(src, ctx, ctx.method, ctx.params)
            except JSONRPCError:
                if src.own:
                    raise
        return {}

    # -- capabilities ------------------------------------------------------------------
    def capability(self, kind: str, era: Era) -> JSON | None:
        """Rule 7: None leaves the parent's own answer in place."""
        found: JSON | None = None
        for m in self.entries:
            value = m.server.capabilities(era).get(kind)
            if isinstance(value, dict):
                found = {**(found or {}), **value}
        if found is None:
            return None
        if kind == "completions":
            return {}
        merged: JSON = {**found, "listChanged": True}
        parent = self.parent
        if kind == "resources" and era == "legacy" and (parent.resources or parent.templates):
            merged["subscribe"] = True
        return merged
