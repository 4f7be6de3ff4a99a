"""Resumption through the balancer (handshake era, MCP 2025-11-25 basic/transports
§Resumability and Redelivery): a client streaming a long tool's progress loses its
connection and resumes with ``Last-Event-ID``; the GET lands on another replica, which
replays what was missed from the shared Redis event store.

A replica that does not run the request follows the request's stream in the store
(``mcpkit.server.http.shared`` rule 9): one resumed GET carries every missed event and
the response, as it would on the replica running the request (the 0.1.16 conformance
suite's ``server-sse-polling`` resumes exactly once)."""

from __future__ import annotations

import contextlib

import httpx2
from cluster import Cluster
from wire import Event, Session, sse_events

TIMEOUT = httpx2.Timeout(30.0)  # every read is bounded: a silent stream fails the test


def progress_of(events: list[Event]) -> list[float]:
    return [
        e.message["params"]["progress"]
        for e in events
        if e.message.get("method") == "notifications/progress"
    ]


def test_resumed_get_on_another_replica_delivers_every_event_once(demo_cluster: Cluster) -> None:
    with httpx2.Client(timeout=TIMEOUT) as http:
        session = Session(http, demo_cluster.url)
        session.open()
        call_id = session.next_id
        stream = session.call_stream("sleep", {"seconds": 3}, "resume-1")
        first = session.replicas[-1]
        got: list[Event] = []
        last_id = ""
        for event in sse_events(stream):
            got.append(event)
            last_id = event.id or last_id
            if len(progress_of(got)) == 3:
                break
        stream.close()  # the connection is lost mid-stream
        assert last_id, "the stream's events carry no ids: it cannot be resumed"
        gets_at = len(session.replicas)
        with contextlib.closing(session.resume(last_id)) as resumed:  # exactly one GET
            assert resumed.status_code == 200, resumed.read()
            for event in sse_events(resumed):
                got.append(event)
                if event.message.get("id") == call_id:
                    break
    second = session.replicas[gets_at]
    assert second != first, session.replicas  # round-robin: the GET went elsewhere
    assert progress_of(got) == list(range(11))  # 0..10, each exactly once, in order
    results = [e.message for e in got if e.message.get("id") == call_id]
    assert len(results) == 1
    assert results[0]["result"]["content"][0]["text"] == "slept 3.0 s"
    ids = [e.id for e in got if e.id]
    assert len(ids) == len(set(ids))
