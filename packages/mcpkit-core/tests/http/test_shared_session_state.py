"""The replica-independent parts of shared sessions (:mod:`mcpkit.server.http.shared`):
ids unique per copy, the state diff written back, a reload that keeps unsaved changes.
The multi-replica behaviour itself runs on a real Redis in ``scale/``."""

from __future__ import annotations

from mcpkit.server import Server
from mcpkit.server.http.sessions import HTTPSession, new_copy_tag
from mcpkit.server.http.shared import apply, changes_of, record_of, snapshot
from mcpkit.server.lifecycle import LegacySession


def session(tag: str = "", key: str | None = None) -> HTTPSession:
    legacy = LegacySession(Server("t"))
    legacy.initialize({"protocolVersion": "2025-11-25", "capabilities": {}})
    return HTTPSession("sid", legacy, principal_key=None, key=key, tag=tag)


def test_without_a_store_ids_keep_their_single_process_shape() -> None:
    s = session()
    assert s.new_stream_id() == f"{s.key}-1"
    assert s.pending.next_id() == 1


def test_copies_of_one_session_never_share_a_stream_id_or_a_request_id() -> None:
    one = session(new_copy_tag())
    two = session(new_copy_tag(), key=one.key)
    streams = {one.new_stream_id() for _ in range(5)} | {two.new_stream_id() for _ in range(5)}
    assert len(streams) == 10
    assert all(one.owns(s) and two.owns(s) for s in streams)  # same session, any copy
    requests = {one.pending.next_id() for _ in range(5)} | {two.pending.next_id() for _ in range(5)}
    assert len(requests) == 10


def test_standalone_stream_ids_are_told_apart_from_request_stream_ids() -> None:
    s = session(new_copy_tag())
    assert HTTPSession.is_standalone_id(s.new_stream_id(standalone=True))
    assert not HTTPSession.is_standalone_id(s.new_stream_id())
    plain = session()
    assert not HTTPSession.is_standalone_id(plain.new_stream_id())


def test_only_what_changed_is_written_back() -> None:
    s = session(new_copy_tag())
    snapshot(s)
    assert changes_of(s) == {}
    s.legacy.subscriptions.update({"memo://a", "memo://b"})
    s.legacy.log_level = "error"
    s.legacy.state["k"] = 1
    changes = changes_of(s)
    assert sorted(changes.pop("subscribe")) == ["memo://a", "memo://b"]
    assert changes == {"log_level": "error", "state": {"k": 1}}
    snapshot(s)
    s.legacy.subscriptions.discard("memo://a")
    assert changes_of(s) == {"unsubscribe": ["memo://a"]}


def test_a_reload_keeps_the_changes_not_yet_written() -> None:
    s = session(new_copy_tag())
    snapshot(s)
    record = record_of(s)
    record.subscriptions = {"memo://elsewhere"}
    record.log_level = "debug"
    record.version = 7
    s.legacy.subscriptions.add("memo://here")  # a request here, not yet written back
    apply(s, record)
    assert s.legacy.subscriptions == {"memo://elsewhere", "memo://here"}
    assert s.legacy.log_level == "debug"
    assert s.version == 7
    assert changes_of(s) == {"subscribe": ["memo://here"]}
