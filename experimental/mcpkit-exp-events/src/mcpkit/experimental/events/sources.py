"""Event types as the server declares them: descriptors, producers and emission.

Source: SEP-3415 §Listing Available Events, §Event Occurrences, Appendix A (server SDK
guidance: emit, match, transform, check functions).

Rules:
1. An event type has a name, a description, an ``inputSchema`` (from a pydantic model,
   a JSON Schema mapping, or ``{"type": "object"}``), a ``payloadSchema`` (from a
   Python type, a mapping, or ``{"type": "object"}``) and a non-empty subset of the
   delivery modes (a mode outside them, or one mode given as a bare string, is a
   ``ValueError`` naming the event type and the closest mode); a schema that is not
   valid JSON Schema is refused at declaration (``SchemaError``).
2. A producer is one of: ``emit`` calls (push occurrences from callbacks), an async
   generator (each yielded payload is emitted; run while the server serves), or a
   poller ``check`` function over an upstream that has its own cursor.
3. ``eventId`` is the author's when given (the upstream's stable id, §Event
   Occurrences), else a random ``evt_<hex>``; ``timestamp`` defaults to now.
4. ``match(arguments, occurrence)`` decides whether a subscription with those arguments
   receives an occurrence (absent: every subscription does) and ``transform(arguments,
   data)`` shapes its payload per subscription (Appendix A "Broadcast emit").
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, cast, get_args, get_origin, get_type_hints

import jsonschema.protocols
from pydantic import BaseModel, TypeAdapter

from mcpkit.core.jsonschema import compile_schema
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.context import Authorize
from mcpkit.experimental.events.store import OccurrenceStore, StoredOccurrence, now_ms
from mcpkit.experimental.events.wire import DELIVERY_MODES, DeliveryMode, EventTypeDescriptor
from mcpkit.server.options import choice

__all__ = [
    "CheckRequest",
    "CheckResult",
    "Event",
    "EventSource",
    "EventsHost",
    "Match",
    "Position",
    "Transform",
    "iso_timestamp",
    "schema_of",
]

Match = Callable[[JSON, StoredOccurrence], bool]
Transform = Callable[[JSON, JSON], JSON]


@dataclass(frozen=True, slots=True)
class Event:
    """An occurrence as a producer hands it over (rule 3): ``data`` the payload,
    ``event_id`` the upstream's id, ``timestamp`` an aware datetime."""

    data: JSON | BaseModel
    event_id: str | None = None
    timestamp: datetime | None = None
    meta: JSON | None = None


@dataclass(frozen=True, slots=True)
class CheckRequest:
    """What a poller's ``check`` is asked (rule 2): the subscription's ``arguments``,
    the upstream ``cursor`` (None: start from now, return no events), ``max_age_ms``
    (do not replay older; None: no bound) and ``max_events``."""

    arguments: JSON
    cursor: str | None
    max_age_ms: int | None
    max_events: int
    principal: Any = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A poller's answer: ``events`` after the cursor, the new upstream ``cursor``
    (None: no replay), ``truncated`` (events were skipped) and ``has_more``."""

    events: Sequence[Event] = ()
    cursor: str | None = None
    truncated: bool = False
    has_more: bool = False


Check = Callable[[CheckRequest], Awaitable[CheckResult]]


class EventsHost(Protocol):
    """What an :class:`EventSource` uses of the extension that declared it
    (:class:`~mcpkit.experimental.events.server.EventsExtension`): its store."""

    @property
    def store(self) -> OccurrenceStore: ...


class Position:
    """A decoded cursor (server rule 5): ``epoch``, ``generation``, ``position`` for the
    store, or ``upstream`` for a poller."""

    __slots__ = ("epoch", "generation", "position", "upstream")

    def __init__(
        self, generation: int, *, epoch: str = "", position: int = 0, upstream: str | None = None
    ) -> None:
        self.epoch = epoch
        self.generation = generation
        self.position = position
        self.upstream = upstream


def iso_timestamp(ms: int) -> str:
    """``ms`` (epoch milliseconds) as ISO 8601 UTC with a ``Z``."""
    stamp = datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def schema_of(spec: Any, default: JSON | None = None) -> JSON:
    """Rule 1: a JSON Schema from a pydantic model or other Python type, a mapping, or
    ``default`` (``{"type": "object"}``) when ``spec`` is None."""
    if spec is None:
        return dict(default or {"type": "object"})
    if isinstance(spec, Mapping):
        return dict(cast("Mapping[str, Any]", spec))
    if isinstance(spec, type) and issubclass(spec, BaseModel):
        return spec.model_json_schema(by_alias=True)
    adapter: TypeAdapter[Any] = TypeAdapter(cast(Any, spec))
    return adapter.json_schema(by_alias=True)


def payload_type_of(fn: Callable[..., Any]) -> Any:
    """The ``X`` of an async generator annotated ``-> AsyncIterator[X]`` (or None)."""
    try:
        hints = get_type_hints(fn)
    except Exception:
        return None
    ret = hints.get("return")
    if ret is not None and get_origin(ret) is not None:
        args = get_args(ret)
        if args:
            return args[0]
    return None


@dataclass(eq=False)
class EventSource:
    """One declared event type (rules 1-4). Emit occurrences with :meth:`emit`."""

    extension: EventsHost
    name: str
    description: str | None
    input_schema: JSON
    payload_schema: JSON
    delivery: tuple[DeliveryMode, ...]
    match: Match | None = None
    transform: Transform | None = None
    authorize: Authorize | None = None
    check: Check | None = None
    meta: JSON | None = None
    generation: int = 0
    """Bumped by an in-place breaking schema change; cursors carry it (SEP-3415 §Event
    type removal and breaking changes: a stale one is answered Unsupported)."""
    validator: jsonschema.protocols.Validator = field(init=False)

    def __post_init__(self) -> None:
        given: Any = self.delivery
        if isinstance(given, str) or not given:
            hint = f" (did you mean [{given!r}]?)" if given in DELIVERY_MODES else ""
            raise ValueError(
                f"event type {self.name!r}: delivery={given!r} must be a non-empty list of "
                f"{', '.join(map(repr, DELIVERY_MODES))}{hint}"
            )
        for mode in self.delivery:
            choice(mode, DELIVERY_MODES, f"event type {self.name!r}: delivery")
        self.validator = compile_schema(self.input_schema)
        compile_schema(self.payload_schema)

    def descriptor(self) -> EventTypeDescriptor:
        return EventTypeDescriptor.model_validate(
            {
                "name": self.name,
                "description": self.description,
                "delivery": list(self.delivery),
                "inputSchema": self.input_schema,
                "payloadSchema": self.payload_schema,
                "_meta": self.meta,
            }
        )

    async def emit(
        self,
        data: JSON | BaseModel | Event,
        *,
        event_id: str | None = None,
        timestamp: datetime | None = None,
        meta: JSON | None = None,
    ) -> StoredOccurrence:
        """Append one occurrence to the store (rule 3); push streams and webhook
        delivery watching the store receive it. Returns what was stored."""
        if isinstance(data, Event):
            event_id, timestamp, meta, data = data.event_id, data.timestamp, data.meta, data.data
        return await self.extension.store.append(
            self.name,
            event_id=event_id or f"evt_{uuid.uuid4().hex}",
            timestamp_ms=now_ms() if timestamp is None else int(timestamp.timestamp() * 1000),
            data=as_payload(data),
            meta=meta,
        )

    def matches(self, arguments: JSON, occurrence: StoredOccurrence) -> bool:
        return self.match is None or bool(self.match(arguments, occurrence))

    def shape(self, arguments: JSON, occurrence: StoredOccurrence) -> JSON:
        """The occurrence's payload for a subscription with ``arguments`` (rule 4)."""
        if self.transform is None:
            return occurrence.data
        return self.transform(arguments, occurrence.data)


def event_body(src: EventSource, ev: Event, cursor: str | None) -> JSON:
    """A poller's :class:`Event` as a wire ``EventOccurrence`` (rule 3)."""
    stamp = ev.timestamp
    body: JSON = {
        "eventId": ev.event_id or f"evt_{uuid.uuid4().hex}",
        "name": src.name,
        "timestamp": iso_timestamp(now_ms() if stamp is None else int(stamp.timestamp() * 1000)),
        "data": as_payload(ev.data),
    }
    if cursor is not None:
        body["cursor"] = cursor
    if ev.meta:
        body["_meta"] = ev.meta
    return body


def as_payload(data: JSON | BaseModel) -> JSON:
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(data)


async def run_generator(source: EventSource, produce: Callable[[], AsyncIterator[Any]]) -> None:
    """Rule 2: emit every item the async generator yields (an :class:`Event`, a model
    or a payload mapping)."""
    async for item in produce():
        await source.emit(item)


def is_async_generator_function(fn: Any) -> bool:
    return inspect.isasyncgenfunction(fn)
