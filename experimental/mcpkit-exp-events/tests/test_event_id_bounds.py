"""The events client's duplicate window keeps a fixed size per event id (client rule 5,
issue 25 §3): the server chooses ids and their length."""

from __future__ import annotations

from mcpkit.core.bounded import text_bytes
from mcpkit.experimental.events.client import _Dedup  # pyright: ignore[reportPrivateUsage]


def test_the_duplicate_window_holds_digests_not_the_servers_ids() -> None:
    dedup = _Dedup(4096)
    ids = [f"{n}" + "e" * 100_000 for n in range(100)]
    assert all(dedup.fresh(i) for i in ids)
    assert not dedup.fresh(ids[7])  # a duplicate is still recognised
    assert dedup.dropped == 1
    assert text_bytes(list(dedup.seen)) <= 100 * 64
