"""Issue 26, "configuration accepted silently": the events extension's limits check
their numbers when made (``mcpkit.core.limits.check_limits``)."""

from __future__ import annotations

import math

import pytest

from mcpkit.core.limits import numeric_fields
from mcpkit.experimental.events.limits import EventsLimits
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.wellknown import WellKnownPolicy

CASES = [
    (cls, name, bad)
    for cls in (EventsLimits, WebhookLimits, WellKnownPolicy)
    for name, kind, _ in numeric_fields(cls)
    for bad in (-1, True, math.nan if kind is float else 1.5)
]


@pytest.mark.parametrize(
    ("cls", "name", "bad"), CASES, ids=[f"{c.__name__}.{n}={b!r}" for c, n, b in CASES]
)
def test_every_numeric_field_refuses_a_negative_and_a_wrong_type(
    cls: type, name: str, bad: object
) -> None:
    with pytest.raises(ValueError, match=rf"^{cls.__name__}\.{name}: must be .*, got "):
        cls(**{name: bad})


def test_ranges_and_orders_are_checked() -> None:
    with pytest.raises(ValueError, match=r"WebhookLimits.suspend_failure_ratio: .* at most 1"):
        WebhookLimits(suspend_failure_ratio=1.5)
    with pytest.raises(ValueError, match=r"WebhookLimits.min_ttl_ms: must not exceed"):
        WebhookLimits(min_ttl_ms=10 * 60 * 1000, max_ttl_ms=5 * 60 * 1000)
    with pytest.raises(ValueError, match=r"EventsLimits.heartbeat_s: .*, got 0"):
        EventsLimits(heartbeat_s=0)


def test_zero_stays_allowed_where_it_is_documented() -> None:
    assert EventsLimits(max_streams=0).max_streams == 0
    WebhookLimits(backoff_initial_s=0, backoff_max_s=0, rotation_grace_s=0)
    WellKnownPolicy(fetch_interval_s=0)
