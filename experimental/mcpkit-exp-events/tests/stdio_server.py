"""An events server over stdio for the tests: ``python stdio_server.py STORE_PATH``.

Event type ``tick`` (poll, push); tools ``emit(n, event_id)`` and ``streams()`` (open
push streams), so a test drives production and observes cancellation over stdio.
"""

from __future__ import annotations

import sys

from mcpkit.experimental.events import EventsExtension, EventsLimits, InMemoryStore
from mcpkit.server import Server

server = Server("events-stdio")
events = EventsExtension(
    server, store=InMemoryStore(path=sys.argv[1]), limits=EventsLimits(heartbeat_s=0.2)
)
tick = events.source("tick", payload={"type": "object"})


@server.tool()
async def emit(n: int, event_id: str) -> str:
    """Emit one tick."""
    await tick.emit({"n": n}, event_id=event_id)
    return "ok"


@server.tool()
async def streams() -> str:
    """How many push streams are open."""
    return str(len(events.streams))


if __name__ == "__main__":
    server.run("stdio")
