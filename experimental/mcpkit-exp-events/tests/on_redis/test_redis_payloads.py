"""Payloads survive the Redis occurrence store byte for byte in meaning (redis_store rule
1): the append script never decodes and re-encodes an occurrence with Redis' Lua cjson,
which turns ``{}`` into ``[]``, rounds numbers to 14 significant digits and drops
precision above 2**53. What a producer emits is what poll, push and webhooks read."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.experimental.events.redis_store import RedisOccurrenceStore
from mcpkit.experimental.events.store import now_ms
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio

ODD: list[dict[str, Any]] = [
    {"empty": {}, "nested": {"inner": {}}, "list": []},
    {"big": 12345678901234567, "neg": -9007199254740993, "precise": 0.1234567890123456},
    {"float": 1e300, "tiny": 5e-324, "int_like_float": 2.0},
    {"text": 'é/\u2028\u0000"\\', "emoji": "\U0001f600"},
    {},
]


async def test_odd_payloads_and_meta_come_back_unchanged(redis_url: str) -> None:
    store = RedisOccurrenceStore(RedisSettings(redis_url))
    try:
        for i, data in enumerate(ODD):
            appended = await store.append(
                "odd", event_id=f"e{i}", timestamp_ms=now_ms(), data=data, meta={"m": {}}
            )
            assert appended.data == data
            assert appended.position == i + 1
        got = await store.read("odd", 0, limit=100)
        assert [o.data for o in got.occurrences] == ODD
        assert all(o.meta == {"m": {}} for o in got.occurrences)
        assert [type(v) for v in got.occurrences[2].data.values()] == [float, float, float]
    finally:
        await store.aclose()
