"""The server side of the events extension: registration, ``events/list``,
``events/poll``, the list-changed signal, authorization and cursors.

Source: SEP-3415 (draft 2026-10-05) §Capability Negotiation, §Listing Available Events,
§Dynamic event types, §Event type removal and breaking changes, §Poll-Based Delivery,
§Cursor Lifecycle, §Error Handling, §Authorization. ``events/stream`` is in
:mod:`.stream`.

Rules:
1. The extension is advertised as ``io.modelcontextprotocol/events`` with
   ``{"listChanged": bool}``, ``stability: experimental``, on 2026-07-28 only; its
   methods exist on 2026-07-28 only, so a handshake-era ``events/*`` is -32601.
2. ``events/list`` pages through the declared event types (``EventsLimits.page_size``;
   a bad cursor is -32602).
3. Declaring, updating or removing an event type publishes
   ``notifications/events/list_changed``, which reaches only ``subscriptions/listen``
   streams that asked for ``eventsListChanged`` (echoed in the acknowledgement only when
   ``list_changed`` is on).
4. A subscription (poll or stream) is checked in this order: name and arguments sizes
   (-32602), unknown name (-32023, ``data.kind: "event"``), delivery mode not offered
   (-32026, ``data: {"feature": "deliveryMode", "value": ...}``), arguments against
   ``inputSchema`` (-32602), authorization of ``ctx.principal`` (the same principal as
   tools) by the extension's and the type's ``authorize`` (-32024).
5. Cursors are ``<epoch>.<generation>.<position>`` for store-backed types and
   ``u<generation>.<upstream>`` for pollers, at most ``max_cursor_bytes`` (else
   -32602); a malformed one is -32602; one from another store epoch (a lost log) is
   answered ``truncated: true`` with a fresh cursor; one from an older schema generation
   is -32026 ``{"feature": "payloadSchema", "reason": "schema_changed"}``.
6. ``events/poll`` with a null cursor returns no events and the current position; with
   a cursor it returns at most ``maxEvents`` (clamped to ``max_poll_events``) matching
   occurrences after it, honouring ``maxAgeMs`` (replay starts at the later of the
   cursor and now - maxAgeMs, ``truncated`` when that skipped anything), with
   ``hasMore`` and ``nextPollMs``. No state is kept between polls.
7. Removing an event type or changing its schema in place (``breaking=True``)
   terminates its push streams (NotFound / Unsupported, :mod:`.stream`); additive
   updates terminate nothing.
   Delivery modes served outside this module (webhooks) learn of it through
   ``EventsExtension.terminations`` and end their subscriptions the same way.
8. Authorization is asked again while a subscription lives (SEP-3415 §Authorization
   "Delivery time"): poll at every poll (rule 4), push every ``heartbeat_s`` (a
   poller's every ``poller_interval_s``) of an open stream, busy or idle
   (:mod:`.stream` rule 4), webhooks every ``EventsLimits.reauthorize_s`` on the
   replica that delivers them and before a suspended one resumes
   (:mod:`.webhooks.runtime` rule 7). A refusal at delivery time terminates the
   subscription with -32024 Forbidden ``{"reason": "Access revoked"}``.
9. ``authorize`` gets the request's ``Context`` during a request and a
   :class:`~.context.SubscriberContext` otherwise (:mod:`.context`); one that raises, or
   that has not answered within ``EventsLimits.authorize_timeout_s`` (``TimeoutError``),
   is a refusal (fail closed: -32024 at subscribe time, a termination at delivery
   time), logged with the exception's type only (its text may carry secrets).
10. The declared event types are a kind of name core checks rules against
    (:mod:`mcpkit.server.names`, ``"event type"``): an ``on_subscribe`` /
    ``on_unsubscribe`` hook for a type not declared when the server starts serving (or
    its HTTP app is built) is one WARNING naming the hook, the closest declared type and
    the fix (a hook is not a protection: it never refuses a subscription).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from mcpkit.core import Extension, JSONRPCError, Stability
from mcpkit.core.jsonschema import validation_errors
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import MODERN_VERSIONS
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.context import Authorize, SubscriberContext
from mcpkit.experimental.events.lifecycle import Hook, Lifecycle
from mcpkit.experimental.events.limits import EventsLimits
from mcpkit.experimental.events.sources import (
    Check,
    CheckRequest,
    EventSource,
    Match,
    Position,
    Transform,
    event_body,
    iso_timestamp,
    payload_type_of,
    run_generator,
    schema_of,
)
from mcpkit.experimental.events.store import InMemoryStore, OccurrenceStore, now_ms, read_matching
from mcpkit.experimental.events.stream import StreamRegistry
from mcpkit.server.hub import Change
from mcpkit.server.names import NamedRule, declare_names, declare_rules
from mcpkit.server.pagination import page

if TYPE_CHECKING:
    from mcpkit.server import Context, Server

__all__ = ["SPEC_VERSION", "EventsExtension", "Position"]

logger = logging.getLogger("mcpkit.experimental.events")
F = TypeVar("F", bound=Callable[..., Any])
SPEC_VERSION = "2026-10-05"
"""The SEP-3415 draft this package implements."""


def error(code: int, message: str, data: JSON | None = None) -> JSONRPCError:
    return JSONRPCError(code, message, data)


class EventsExtension:
    """``io.modelcontextprotocol/events`` on ``server`` (see the module rules).

    ``store`` holds occurrences (default :class:`InMemoryStore`); ``limits`` bounds what
    peers can fill; ``authorize(ctx, name, arguments) -> bool`` (sync or async,
    :data:`~.context.Authorize`) is asked for every subscription (rule 4) and again
    while it lives (rules 8, 9); ``list_changed`` advertises and sends
    ``notifications/events/list_changed``.
    """

    def __init__(
        self,
        server: Server,
        *,
        store: OccurrenceStore | None = None,
        limits: EventsLimits | None = None,
        authorize: Authorize | None = None,
        list_changed: bool = True,
    ) -> None:
        self.server = server
        self.store: OccurrenceStore = store if store is not None else InMemoryStore()
        self.limits = limits or EventsLimits()
        self.authorize = authorize
        self.list_changed = list_changed
        # kind-ok: unbounded-table event sources the server's code registers
        self.sources: dict[str, EventSource] = {}
        self.streams = StreamRegistry(self)
        self.lifecycle = Lifecycle(self)
        self.terminations: list[Callable[[str, JSONRPCError], None]] = []
        """Rule 7: ``hook(name, error)`` called when ``name`` is removed (NotFound) or
        changed in place (Unsupported); webhooks (:func:`.webhooks.enable_webhooks`)
        terminate their subscriptions to it there. Synchronous: schedule async work."""
        self._generators: list[tuple[EventSource, Callable[[], AsyncIterator[Any]]]] = []
        server.add_extension(self)
        server.add_method(W.EVENTS_LIST, self.handle_list, eras=("modern",))
        # No ``name_param``: SEP-3415 does not define ``Mcp-Name`` for events/* (its open
        # question 8), and requiring the header would refuse other SDKs' clients.
        server.add_method(W.EVENTS_POLL, self.handle_poll, eras=("modern",))
        server.add_method(W.EVENTS_STREAM, self.streams.handle, eras=("modern",), streaming=True)
        server.add_listen_filter(W.LISTEN_FILTER_FIELD, self._listen_filter)
        server.add_lifespan(self._lifespan)
        declare_names(server, "event type", lambda: self.sources)  # rule 10
        declare_rules(server, self._hook_rules)

    def _hook_rules(self) -> list[NamedRule]:
        """Rule 10: each lifecycle hook as a core name-keyed rule (not protecting)."""
        found: list[NamedRule] = []
        for which, hooks in (
            ("on_subscribe", self.lifecycle.on_subscribe),
            ("on_unsubscribe", self.lifecycle.on_unsubscribe),
        ):
            for name, hook in hooks.items():
                code = getattr(hook, "__code__", None)
                where = f"{code.co_filename}:{code.co_firstlineno}" if code else None
                found.append(
                    NamedRule(
                        "event type",
                        name,
                        f"@events.{which}({name!r})",
                        fix="fix the name, or declare the event type with events.source(...)",
                        where=where,
                        logger=logger.name,
                    )
                )
        return found

    # -- the extension entry (rule 1) ----------------------------------------------------
    def extension(self) -> Extension:
        return Extension(
            W.EXTENSION_ID,
            SPEC_VERSION,
            Stability.EXPERIMENTAL,
            {W.LIST_CHANGED_SETTING: self.list_changed},
            protocol_versions=MODERN_VERSIONS,
        )

    def _listen_filter(
        self, ctx: Context, value: Any
    ) -> tuple[Any, Callable[[Change], bool]] | None:
        if value is not True or not self.list_changed:
            return None
        return True, lambda change: change.method == W.NOTIFY_LIST_CHANGED

    def _changed(self) -> None:
        if self.list_changed:
            self.server.hub.publish(Change(W.NOTIFY_LIST_CHANGED))

    # -- declaring event types --------------------------------------------------------------
    def source(
        self,
        name: str,
        *,
        description: str | None = None,
        arguments: Any = None,
        payload: Any = None,
        delivery: Sequence[W.DeliveryMode] = ("poll", "push"),
        match: Match | None = None,
        transform: Transform | None = None,
        authorize: Authorize | None = None,
        check: Check | None = None,
        meta: JSON | None = None,
    ) -> EventSource:
        """Declare an event type (rules 1, 3) and return it; emit with
        ``await source.emit(data)``. ``arguments`` / ``payload``: a pydantic model, a
        Python type or a JSON Schema mapping. ``check``: a poller (then occurrences come
        from it, not from the store). Raises ``ValueError`` for a duplicate name or an
        empty/unknown delivery mode, ``SchemaError`` for an invalid schema."""
        if name in self.sources:
            raise ValueError(f"event type {name!r} is already declared")
        src = EventSource(
            self,
            name,
            description,
            schema_of(arguments),
            schema_of(payload),
            _modes(delivery),
            match=match,
            transform=transform,
            authorize=authorize,
            check=check,
            meta=meta,
        )
        self.sources[name] = src
        self._changed()
        return src

    def event(
        self,
        name: str,
        *,
        description: str | None = None,
        arguments: Any = None,
        payload: Any = None,
        delivery: Sequence[W.DeliveryMode] = ("poll", "push"),
        match: Match | None = None,
        transform: Transform | None = None,
        authorize: Authorize | None = None,
    ) -> Callable[[F], F]:
        """Decorator: an async generator function producing occurrences (run while the
        server serves; each yielded payload is emitted). The payload schema defaults to
        the ``AsyncIterator[X]`` return annotation; the description to the docstring."""

        def register(fn: F) -> F:
            if not inspect.isasyncgenfunction(fn):
                raise TypeError(f"@events.event({name!r}) decorates an async generator function")
            src = self.source(
                name,
                description=description or inspect.getdoc(fn),
                arguments=arguments,
                payload=payload if payload is not None else payload_type_of(fn),
                delivery=delivery,
                match=match,
                transform=transform,
                authorize=authorize,
            )
            self._generators.append((src, fn))
            return fn

        return register

    def poller(
        self,
        name: str,
        *,
        description: str | None = None,
        arguments: Any = None,
        payload: Any = None,
        delivery: Sequence[W.DeliveryMode] = ("poll", "push"),
        authorize: Authorize | None = None,
    ) -> Callable[[F], F]:
        """Decorator: ``async def check(request: CheckRequest) -> CheckResult`` over an
        upstream with its own cursor (SEP-3415 Appendix A check function); poll calls it
        per request, a push stream every ``poller_interval_s``."""

        def register(fn: F) -> F:
            self.source(
                name,
                description=description or inspect.getdoc(fn),
                arguments=arguments,
                payload=payload,
                delivery=delivery,
                authorize=authorize,
                check=fn,
            )
            return fn

        return register

    def update(
        self,
        name: str,
        *,
        description: str | None = None,
        arguments: Any = None,
        payload: Any = None,
        delivery: Sequence[W.DeliveryMode] | None = None,
        breaking: bool = False,
    ) -> EventSource:
        """Change a declared type's descriptor (rule 3). ``breaking=True`` marks an
        in-place incompatible schema change: its push streams end with Unsupported
        (``schema_changed``) and older cursors are refused (rules 5, 7). Raises
        ``KeyError`` for an unknown name."""
        old = self.sources[name]
        src = EventSource(
            self,
            name,
            description if description is not None else old.description,
            schema_of(arguments) if arguments is not None else old.input_schema,
            schema_of(payload) if payload is not None else old.payload_schema,
            tuple(delivery) if delivery is not None else old.delivery,
            match=old.match,
            transform=old.transform,
            authorize=old.authorize,
            check=old.check,
            meta=old.meta,
            generation=old.generation + (1 if breaking else 0),
        )
        self.sources[name] = src
        if breaking:
            feature = (
                "inputSchema" if arguments is not None and payload is None else "payloadSchema"
            )
            self._terminate(
                name,
                error(
                    W.UNSUPPORTED,
                    "Unsupported",
                    {"feature": feature, "reason": W.REASON_SCHEMA_CHANGED},
                ),
            )
        self._changed()
        return src

    def on_subscribe(self, name: str) -> Callable[[Hook], Hook]:
        """Decorator: ``async def hook(ctx, arguments, subscription_id)`` run when a
        subscription to ``name`` starts, in every delivery mode, once across replicas
        on a shared store (:mod:`.lifecycle`). ``ctx``: the request's ``Context``."""

        def register(fn: Hook) -> Hook:
            self.lifecycle.on_subscribe[name] = fn
            return fn

        return register

    def on_unsubscribe(self, name: str) -> Callable[[Hook], Hook]:
        """Decorator: the matching teardown hook (:mod:`.lifecycle`), once across
        replicas on a shared store. ``ctx``: the request's ``Context`` when a request
        ends the subscription (``events/unsubscribe``, a push stream's end), else a
        :class:`~.context.SubscriberContext` (a lapsed TTL or poll lease, a
        termination)."""

        def register(fn: Hook) -> Hook:
            self.lifecycle.on_unsubscribe[name] = fn
            return fn

        return register

    async def remove(self, name: str) -> None:
        """Stop offering ``name`` (rule 7): its push streams end with NotFound, its log is
        dropped, list_changed is published. Unknown names are ignored."""
        if self.sources.pop(name, None) is None:
            return
        self._terminate(name, error(W.NOT_FOUND, "NotFound", {"kind": W.KIND_EVENT}))
        await self.store.drop(name)
        self._changed()

    def _terminate(self, name: str, err: JSONRPCError) -> None:
        """Rule 7: end every subscription to ``name``, push streams and the others."""
        self.streams.terminate(name, err)
        for hook in self.terminations:
            hook(name, err)

    @asynccontextmanager
    async def _lifespan(self, server: Server) -> AsyncGenerator[None]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.lifecycle.run_sweeper)
            for src, fn in self._generators:
                tg.start_soon(run_generator, src, fn)
            try:
                yield None
            finally:
                tg.cancel_scope.cancel()

    # -- resolving a subscription (rule 4) -------------------------------------------
    async def resolve(
        self, ctx: Context, params: Mapping[str, Any], mode: W.DeliveryMode
    ) -> tuple[EventSource, JSON]:
        """Check a subscription's ``name`` and ``arguments`` for delivery ``mode`` (rule
        4) and return the event type and the arguments; raises :class:`JSONRPCError`
        with the SEP's codes. Webhook delivery uses it with ``mode="webhook"``."""
        limits = self.limits
        name = params.get(W.F_NAME)
        if not isinstance(name, str) or not name:
            raise error(W.INVALID_PARAMS, "Invalid params: name must be a non-empty string")
        if len(name.encode()) > limits.max_name_bytes:
            raise error(
                W.INVALID_PARAMS,
                f"Invalid params: name longer than {limits.max_name_bytes} bytes "
                "(EventsLimits.max_name_bytes)",
            )
        given: Any = params.get(W.F_ARGUMENTS)
        arguments = as_object({} if given is None else given)
        if arguments is None:
            raise error(W.INVALID_PARAMS, "Invalid params: arguments must be an object")
        size = len(json.dumps(arguments, separators=(",", ":")).encode())
        if size > limits.max_arguments_bytes:
            raise error(
                W.INVALID_PARAMS,
                f"Invalid params: arguments are {size} bytes (limit "
                f"{limits.max_arguments_bytes}, EventsLimits.max_arguments_bytes)",
            )
        src = self.sources.get(name)
        if src is None:
            raise error(W.NOT_FOUND, f"NotFound: no event type {name!r}", {"kind": W.KIND_EVENT})
        if mode not in src.delivery:
            raise error(
                W.UNSUPPORTED,
                f"Unsupported: event type {name!r} does not offer {mode} delivery",
                {"feature": W.FEATURE_DELIVERY_MODE, "value": mode},
            )
        problems = validation_errors(src.validator, arguments, limit=5)
        if problems:
            raise error(
                W.INVALID_PARAMS,
                f"Invalid params: arguments do not match the inputSchema of {name!r}: "
                + "; ".join(problems),
            )
        args: JSON = arguments
        if not await self.permitted(ctx, src, args):
            raise self.forbidden(name)
        return src, args

    async def permitted(
        self, ctx: Context | SubscriberContext, src: EventSource, arguments: JSON
    ) -> bool:
        """Whether the extension's and the type's ``authorize`` admit ``ctx.principal``
        for ``arguments`` (rule 4); asked again while a subscription lives (rule 8). An
        ``authorize`` that raises, or answers nothing within
        ``EventsLimits.authorize_timeout_s``, is a refusal (rule 9): never raises itself
        except on cancellation."""
        for check in (self.authorize, src.authorize):
            if check is None:
                continue
            try:
                with anyio.fail_after(self.limits.authorize_timeout_s):  # rule 9
                    allowed = check(ctx, src.name, arguments)
                    if inspect.isawaitable(allowed):
                        allowed = await allowed
            except Exception as exc:  # rule 9: fail closed, no message (may hold secrets)
                logger.warning(
                    "authorize for %r raised %s: treated as a refusal",
                    src.name,
                    type(exc).__name__,
                )
                return False
            if not allowed:
                return False
        return True

    @staticmethod
    def forbidden(name: str) -> JSONRPCError:
        return error(
            W.FORBIDDEN,
            f"Forbidden: not permitted to subscribe to {name!r} with these arguments",
        )

    @staticmethod
    def revoked(name: str) -> JSONRPCError:
        """Rule 8: the termination error of a subscription whose access was revoked."""
        return error(
            W.FORBIDDEN,
            f"Forbidden: access to {name!r} was revoked",
            {"reason": W.REASON_ACCESS_REVOKED},
        )

    # -- cursors (rule 5) ----------------------------------------------------------------
    def encode(self, src: EventSource, epoch: str, position: int) -> str:
        return f"{epoch}.{src.generation}.{position}"

    def encode_upstream(self, src: EventSource, upstream: str | None) -> str | None:
        return None if upstream is None else f"u{src.generation}.{upstream}"

    def decode(self, src: EventSource, cursor: Any) -> Position | None:
        """Rule 5: None for a null cursor; raises -32602 / -32026 as the rule says."""
        if cursor is None:
            return None
        if not isinstance(cursor, str):
            raise error(W.INVALID_PARAMS, "Invalid params: cursor must be a string or null")
        if len(cursor.encode()) > self.limits.max_cursor_bytes:
            raise error(
                W.INVALID_PARAMS,
                f"Invalid params: cursor longer than {self.limits.max_cursor_bytes} bytes "
                "(EventsLimits.max_cursor_bytes)",
            )
        try:
            if src.check is not None:
                if not cursor.startswith("u"):
                    raise ValueError
                gen, _, upstream = cursor[1:].partition(".")
                pos = Position(int(gen), upstream=upstream)
            else:
                epoch, gen, position = cursor.split(".")
                pos = Position(int(gen), epoch=epoch, position=int(position))
                if pos.position < 0:
                    raise ValueError
        except ValueError:
            raise error(
                W.INVALID_PARAMS, f"Invalid params: {cursor!r} is not a cursor of {src.name!r}"
            ) from None
        if pos.generation != src.generation:
            raise error(
                W.UNSUPPORTED,
                f"Unsupported: the schema of {src.name!r} changed since this cursor",
                {"feature": "payloadSchema", "reason": W.REASON_SCHEMA_CHANGED},
            )
        return pos

    async def start(
        self, src: EventSource, cursor: Any, max_age_ms: Any
    ) -> tuple[int, int | None, bool]:
        """Where a store-backed subscription starts: ``(position, min_timestamp_ms,
        truncated)`` for a request's cursor and ``maxAgeMs`` (rules 5, 6)."""
        pos = self.decode(src, cursor)
        epoch = await self.store.epoch()
        if pos is None:
            return await self.store.head(src.name), None, False
        if pos.epoch != epoch:
            return await self.store.head(src.name), None, True
        floor = None
        if max_age_ms is not None:
            if type(max_age_ms) is not int or max_age_ms < 0:
                raise error(W.INVALID_PARAMS, "Invalid params: maxAgeMs must be an integer >= 0")
            floor = now_ms() - max_age_ms
        return pos.position, floor, False

    def occurrence(self, src: EventSource, args: JSON, occ: Any, cursor: str | None) -> JSON:
        out: JSON = {
            "eventId": occ.event_id,
            "name": src.name,
            "timestamp": iso_timestamp(occ.timestamp_ms),
            "data": src.shape(args, occ),
        }
        if cursor is not None:
            out[W.F_CURSOR] = cursor
        if occ.meta:
            out[W.F_META] = occ.meta
        return out

    # -- methods ------------------------------------------------------------------
    async def handle_list(self, ctx: Context) -> JSON:
        """``events/list`` (rule 2)."""
        items = [s.descriptor().wire() for s in self.sources.values()]
        events, nxt = page("events", items, ctx.params, self.limits.page_size)
        out: JSON = {"events": events}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    async def handle_poll(self, ctx: Context) -> JSON:
        """``events/poll`` (rule 6)."""
        params = ctx.params
        src, args = await self.resolve(ctx, params, "poll")
        max_events = params.get(W.F_MAX_EVENTS)
        if max_events is None:
            max_events = self.limits.max_poll_events
        if type(max_events) is not int or max_events < 1:
            raise error(W.INVALID_PARAMS, "Invalid params: maxEvents must be an integer >= 1")
        max_events = min(max_events, self.limits.max_poll_events)
        max_age_ms = params.get(W.F_MAX_AGE_MS)
        if self.lifecycle.hooked(src.name):
            key = self.streams.principal_key(ctx)
            await self.lifecycle.polled(ctx, src.name, args, key)
        if src.check is not None:
            return await self._poll_upstream(
                ctx, src, args, params.get(W.F_CURSOR), max_age_ms, max_events
            )
        position, floor, truncated = await self.start(src, params.get(W.F_CURSOR), max_age_ms)
        epoch = await self.store.epoch()
        if params.get(W.F_CURSOR) is None:
            got_events: list[JSON] = []
            has_more = False
        else:
            got = await read_matching(
                self.store,
                src.name,
                position,
                max_events=max_events,
                min_timestamp_ms=floor,
                match=lambda o: src.matches(args, o),
                max_scan=self.limits.max_scan,
            )
            truncated = truncated or got.truncated
            position, has_more = got.position, got.has_more
            got_events = [self.occurrence(src, args, o, None) for o in got.occurrences]
        return {
            "events": got_events,
            W.F_CURSOR: self.encode(src, epoch, position),
            W.F_TRUNCATED: truncated,
            "hasMore": has_more,
            "nextPollMs": self.limits.next_poll_ms,
        }

    async def _poll_upstream(
        self,
        ctx: Context,
        src: EventSource,
        args: JSON,
        cursor: Any,
        max_age_ms: Any,
        max_events: int,
    ) -> JSON:
        pos = self.decode(src, cursor)
        check = src.check
        assert check is not None
        result = await check(
            CheckRequest(
                args,
                None if pos is None else pos.upstream,
                max_age_ms if type(max_age_ms) is int else None,
                max_events,
                ctx.principal,
            )
        )
        events = [event_body(src, ev, None) for ev in list(result.events)[:max_events]]
        return {
            "events": events,
            W.F_CURSOR: self.encode_upstream(src, result.cursor),
            W.F_TRUNCATED: result.truncated,
            "hasMore": result.has_more or len(result.events) > max_events,
            "nextPollMs": self.limits.next_poll_ms,
        }


def _modes(delivery: Any) -> Any:
    """``delivery`` as a tuple; a bare string is kept so the check names it."""
    return delivery if isinstance(delivery, str) else tuple(delivery)
