"""Issue 26, "configuration accepted silently": ``Tasks(ttl_ms=-5)`` (and every other
number of the constructor) was accepted; tasks then expired at once, or a watcher spun.
Now they are checked when it is made (``mcpkit.core.limits.check_arguments``)."""

from __future__ import annotations

import math

import pytest

from mcpkit.ext.tasks import Tasks

CASES = [
    ("ttl_ms", -5),
    ("ttl_ms", 0),
    ("ttl_ms", 1.5),
    ("max_ttl_ms", True),
    ("poll_interval_ms", -1),
    ("watch_interval_s", 0),
    ("watch_interval_s", math.nan),
    ("max_result_bytes", 0),
]


@pytest.mark.parametrize(("name", "bad"), CASES, ids=[f"{n}={b!r}" for n, b in CASES])
def test_a_nonsense_number_is_refused_when_tasks_is_made(name: str, bad: object) -> None:
    with pytest.raises(ValueError, match=rf"^Tasks\.{name}: must be .*, got {bad!r}$"):
        Tasks(**{name: bad})  # pyright: ignore[reportArgumentType]


def test_none_stays_allowed_where_the_signature_says_so() -> None:
    tasks = Tasks(ttl_ms=None, max_ttl_ms=None, poll_interval_ms=None)
    assert tasks.ttl_ms is None
