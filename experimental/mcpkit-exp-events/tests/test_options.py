"""Event type options (issue 26, sources.py rule 1): a delivery mode outside the set,
or one mode given as a bare string, fails at declaration naming the event type, the
allowed modes and the closest one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit.experimental.events import EventsExtension
from mcpkit.server import Server

STARTUP_TABLE = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" rows quote these messages."""


@pytest.mark.parametrize(
    ("delivery", "message"),
    [
        (
            ["poll", "psuh"],
            r"delivery: 'psuh' is not one of 'poll', 'push', 'webhook' \(did you "
            r"mean 'push'\?\)",
        ),
        ("push", r"delivery='push' must be a non-empty list of .*\(did you mean \['push'\]\?\)"),
        ([], r"delivery=\(\) must be a non-empty list"),
    ],
)
def test_a_delivery_mode_outside_the_set_names_the_event_and_closest(
    delivery: Any, message: str
) -> None:
    events = EventsExtension(Server("s"))
    with pytest.raises(ValueError, match=rf"^event type 'tick': {message}") as bad:
        events.source("tick", delivery=delivery)
    if delivery == ["poll", "psuh"]:
        assert f"`ValueError: {bad.value}`" in STARTUP_TABLE
    assert "tick" not in events.sources
