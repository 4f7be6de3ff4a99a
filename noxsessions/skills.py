"""nox sessions of mcpkit-ext-skills (the Skills extension, SEP-2640).

Rules:
1. ``ext-skills`` installs mcpkit-ext-skills alone with its ``test`` group (common rule 1)
   and runs its tests.
"""

from __future__ import annotations

from pathlib import Path

import nox

from noxsessions.common import pytest, sync, xdist_workers

ROOT = Path(__file__).resolve().parent.parent


@nox.session(name="ext-skills")
def ext_skills(session: nox.Session) -> None:
    """mcpkit-ext-skills alone: its tests with only mcpkit-core, PyYAML and its `test` group."""
    sync(session, "mcpkit-ext-skills", "test")
    pytest(session, "packages/mcpkit-ext-skills/tests", workers=xdist_workers())
