"""Hypothesis strategies for :mod:`evil` scripts (kept apart so the stdio script that
plays the evil server does not import hypothesis)."""

from __future__ import annotations

from typing import Any

from evil import PROBE_AS_STRING, SERVER_REQUESTS, TOOLS_RESULT, Script
from hypothesis import strategies as st

JSON = dict[str, Any]

_scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_ids = st.integers(1000, 10**9) | st.text(max_size=6)
"""Ids of responses to nothing: never one the client is waiting for (its ids count up
from 1); the probe's own id with the wrong type is a junk kind of its own."""


@st.composite
def junk_item(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(
        st.sampled_from(
            [
                "garbage",
                "random",
                "unsolicited",
                "wrong-shape",
                "server-request",
                "notification",
                "huge",
                "probe-id-wrong-type",
            ]
        )
    )
    if kind == "garbage":
        text = draw(
            st.sampled_from(
                ["{not json", "NaN", "]]]", "\x00\x01", "[" * 300 + "]" * 300, "{}garbage"]
            )
        )
        return ("raw", text)
    if kind == "random":
        return ("msg", draw(_values))
    if kind == "unsolicited":  # a response to a request nobody sent
        return (
            "msg",
            {
                "jsonrpc": "2.0",
                "id": draw(_ids),
                "result": draw(st.dictionaries(st.text(max_size=4), _values, max_size=2)),
            },
        )
    if kind == "wrong-shape":
        body = draw(
            st.sampled_from(
                [
                    {"result": 5},
                    {"error": "x"},
                    {"result": {}, "error": {"code": 1, "message": "m"}},
                    {},
                ]
            )
        )
        return ("msg", {"jsonrpc": "2.0", "id": draw(_ids), **body})
    if kind == "server-request":
        method = draw(st.sampled_from(SERVER_REQUESTS))
        params = draw(st.none() | st.dictionaries(st.text(max_size=6), _values, max_size=3))
        msg: JSON = {
            "jsonrpc": "2.0",
            "id": "srv-" + str(draw(st.integers(0, 10**6))),
            "method": method,
        }
        if params is not None:
            msg["params"] = params
        return ("msg", msg)
    if kind == "notification":
        method = draw(
            st.sampled_from(
                [
                    "notifications/progress",
                    "notifications/message",
                    "notifications/cancelled",
                    "notifications/tools/list_changed",
                    "notifications/resources/updated",
                    "notifications/x",
                ]
            )
        )
        params = draw(
            st.dictionaries(
                st.sampled_from(["progressToken", "requestId", "level", "data", "uri", "_meta"]),
                _values,
                max_size=3,
            )
        )
        return ("msg", {"jsonrpc": "2.0", "method": method, "params": params})
    if kind == "huge":
        size = draw(st.sampled_from([70_000, 1_000_000]))
        return (
            "msg",
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "z" * size},
            },
        )
    # the probe's id with the wrong JSON type: must not answer the probe
    return ("msg", {"jsonrpc": "2.0", "id": PROBE_AS_STRING, "result": TOOLS_RESULT})


scripts = st.builds(
    Script,
    junk=st.lists(junk_item(), max_size=6),
    final=st.sampled_from(["ok", "ok", "ok", "ok", "error", "bad", "none"]),
    http=st.sampled_from(["sse", "sse", "sse", "json", 400, 404, 500]),
)
