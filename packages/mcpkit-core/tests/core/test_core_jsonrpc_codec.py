"""The wire codec (``mcpkit.core.jsonrpc`` rules 5-7): orjson for speed, pydantic-core's
verdicts. Every text gets exactly the value or the error pydantic-core gives; every
plain JSON value is written with exactly pydantic-core's bytes."""

from __future__ import annotations

import datetime
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import from_json, to_json

from mcpkit.core.jsonrpc import ORJSON_MAX_BYTES, dumps, loads

pytestmark = pytest.mark.lowest


def reference(data: bytes) -> Any:
    try:
        return from_json(data, cache_strings="keys", allow_inf_nan=False)
    except ValueError as exc:
        return ("error", str(exc))


def ours(data: bytes) -> Any:
    try:
        return loads(data, 200)
    except ValueError as exc:
        return ("error", str(exc))


def same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # pyright: ignore
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # pyright: ignore
    return a == b


TOKENS = [
    b"{", b"}", b"[", b"]", b'"', b":", b",", b"1", b"0", b"-", b".", b"e", b"+", b"true",
    b"null", b"\\", b"u", b"d800", b"\\n", b"\t", b"\x00", b"\x1f", b"\xc3\xa9", b"\xff",
    b"\xed\xa0\x80", b" ", b"NaN", b"Infinity", b"\\ud83d\\ude00", b"\xef\xbb\xbf",
    b"9" * 20, b"1e400", b"00", b"-0", b'"k":', b"1.5", b"18446744073709551616",
]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=10))
def test_any_short_text_gets_pydantic_cores_value_or_error(tokens: list[bytes]) -> None:
    data = b"".join(tokens)
    assert same(ours(data), reference(data))


@pytest.mark.parametrize(
    "text",
    [
        b'{"id":123456789012345678901234567890}',
        b'{"id":-9223372036854775809,"x":1}',
        b"18446744073709551616",
        b'{"a":[1,2,{"b":99999999999999999999}]}',
    ],
)
def test_integers_beyond_64_bits_stay_exact(text: bytes) -> None:
    assert same(loads(text), from_json(text))
    assert dumps(loads(text)) == text


def test_a_long_text_with_a_big_integer_stays_exact() -> None:
    text = b'{"n":123456789012345678901234567890,"pad":"' + b"x" * ORJSON_MAX_BYTES + b'"}'
    assert loads(text)["n"] == 123456789012345678901234567890


def test_digits_inside_a_string_are_only_a_slower_read() -> None:
    assert loads(b'{"s":"12345678901234567890123"}') == {"s": "12345678901234567890123"}


plain_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=1000, deadline=None)
@given(plain_json)
def test_plain_values_are_written_with_pydantic_cores_exact_bytes(value: Any) -> None:
    try:
        expected = to_json(value, inf_nan_mode="null")
    except ValueError:  # lone surrogates: neither codec writes them
        with pytest.raises(ValueError, match="surrogates not allowed"):
            dumps(value)
        return
    assert dumps(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"big": 10**30},
        {1: "non-string key"},
        {"set": {1}},
        {"bytes": b"ab"},
        {"when": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)},
        {"nan": float("nan"), "inf": [float("-inf")]},
    ],
)
def test_what_orjson_does_not_write_the_same_way_is_written_by_pydantic_core(value: Any) -> None:
    assert dumps(value) == to_json(value, inf_nan_mode="null")


def test_reading_a_short_message_does_not_import_pydantic_core() -> None:
    code = (
        "import sys; from mcpkit.core.jsonrpc import loads, dumps; "
        'dumps(loads(b\'{"jsonrpc":"2.0","id":1,"method":"ping"}\')); '
        "print('pydantic_core' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
