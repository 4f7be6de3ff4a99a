"""W3C trace context in ``_meta`` (SEP-414): parsing, validation, injection, the current
context (:mod:`mcpkit.core.tracing` rules 1-4, 6)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from trace_helpers import BAGGAGE, STATE, TP, TRACE_ID

from mcpkit.core import tracing
from mcpkit.core.limits import Limits
from mcpkit.core.tracing import TraceContext, from_meta, inject, to_meta

Z32, Z16 = "0" * 32, "0" * 16
MALFORMED_TRACEPARENTS: list[tuple[str, Any]] = [
    ("absent", None),
    ("not a string", 42),
    ("a dict", {"traceparent": TP}),
    ("empty", ""),
    ("too short", TP[:-1]),
    ("version 00 with a suffix", TP + "-00"),
    ("version 00 one char longer", TP + "0"),
    ("uppercase trace id", TP.upper()),
    ("uppercase hex in the parent id", f"00-{TRACE_ID}-00F067AA0BA902B7-01"),
    ("all-zero trace id", f"00-{Z32}-00f067aa0ba902b7-01"),
    ("all-zero parent id", f"00-{TRACE_ID}-{Z16}-01"),
    ("version ff", f"ff-{TRACE_ID}-00f067aa0ba902b7-01"),
    ("version not hex", f"0g-{TRACE_ID}-00f067aa0ba902b7-01"),
    ("missing dash", f"00{TRACE_ID}-00f067aa0ba902b7-01-"),
    ("underscore separators", f"00_{TRACE_ID}_00f067aa0ba902b7_01"),
    ("trace id too short", f"00-{TRACE_ID[:-1]}-00f067aa0ba902b7-011"),
    ("flags not hex", f"00-{TRACE_ID}-00f067aa0ba902b7-0x"),
    ("non-ASCII digit", f"00-{TRACE_ID[:-1]}\u0661-00f067aa0ba902b7-01"),
    ("future version, no dash after the flags", f"cc-{TRACE_ID}-00f067aa0ba902b7-01x"),
    ("future version, too short", f"cc-{TRACE_ID}-00f067aa0ba902b7-0"),
    ("whitespace around", f" {TP} "),
]


@pytest.mark.parametrize(
    ("case", "value"), MALFORMED_TRACEPARENTS, ids=[c for c, _ in MALFORMED_TRACEPARENTS]
)
def test_malformed_traceparent_is_ignored_never_an_error(case: str, value: Any) -> None:
    assert from_meta({"traceparent": value, "tracestate": STATE}) is None, case
    assert TraceContext.parse(value) is None


def test_valid_traceparent_exposes_its_fields() -> None:
    ctx = from_meta({"traceparent": TP, "tracestate": STATE, "baggage": BAGGAGE})
    assert ctx == TraceContext(TP, STATE, BAGGAGE)
    assert ctx.trace_id == TRACE_ID
    assert ctx.parent_id == "00f067aa0ba902b7"
    assert ctx.flags == 1
    assert ctx.sampled
    unsampled = TraceContext.parse(TP[:-2] + "00")
    assert unsampled is not None
    assert not unsampled.sampled
    assert ctx.to_meta() == {"traceparent": TP, "tracestate": STATE, "baggage": BAGGAGE}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f"01-{TRACE_ID}-00f067aa0ba902b7-01", f"00-{TRACE_ID}-00f067aa0ba902b7-01"),
        (
            f"cc-{TRACE_ID}-00f067aa0ba902b7-09-what-the-future-holds",
            f"00-{TRACE_ID}-00f067aa0ba902b7-01",
        ),
        (f"cc-{TRACE_ID}-00f067aa0ba902b7-03", f"00-{TRACE_ID}-00f067aa0ba902b7-03"),
    ],
)
def test_future_versions_are_read_by_the_version_00_prefix(value: str, expected: str) -> None:
    """W3C Trace Context §3.2.4 (versioning): a higher version is parsed by the 00 layout
    and re-emitted as version 00 with only the flags this version defines."""
    ctx = TraceContext.parse(value)
    assert ctx is not None
    assert ctx.traceparent == expected


MALFORMED_TRACESTATES: list[tuple[str, Any]] = [
    ("not a string", ["rojo=1"]),
    ("empty", ""),
    ("only commas", " , ,"),
    ("no equals sign", "rojo"),
    ("uppercase key", "Rojo=1"),
    ("key starting with a digit (no tenant)", "1rojo=1"),
    ("comma in the value", "rojo=a=b,"),
    ("equals sign in the value", "rojo=a=b"),
    ("value ending in a space", "rojo=a ,x"),
    ("duplicate key", "rojo=1,rojo=2"),
    ("33 members", ",".join(f"k{i}=v" for i in range(33))),
    (
        "over max_tracestate_bytes",
        "a=" + "x" * 255 + "," + ",".join(f"k{i}=" + "y" * 250 for i in range(31)),
    ),
]


@pytest.mark.parametrize(
    ("case", "value"), MALFORMED_TRACESTATES, ids=[c for c, _ in MALFORMED_TRACESTATES]
)
def test_malformed_tracestate_alone_is_dropped(case: str, value: Any) -> None:
    limit = 4096 if case == "over max_tracestate_bytes" else 8192
    ctx = from_meta(
        {"traceparent": TP, "tracestate": value, "baggage": BAGGAGE}, max_tracestate_bytes=limit
    )
    assert ctx == TraceContext(TP, None, BAGGAGE), case


def test_well_formed_tracestates_are_kept() -> None:
    for value in (
        "rojo=00f067aa0ba902b7",
        "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE",
        "tenant1@vendor=x,,a_b-c*/d=y z",
        ",".join(f"k{i}=v" for i in range(32)),
    ):
        ctx = from_meta({"traceparent": TP, "tracestate": value})
        assert ctx is not None
        assert ctx.tracestate == value


MALFORMED_BAGGAGE: list[tuple[str, Any]] = [
    ("not a string", {"a": "b"}),
    ("empty", ""),
    ("no equals sign", "userId"),
    ("space inside the key", "user Id=alice"),
    ("comma only", ","),
    ("double quote in the value", 'userId="alice"'),
    ("65 members", ",".join(f"k{i}=v" for i in range(65))),
    ("over max_baggage_bytes", "k=" + "v" * 9000),
]


@pytest.mark.parametrize(
    ("case", "value"), MALFORMED_BAGGAGE, ids=[c for c, _ in MALFORMED_BAGGAGE]
)
def test_malformed_baggage_alone_is_dropped(case: str, value: Any) -> None:
    ctx = from_meta({"traceparent": TP, "tracestate": STATE, "baggage": value})
    assert ctx == TraceContext(TP, STATE, None), case


def test_well_formed_baggage_is_kept_with_properties() -> None:
    for value in (
        BAGGAGE,
        "key1=value1;property1;property2, key2 = value2, key3=value3; propertyKey=propertyValue",
    ):
        ctx = from_meta({"traceparent": TP, "baggage": value})
        assert ctx is not None
        assert ctx.baggage == value


def test_limits_bound_tracestate_and_baggage_and_are_validated() -> None:
    assert Limits().max_tracestate_bytes == 8192
    assert Limits().max_baggage_bytes == 8192
    with pytest.raises(ValueError, match="max_baggage_bytes"):
        Limits(max_baggage_bytes=0)
    small = {"traceparent": TP, "tracestate": STATE, "baggage": BAGGAGE}
    assert from_meta(small, max_tracestate_bytes=10, max_baggage_bytes=10) == TraceContext(TP)


@pytest.mark.parametrize("meta", [None, 3, "traceparent", ["traceparent"], {}])
def test_meta_that_is_not_an_object_has_no_context(meta: Any) -> None:
    assert from_meta(meta) is None
    assert not tracing.carries_trace({"_meta": meta})
    assert not tracing.carries_trace(meta)


def test_to_meta_replaces_the_trace_keys_in_place() -> None:
    meta = {"traceparent": "old", "baggage": "old=1", "other": 1}
    assert to_meta(meta, TraceContext(TP, STATE)) is meta
    assert meta == {"traceparent": TP, "tracestate": STATE, "other": 1}
    to_meta(meta, None)
    assert meta == {"other": 1}


def test_inject_copies_and_never_overrides_an_explicit_traceparent() -> None:
    ctx = TraceContext(TP, STATE)
    params = {"name": "x", "_meta": {"progressToken": 1}}
    out = inject(params, ctx)
    assert out == {
        "name": "x",
        "_meta": {"progressToken": 1, "traceparent": TP, "tracestate": STATE},
    }
    assert params == {"name": "x", "_meta": {"progressToken": 1}}  # untouched
    explicit = {"_meta": {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-00"}}
    assert inject(explicit, ctx) is explicit
    assert inject(None, ctx) == {"_meta": {"traceparent": TP, "tracestate": STATE}}
    assert inject(params, None) is params


@pytest.mark.anyio
async def test_use_sets_the_current_context_for_the_block_and_its_tasks_only() -> None:
    ctx = TraceContext(TP)
    seen: list[TraceContext | None] = []

    async def child() -> None:
        seen.append(tracing.current())

    assert tracing.current() is None
    with tracing.use(ctx):
        assert tracing.current() is ctx
        async with anyio.create_task_group() as tg:
            tg.start_soon(child)
        with tracing.use(None):
            assert tracing.current() is None
        assert tracing.current() is ctx
    assert tracing.current() is None
    assert seen == [ctx]


def test_set_link_outside_a_traced_message_does_nothing() -> None:
    tracing.set_link(TraceContext(TP))  # no error, nowhere to go
