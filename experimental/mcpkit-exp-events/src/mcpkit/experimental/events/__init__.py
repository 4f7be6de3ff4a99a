"""mcpkit-exp-events: the events extension (SEP-3415, draft 2026-10-05), experimental tier.

Server: ``events = EventsExtension(server)``, then declare event types with
``events.source(...)`` (emit from callbacks), ``@events.event(...)`` (an async
generator) or ``@events.poller(...)`` (a check function over an upstream cursor).
Client: ``EventsClient(client)`` lists, polls and streams.

Rules:
1. The extension identifier is ``io.modelcontextprotocol/events``; it is advertised with
   ``stability: experimental`` on 2026-07-28 only (SEP-3415 §Capability Negotiation).
2. Every wire name lives in :mod:`.wire`; every bound in :class:`EventsLimits`.
"""

from __future__ import annotations

from mcpkit.experimental.events.client import EventsClient, EventStream, PollBatch
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.limits import EventsLimits
from mcpkit.experimental.events.server import SPEC_VERSION, EventsExtension
from mcpkit.experimental.events.sources import CheckRequest, CheckResult, Event, EventSource
from mcpkit.experimental.events.store import (
    InMemoryStore,
    OccurrenceStore,
    ReadResult,
    StoredOccurrence,
)
from mcpkit.experimental.events.wire import EXTENSION_ID, EventOccurrence, EventTypeDescriptor

__all__ = [
    "EXTENSION_ID",
    "SPEC_VERSION",
    "CheckRequest",
    "CheckResult",
    "Event",
    "EventOccurrence",
    "EventSource",
    "EventStream",
    "EventTypeDescriptor",
    "EventsClient",
    "EventsExtension",
    "EventsLimits",
    "InMemoryStore",
    "OccurrenceStore",
    "PollBatch",
    "ReadResult",
    "StoredOccurrence",
    "SubscriberContext",
]
