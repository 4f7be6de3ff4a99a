"""Fuzzing the server over streamable HTTP (uvicorn on 127.0.0.1), both eras.

Every frame is one POST, so each HTTP response belongs to exactly one frame:

- a request with a valid id gets exactly one JSON-RPC response with that id (JSON or
  SSE): HTTP 200 on a handshake-era session; on 2026-07-28, 200, or 404 for -32601,
  or 400 for the envelope and header codes (-32602, -32020, -32021, -32022);
- a frame that does not parse is 400 with -32700 and ``id: null``; one that is not a
  request is 400 with the oracle's error (-32600, ``id`` echoed when readable);
- a notification or a response is 202 with no body (2026-07-28 refuses responses: 400
  with -32600, as clients there send none);
- after every example the session (or a 2026-07-28 request) is still served normally.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from conftest import examples
from fuzz_check import check_reply_shape, short
from fuzz_frames import MODERN, Era, Frame, duplicate_pair, envelope, sequences, valid_id
from hypothesis import given
from hypothesis import strategies as st

BOTH = "application/json, text/event-stream"
MODERN_STATUS = {200, 400, 404}
MODERN_400_CODES = {-32602, -32020, -32021, -32022, -32600}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def session(client: httpx2.Client, http_target: tuple[str, Any]) -> str:
    url, _ = http_target
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    }
    r = client.post(url, json=init, headers={"accept": BOTH})
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=_headers("legacy", sid, None),
    )
    assert r.status_code == 202
    return sid


def _headers(era: Era, sid: str | None, frame_value: Any) -> dict[str, str]:
    h = {"content-type": "application/json", "accept": BOTH}
    if era == "legacy":
        h["mcp-protocol-version"] = "2025-11-25"
        if sid is not None:
            h["mcp-session-id"] = sid
        return h
    h["mcp-protocol-version"] = MODERN
    if isinstance(frame_value, dict):
        method: Any = frame_value.get("method")  # pyright: ignore[reportUnknownMemberType]
        # A client can only send what HTTP can carry; an unsendable header is left out
        # (the server then reports the mismatch itself).
        if (
            isinstance(method, str)
            and method.isascii()
            and method.isprintable()
            and len(method) < 4096
        ):
            h["mcp-method"] = method
        params: Any = frame_value.get("params")  # pyright: ignore[reportUnknownMemberType]
        if isinstance(params, dict):
            for field in ("name", "uri"):
                value: Any = params.get(field)  # pyright: ignore[reportUnknownMemberType]
                if isinstance(value, str) and value.isascii() and value.isprintable() and value:
                    h["mcp-name"] = value
                    break
    return h


def _messages(response: httpx2.Response) -> list[Any]:
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        out: list[Any] = []
        for block in response.text.split("\n\n"):
            data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
            if data and data[0]:
                out.append(json.loads("\n".join(data)))
        return out
    if not response.content:
        return []
    value = response.json()
    return value if isinstance(value, list) else [value]


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def judge_http(frame: Frame, response: httpx2.Response, era: Era) -> None:
    e = frame.expect
    status = response.status_code
    msgs = _messages(response)
    replies = [m for m in msgs if not (isinstance(m, dict) and "method" in m)]
    where = f"{frame} -> HTTP {status} {short(response.text, 400)}"
    for reply in replies:
        check_reply_shape(reply)
        if "error" in reply:  # fuzz_check invariant 5
            assert reply["error"]["code"] != -32603, f"internal error for client input: {where}"
    if e.kind in ("silent", "maybe"):
        if status == 202:
            assert not response.content, where
            return
        assert status == 400, where
        assert era == "modern" or e.kind == "maybe", where
        assert len(replies) == 1, where
        assert replies[0]["error"]["code"] == -32600, where
        return
    assert len(replies) == 1, where
    reply = replies[0]
    if e.kind == "error":
        assert status == 400, where
        assert "error" in reply, where
        assert reply["error"]["code"] in e.codes, where
        expected_id = e.id if valid_id(e.id) else None
        assert _same_id(reply["id"], expected_id) or reply["id"] is expected_id, where
        return
    assert _same_id(reply["id"], e.id), where
    if era == "legacy":
        assert status == 200, where
        return
    assert status in MODERN_STATUS, where
    if status == 404:
        assert reply["error"]["code"] == -32601, where
    elif status == 400:
        code = reply["error"]["code"]
        assert code in MODERN_400_CODES or code == -32700, where


def _post(client: httpx2.Client, url: str, data: bytes, headers: dict[str, str]) -> httpx2.Response:
    return client.post(url, content=data, headers=headers)


def _alive(client: httpx2.Client, url: str, era: Era, sid: str | None) -> None:
    if era == "legacy":
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": "sentinel", "method": "ping"}
    else:
        msg = {
            "jsonrpc": "2.0",
            "id": "sentinel",
            "method": "server/discover",
            "params": {"_meta": envelope()},
        }
    r = client.post(url, json=msg, headers=_headers(era, sid, msg))
    assert r.status_code == 200, r.text
    assert "result" in _messages(r)[0], r.text


def _run(client: httpx2.Client, url: str, frames: list[Frame], era: Era, sid: str | None) -> None:
    for f in frames:
        try:
            value = json.loads(f.data)
        except (ValueError, RecursionError):  # garbage, or deeper than Python's json goes
            value = None
        judge_http(f, _post(client, url, f.data, _headers(era, sid, value)), era)
    _alive(client, url, era, sid)


@examples(60)
@given(frames=sequences("legacy", max_size=4))
def test_fuzzed_posts_on_a_legacy_session_get_exactly_the_spec_replies(
    client: httpx2.Client, http_target: tuple[str, Any], session: str, frames: list[Frame]
) -> None:
    _run(client, http_target[0], frames, "legacy", session)


@examples(60)
@given(frames=sequences("modern", max_size=4))
def test_fuzzed_modern_posts_get_exactly_the_spec_replies(
    client: httpx2.Client, http_target: tuple[str, Any], frames: list[Frame]
) -> None:
    _run(client, http_target[0], frames, "modern", None)


@examples(15)
@given(
    rid=st.integers(0, 3) | st.sampled_from(["a", "0"]), era=st.sampled_from(["legacy", "modern"])
)
def test_concurrent_duplicate_ids_each_get_exactly_one_response(
    client: httpx2.Client, http_target: tuple[str, Any], session: str, rid: Any, era: Era
) -> None:
    """Two POSTs with one id at once (the first still in flight): each is answered
    exactly once, the second with a result or -32600 "already in flight"."""
    url = http_target[0]
    sid = session if era == "legacy" else None
    pair = duplicate_pair(rid, era)
    with ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(_post, client, url, f.data, _headers(era, sid, json.loads(f.data)))
            for f in pair
        ]
        responses = [fut.result(timeout=30) for fut in futures]
    for f, r in zip(pair, responses, strict=True):
        judge_http(f, r, era)
    _alive(client, url, era, sid)


def test_the_endpoint_holds_nothing_after_the_fuzzing(
    client: httpx2.Client, http_target: tuple[str, Any], session: str
) -> None:
    """No POST is left in progress and no session but the fuzz session exists.

    The endpoint counts a POST done after the response is sent, so on a busy machine the
    last one may still be finishing when this test starts: it waits (bounded) for the
    count to settle rather than assume a quiet machine."""
    _, endpoint = http_target
    deadline = time.monotonic() + 10
    while (endpoint.posts or len(endpoint.active)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert endpoint.posts == 0
    assert len(endpoint.active) == 0
    assert len(endpoint.sessions) == 1
