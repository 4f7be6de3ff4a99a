"""nox session of mcpkit-exp-events (the experimental events extension).

Rules:
1. ``exp-events`` installs mcpkit-exp-events alone with its ``test`` group (common rule
   1); its Redis store tests run against a real ``redis-server`` (apt when missing; the
   session fails, never skips, when it cannot).
2. The soak test (``tests/on_redis/test_soak.py``) pushes ``MCPKIT_EVENTS_SOAK`` events
   (default 5 000) through each delivery mode; set it in the environment for a longer run
   (``MCPKIT_EVENTS_SOAK=100000 uv run nox -s exp-events --
   experimental/mcpkit-exp-events/tests/on_redis/test_soak.py``).
"""

from __future__ import annotations

import os

import nox

from noxsessions.common import ensure_apt, pytest, sync, xdist_workers


@nox.session(name="exp-events")
def exp_events(session: nox.Session) -> None:
    """mcpkit-exp-events alone: its tests with only mcpkit-core, its declared dependencies
    and its `test` group, with a real redis-server."""
    programs = ensure_apt(session, {"redis-server": "redis-server"})
    session.env["MCPKIT_REDIS_SERVER"] = programs["redis-server"]
    soak = os.environ.get("MCPKIT_EVENTS_SOAK")
    if soak:
        session.env["MCPKIT_EVENTS_SOAK"] = soak
    sync(session, "mcpkit-exp-events", "test")
    pytest(session, "experimental/mcpkit-exp-events/tests", workers=xdist_workers())
