"""Resumption through the balancer (handshake era, MCP 2025-11-25 basic/transports
§Resumability and Redelivery): a client streaming a long tool's progress loses its
connection and resumes with ``Last-Event-ID``; the GET lands on another replica, which
replays what was missed from the shared Redis event store.

A replica that does not run the request replays what is stored and ends the response;
the client resumes again from the last id it got (as after any stream the server ends,
§Resumability), until the response arrives. On the replica running the request the
stream continues live."""

from __future__ import annotations

import contextlib
import time

import httpx2
from cluster import Cluster
from wire import Event, Session, sse_events

TIMEOUT = httpx2.Timeout(30.0)  # every read is bounded: a silent stream fails the test
RESUME_DEADLINE_S = 60.0  # the tool runs 3 s


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
        deadline = time.monotonic() + RESUME_DEADLINE_S
        while not any(e.message.get("id") == call_id for e in got):
            assert time.monotonic() < deadline, f"no response after resuming: {got}"
            with contextlib.closing(session.resume(last_id)) as resumed:
                assert resumed.status_code == 200, resumed.read()
                for event in sse_events(resumed):
                    got.append(event)
                    last_id = event.id or last_id
                    if event.message.get("id") == call_id:
                        break
            time.sleep(0.1)  # the client's reconnection delay
    second = session.replicas[gets_at]
    assert second != first, session.replicas  # round-robin: the GET went elsewhere
    assert progress_of(got) == list(range(11))  # 0..10, each exactly once, in order
    results = [e.message for e in got if e.message.get("id") == call_id]
    assert len(results) == 1
    assert results[0]["result"]["content"][0]["text"] == "slept 3.0 s"
    ids = [e.id for e in got if e.id]
    assert len(ids) == len(set(ids))
