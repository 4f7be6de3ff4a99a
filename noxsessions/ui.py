"""nox sessions of mcpkit-ext-ui (MCP Apps): its tests alone, and the browser tests.

Rules:
1. ``ext-ui`` installs mcpkit-ext-ui alone with its ``test`` group (common rule 1).
2. ``ext-ui-browser`` drives Debian's ``chromium`` (installed with apt when missing; the
   session fails, never skips, when it cannot) with Playwright for Python, launching the
   system binary: Playwright's own browser download cannot work here.
"""

from __future__ import annotations

import nox

from noxsessions.common import ensure_apt, pytest, sync, xdist_workers


@nox.session(name="ext-ui")
def ext_ui(session: nox.Session) -> None:
    """mcpkit-ext-ui alone: its tests with only mcpkit-core and its `test` group."""
    sync(session, "mcpkit-ext-ui", "test")
    pytest(session, "packages/mcpkit-ext-ui/tests", workers=xdist_workers())


@nox.session(name="ext-ui-browser")
def ext_ui_browser(session: nox.Session) -> None:
    """The MCP Apps browser tests: Playwright drives Debian's chromium (apt) headless."""
    programs = ensure_apt(session, {"chromium": "chromium"})
    sync(session, "mcpkit-ext-ui", "browser")
    session.env["MCPKIT_CHROMIUM"] = programs["chromium"]
    pytest(session, "packages/mcpkit-ext-ui/tests_browser")
