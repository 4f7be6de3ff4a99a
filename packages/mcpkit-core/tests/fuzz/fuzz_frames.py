"""Frames for fuzzing a server, and what the spec says must come back for each.

A :class:`Frame` is the bytes of one message (a stdio line without its newline, an
HTTP body) plus :class:`Expect`: the replies JSON-RPC 2.0 and MCP ``basic/index``
prescribe for it. The oracle is written from the specs, not from mcpkit's code:

- bytes that are not JSON (or not UTF-8, or nested deeper than the limit): one -32700
  error with ``id: null``;
- a JSON value that is not an object (a batch where batches are not allowed, a number,
  a string): one -32600 error with ``id: null``;
- an object with ``method`` and ``id``: exactly one response carrying that id when the
  id is a string or an integer (any spec error code, or a result), else one -32600
  with ``id: null``;
- a well-formed notification: nothing; a malformed one: one -32600 with ``id: null``;
- a response (``result``/``error``, no ``method``) to nothing: nothing when it is
  well formed; a malformed one may be answered with one -32600;
- anything else: one -32600, echoing a readable id.

Strategies: :func:`frames` (a mix of every kind), per era (``"legacy"`` frames go on
an initialized session, ``"modern"`` frames carry the 2026-07-28 ``_meta`` envelope).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

from mcpkit.core.limits import DEFAULT_MAX_DEPTH

JSON = dict[str, Any]
Era = Literal["legacy", "modern"]

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
META_LEVEL = "io.modelcontextprotocol/logLevel"

SPEC_CODES = frozenset(
    {-32700, -32600, -32601, -32602, -32603, -32002, -32042, -32020, -32021, -32022}
)
"""JSON-RPC's standard codes and the MCP ones (both eras)."""
NULL_ID_CODES = frozenset({-32700, -32600})

SENTINEL_PREFIX = "sentinel-"
"""Ids the drivers use for their own liveness requests; never generated."""
RESPONSE_PREFIX = "resp-"
"""Ids of stray responses; no generated request uses them."""
CANCEL_PREFIX = "cancel-"
"""``notifications/cancelled`` frames name only ids with this prefix, which no generated
request uses: cancelling unknown ids must be ignored, and every request still answered."""

LEGACY_METHODS = (
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
)
MODERN_METHODS = (
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "completion/complete",
    # removed on 2026-07-28: must be -32601, still exactly one answer
    "ping",
    "initialize",
    "logging/setLevel",
)
TOOLS = ("echo", "add", "nap", "structured", "fails", "nope")
NOTIFICATIONS = (
    "notifications/initialized",
    "notifications/roots/list_changed",
    "notifications/progress",
    "notifications/cancelled",
    "notifications/whatever",
)


@dataclass(frozen=True)
class Expect:
    """The replies one frame must get (see the module docstring).

    ``kind``: ``"answer"`` (exactly one response with ``id``, result or error),
    ``"error"`` (exactly one error response with ``id``, None meaning ``null``, and a
    code in ``codes``), ``"silent"`` (nothing) or ``"maybe"`` (nothing, or one -32600
    with ``id``).
    """

    kind: Literal["answer", "error", "silent", "maybe"]
    id: Any = None
    codes: frozenset[int] = SPEC_CODES


class Frame:
    """One message's bytes, its expected replies and a label (a short repr: frames can
    be megabytes, and hypothesis prints failing examples)."""

    __slots__ = ("data", "expect", "label")

    def __init__(self, data: bytes, expect: Expect, label: str) -> None:
        self.data = data
        self.expect = expect
        self.label = label

    def __repr__(self) -> str:
        shown = self.data[:160]
        more = f"...(+{len(self.data) - 160} bytes)" if len(self.data) > 160 else ""
        e = self.expect
        want = e.kind if e.kind == "silent" else f"{e.kind} id={str(e.id)[:40]!r}"
        return f"Frame({self.label}: {shown!r}{more} -> {want})"


def encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


def valid_id(value: Any) -> bool:
    return type(value) is int or type(value) is str


def envelope(caps: JSON | None = None) -> JSON:
    return {
        META_VERSION: MODERN,
        META_CAPS: caps or {},
        META_INFO: {"name": "fuzz", "version": "1"},
    }


def oracle(value: Any) -> Expect:
    """What the spec asks for ``value`` (a parsed JSON value; batches not allowed)."""
    if type(value) is not dict:
        return Expect("error", None, frozenset({-32600}))
    msg: JSON = value
    rid = msg.get("id")
    ok_id = valid_id(rid)
    echoed = rid if ok_id else None
    envelope_ok = msg.get("jsonrpc") == "2.0"
    if "method" in msg:
        params = msg.get("params")
        well_formed = (
            envelope_ok
            and isinstance(msg["method"], str)
            and (params is None or type(params) is dict)
        )
        if "id" not in msg:
            if well_formed:
                return Expect("silent")
            return Expect("error", None, frozenset({-32600, -32602}))
        if well_formed and ok_id:
            return Expect("answer", rid)
        return Expect("error", echoed, frozenset({-32600, -32602}))
    if "result" in msg or "error" in msg:
        if envelope_ok and ok_id and _well_formed_response(msg):
            return Expect("silent")
        return Expect("maybe", echoed, frozenset({-32600}))
    return Expect("error", echoed, frozenset({-32600}))


def _well_formed_response(msg: JSON) -> bool:
    if ("result" in msg) == ("error" in msg):
        return False
    if "result" in msg:
        return type(msg["result"]) is dict
    err = msg["error"]
    return (
        type(err) is dict and type(err.get("code")) is int and isinstance(err.get("message"), str)
    )


def frame(value: Any, label: str) -> Frame:
    return Frame(encode(value), oracle(value), label)


# -- strategies ----------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=16)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=5)

valid_ids = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=12).filter(
    lambda s: not s.startswith((SENTINEL_PREFIX, CANCEL_PREFIX, RESPONSE_PREFIX))
)
invalid_ids = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(scalars, max_size=2)
    | st.dictionaries(st.text(max_size=4), scalars, max_size=2)
)


def _meta(era: Era) -> st.SearchStrategy[Any]:
    """Valid, absent, and wrong-typed ``_meta`` (and envelope keys) for an era."""
    progress = st.fixed_dictionaries({"progressToken": valid_ids | invalid_ids})
    if era == "legacy":
        return st.none() | progress | json_values
    good = st.just(envelope())
    bad_version = st.builds(
        lambda v: {**envelope(), META_VERSION: v},
        st.sampled_from(["1999-01-01", "", "2025-11-25"]) | json_values,
    )
    bad_caps = st.builds(lambda c: {**envelope(), META_CAPS: c}, json_values)
    missing = st.sampled_from([{META_VERSION: MODERN}, {META_CAPS: {}}])
    level = st.builds(
        lambda v: {**envelope(), META_LEVEL: v},
        st.sampled_from(["debug", "error", "loud"]) | json_values,
    )
    with_progress = st.builds(lambda p: {**envelope(), **p}, progress)
    return st.one_of(
        good, good, good, with_progress, bad_version, bad_caps, missing, level, json_values
    )


def _params_for(method: str) -> st.SearchStrategy[JSON]:
    if method == "tools/call":
        return st.fixed_dictionaries(
            {"name": st.sampled_from(TOOLS) | st.text(max_size=8)},
            optional={
                "arguments": st.one_of(
                    st.fixed_dictionaries({"text": st.text(max_size=40)}),
                    st.fixed_dictionaries({"a": json_values, "b": json_values}),
                    st.fixed_dictionaries({"ms": st.integers(-5, 30)}),
                    json_values,
                )
            },
        )
    if method in ("prompts/get",):
        return st.fixed_dictionaries(
            {"name": st.sampled_from(["greet", "nope"]) | st.text(max_size=8)},
            optional={
                "arguments": st.dictionaries(
                    st.text(max_size=6), st.text(max_size=6) | json_values, max_size=3
                )
            },
        )
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return st.fixed_dictionaries(
            {
                "uri": st.sampled_from(["fuzz://static", "fuzz://item/7", "nope://x"])
                | st.text(max_size=20)
                | json_values
            }
        )
    if method == "logging/setLevel":
        return st.fixed_dictionaries(
            {"level": st.sampled_from(["debug", "info", "error", "loud"]) | json_values}
        )
    if method == "completion/complete":
        return st.fixed_dictionaries(
            {
                "ref": st.sampled_from([{"type": "ref/prompt", "name": "greet"}, {"type": "ref/x"}])
                | json_values,
                "argument": st.fixed_dictionaries(
                    {"name": st.text(max_size=6), "value": st.text(max_size=6)}
                )
                | json_values,
            }
        )
    if method.endswith("/list"):
        return st.fixed_dictionaries({}, optional={"cursor": st.text(max_size=12) | json_values})
    return json_objects


@st.composite
def well_formed(draw: st.DrawFn, era: Era) -> Frame:
    """A request to a known method with random, often wrong, params (and ``_meta``)."""
    method = draw(st.sampled_from(LEGACY_METHODS if era == "legacy" else MODERN_METHODS))
    params: JSON = dict(draw(_params_for(method)))
    meta = draw(_meta(era))
    if meta is not None:
        params["_meta"] = meta
    msg: JSON = {"jsonrpc": "2.0", "id": draw(valid_ids), "method": method}
    if params or draw(st.booleans()):
        msg["params"] = params
    return frame(msg, f"well-formed {method}")


@st.composite
def wrong_types(draw: st.DrawFn, era: Era) -> Frame:
    """A request with a wrong ``jsonrpc``, ``id``, ``method``, ``params`` or ``_meta``."""
    base = draw(well_formed(era))
    msg: JSON = json.loads(base.data)
    field = draw(
        st.sampled_from(["jsonrpc", "id", "method", "params", "_meta", "drop-id", "drop-jsonrpc"])
    )
    if field == "id":
        msg["id"] = draw(invalid_ids)
    elif field == "method":
        msg["method"] = draw(json_values.filter(lambda v: not isinstance(v, str)))
    elif field == "params":
        msg["params"] = draw(
            json_values.filter(lambda v: not isinstance(v, dict) and v is not None)
        )
    elif field == "_meta":
        msg.setdefault("params", {})["_meta"] = draw(json_values)
    elif field == "jsonrpc":
        msg["jsonrpc"] = draw(json_values.filter(lambda v: v != "2.0"))
    elif field == "drop-id":
        msg.pop("id")
    else:
        msg.pop("jsonrpc")
    return frame(msg, f"wrong {field}")


@st.composite
def raw_garbage(draw: st.DrawFn) -> Frame:
    """Bytes that are not one JSON value: invalid UTF-8, truncation, NaN, junk."""
    kind = draw(st.sampled_from(["bytes", "utf8", "truncated", "nan", "text", "trailing"]))
    if kind == "bytes":
        data = draw(st.binary(min_size=1, max_size=64))
    elif kind == "utf8":
        prefix = encode(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}
        )
        bad = draw(
            st.sampled_from(
                [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]
            )
        )
        data = (
            b'{"jsonrpc":"2.0","id":1,"method":"' + bad + b'"}'
            if draw(st.booleans())
            else prefix[:-2] + bad + b"}}"
        )
    elif kind == "truncated":
        whole = draw(well_formed("legacy")).data
        data = whole[: draw(st.integers(1, max(1, len(whole) - 1)))]
    elif kind == "nan":
        data = draw(
            st.sampled_from(
                [
                    b"NaN",
                    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
                    b"[-Infinity]",
                ]
            )
        )
    elif kind == "trailing":
        data = encode({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + b" x"
    else:
        data = draw(st.text(min_size=1, max_size=40)).encode("utf-8")
    data = data.replace(b"\n", b" ").replace(b"\r", b" ")
    if not data.strip():  # a blank line is no message on stdio: send an empty batch
        return Frame(b"[]", Expect("error", None, frozenset({-32600})), "empty batch")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, UnicodeDecodeError):
        return Frame(data, Expect("error", None, frozenset({-32700})), f"garbage {kind}")
    if isinstance(value, list):
        return Frame(data, Expect("error", None, frozenset({-32600})), f"garbage {kind} array")
    return frame(value, f"garbage {kind} that parses")


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@st.composite
def random_json(draw: st.DrawFn) -> Frame:
    value = draw(json_values | json_objects)
    if isinstance(value, list):
        return Frame(encode(value), Expect("error", None, frozenset({-32600})), "batch/array")
    return frame(value, "random json")


@st.composite
def oversized(draw: st.DrawFn, era: Era) -> Frame:
    """A well-formed request with a large string (up to 256 KiB) somewhere in it."""
    size = draw(st.sampled_from([4096, 65536, 262144]))
    text = draw(st.sampled_from(["x", "é", "東", "🚀"])) * (size // 4)
    place = draw(st.sampled_from(["argument", "method", "id", "meta"]))
    params: JSON = {"name": "echo", "arguments": {"text": "hi"}}
    if era == "modern":
        params["_meta"] = envelope()
    msg: JSON = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    if place == "argument":
        params["arguments"]["text"] = text
    elif place == "method":
        msg["method"] = text
    elif place == "id":
        msg["id"] = text
    else:
        params.setdefault("_meta", {})["big"] = text
    msg["id"] = msg["id"] if place == "id" else draw(valid_ids)
    return frame(msg, f"oversized {place}")


@st.composite
def deep(draw: st.DrawFn, era: Era) -> Frame:
    """Nesting around the depth limit, in the arguments of a well-formed request."""
    depth = draw(
        st.sampled_from(
            [DEFAULT_MAX_DEPTH - 3, DEFAULT_MAX_DEPTH - 2, DEFAULT_MAX_DEPTH + 1, 150, 250, 5000]
        )
    )
    inner = "[" * (depth - 3) + "]" * (depth - 3)  # the request adds params and arguments
    rid = draw(st.integers(0, 1000))
    meta = f',"_meta":{json.dumps(envelope())}' if era == "modern" else ""
    data = (
        f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"echo",'
        f'"arguments":{{"text":{inner}}}{meta}}}}}'
    ).encode()
    # depth: message 1, params 2, arguments 3, then the arrays
    total = 3 + (depth - 3)
    if total > DEFAULT_MAX_DEPTH:
        return Frame(data, Expect("error", None, frozenset({-32700})), f"deep {total}")
    return Frame(data, Expect("answer", rid), f"deep {total}")


@st.composite
def unknown_method(draw: st.DrawFn, era: Era) -> Frame:
    method = draw(
        st.text(max_size=24).filter(
            lambda m: m not in LEGACY_METHODS + MODERN_METHODS + ("initialize",)
        )
    )
    params: JSON = draw(json_objects)
    if era == "modern":
        params["_meta"] = envelope()
    msg: JSON = {"jsonrpc": "2.0", "id": draw(valid_ids), "method": method, "params": params}
    if draw(st.booleans()):  # a notification name sent as a request
        msg["method"] = draw(st.sampled_from(NOTIFICATIONS))
        if msg["method"] == "notifications/cancelled":
            msg["params"]["requestId"] = CANCEL_PREFIX + str(draw(st.integers(0, 9)))
    return frame(msg, "unknown method / notification with id")


@st.composite
def notification(draw: st.DrawFn, era: Era) -> Frame:
    method = draw(st.sampled_from(NOTIFICATIONS) | st.text(max_size=16))
    params: JSON = draw(json_objects)
    if method == "notifications/cancelled":  # never one of the ids in flight
        params["requestId"] = draw(
            st.sampled_from([CANCEL_PREFIX + "a", CANCEL_PREFIX]) | invalid_ids
        )
    if era == "modern" and draw(st.booleans()):
        params["_meta"] = envelope()
    msg: JSON = {"jsonrpc": "2.0", "method": method}
    if params or draw(st.booleans()):
        msg["params"] = params
    return frame(msg, "notification")


@st.composite
def stray_response(draw: st.DrawFn) -> Frame:
    """A response to a request nobody sent (well formed or not)."""
    # Its own id space: a malformed response may or may not be answered, so it must not
    # share an id with a request whose answers are being counted.
    rid = draw(st.builds(lambda t: RESPONSE_PREFIX + t, st.text(max_size=6)) | invalid_ids)
    body = draw(st.sampled_from(["result", "error", "both", "bad-error"]))
    msg: JSON = {"jsonrpc": "2.0", "id": rid}
    if body in ("result", "both"):
        msg["result"] = draw(json_objects)
    if body in ("error", "both"):
        msg["error"] = {"code": draw(st.integers(-33000, 0)), "message": draw(st.text(max_size=10))}
    if body == "bad-error":
        msg["error"] = draw(json_values)
    if draw(st.integers(0, 5)) == 0:
        msg.pop("jsonrpc")
    return frame(msg, f"stray response {body}")


def duplicate_pair(rid: Any, era: Era) -> list[Frame]:
    """Two requests with one id, the first slow enough to still be in flight."""
    params: JSON = {"name": "nap", "arguments": {"ms": 20}}
    if era == "modern":
        params["_meta"] = envelope()
    first = frame(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, "dup first"
    )
    second = frame(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, "dup second"
    )
    return [first, second]


def frames(era: Era, *, garbage: bool = True) -> st.SearchStrategy[Frame]:
    """One frame of any kind (``garbage=False``: only frames that parse as JSON)."""
    kinds = [
        well_formed(era),
        well_formed(era),
        wrong_types(era),
        random_json(),
        oversized(era),
        deep(era),
        unknown_method(era),
        notification(era),
        stray_response(),
    ]
    if garbage:
        kinds.append(raw_garbage())
    return st.one_of(kinds)


@st.composite
def sequences(draw: st.DrawFn, era: Era, *, garbage: bool = True, max_size: int = 6) -> list[Frame]:
    """A short run of frames, sometimes with a duplicate-id pair in it."""
    out = draw(st.lists(frames(era, garbage=garbage), min_size=1, max_size=max_size))
    if draw(st.integers(0, 3)) == 0:
        pair = duplicate_pair(draw(valid_ids), era)
        at = draw(st.integers(0, len(out)))
        out[at:at] = pair
    return out
