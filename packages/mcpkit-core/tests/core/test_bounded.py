"""mcpkit.core.bounded: a map bounded by entries and bytes (issue 25 §3)."""

from __future__ import annotations

import sys

import pytest

from mcpkit.core.bounded import ENTRY_OVERHEAD_BYTES, BoundedMap, text_bytes


def test_text_bytes_counts_strings_in_nested_keys_and_values() -> None:
    name = "x" * 10_000
    assert text_bytes(("tools/call", name), {"a": [name, b"yy"]}) >= 2 * 10_000
    assert text_bytes(1, 2.0, None) == 0
    shared = ["z" * 100]
    assert text_bytes([shared, shared]) == sys.getsizeof(shared[0])


def test_long_keys_are_bounded_by_bytes_not_only_by_count() -> None:
    table: BoundedMap[str, str] = BoundedMap(max_entries=1024, max_bytes=1 << 20)
    for i in range(40):
        table[f"{i}" + "n" * 100_000] = "v"
    assert table.bytes <= 1 << 20
    assert sum(sys.getsizeof(k) for k in table) <= 1 << 20
    assert 0 < len(table) < 40
    # the most recent entries stay
    assert f"39{'n' * 100_000}" in table


def test_an_entry_larger_than_the_bound_is_not_stored() -> None:
    evicted: list[str] = []
    table: BoundedMap[str, int] = BoundedMap(
        max_entries=10, max_bytes=4096, on_evict=lambda k, v: evicted.append(k)
    )
    table["small"] = 1
    assert not table.put("big" * 10_000, 2)
    assert "small" in table
    assert len(table) == 1
    assert evicted == []


def test_count_bound_and_lru_order() -> None:
    evicted: list[str] = []
    table: BoundedMap[str, int] = BoundedMap(
        max_entries=2, max_bytes=1 << 20, on_evict=lambda k, v: evicted.append(k)
    )
    table["a"], table["b"] = 1, 2
    assert table.get("a") == 1  # a is now the most recent
    table["c"] = 3
    assert evicted == ["b"]
    assert table.keys() == ["a", "c"]
    assert table.peek("a") == 1
    assert table.keys() == ["a", "c"]
    assert table.pop("a") == 1
    assert table.pop("a", 7) == 7
    assert table.bytes == ENTRY_OVERHEAD_BYTES + text_bytes("c")
    table.clear()
    assert len(table) == 0
    assert table.bytes == 0


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        BoundedMap[str, str](max_entries=1, max_bytes=0)


def test_text_bytes_counts_strings_inside_container_subclasses() -> None:
    # Rule 1: before, only the exact built-in types were walked, so a value held in an
    # OrderedDict, a defaultdict or a named tuple was charged nothing, and a BoundedMap
    # of such values kept any number of bytes within its entry count.
    from collections import OrderedDict, defaultdict
    from typing import NamedTuple

    class Shape(NamedTuple):
        name: str

    name = "n" * 100_000
    by_key: defaultdict[str, list[str]] = defaultdict(list)
    by_key["k"].append(name)
    values: list[object] = [OrderedDict(k=name), by_key, Shape(name)]
    for value in values:
        assert text_bytes(value) >= 100_000
    table: BoundedMap[str, Shape] = BoundedMap(max_entries=100, max_bytes=300_000)
    for i in range(10):
        table[f"k{i}"] = Shape(name + str(i))
    assert len(table) <= 2
