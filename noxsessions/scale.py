"""nox session of the multi-replica tests: real redis-server and HAProxy from apt.

Rules:
1. ``scale`` installs mcpkit-core with its ``scale`` group (the ``redis`` and ``fast``
   extras, the tasks extension) and runs ``scale/``; ``redis-server`` and ``haproxy``
   are installed with apt when missing, and the session fails, never skips, when it
   cannot.
"""

from __future__ import annotations

import nox

from noxsessions.common import ensure_apt, pytest, sync


@nox.session(name="scale")
def scale(session: nox.Session) -> None:
    """Several replicas on Redis behind a real load balancer (scale/)."""
    programs = ensure_apt(session, {"redis-server": "redis-server", "haproxy": "haproxy"})
    sync(session, "mcpkit-core", "scale")
    session.env["MCPKIT_REDIS_SERVER"] = programs["redis-server"]
    session.env["MCPKIT_HAPROXY"] = programs["haproxy"]
    pytest(session, "scale")
