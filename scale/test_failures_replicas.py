"""Replica failures behind the balancer (issue 17 "Failure behaviour, tested"): a replica
killed mid-stream, a rolling restart. Each test has a cluster of its own (Redis, three
``mcpkit demo`` replicas, HAProxy). What each case loses is in docs/deployment.md,
"What a failure loses". Redis failures: ``test_failures.py``."""

from __future__ import annotations

import httpx2
from cluster import Cluster
from test_failures import TIMEOUT, answered, echo
from wire import Event, Session, sse_events


def test_replica_killed_mid_stream_client_resumes_on_another(fresh_cluster: Cluster) -> None:
    """The replica streaming a tool call is killed (SIGKILL). The client resumes with
    ``Last-Event-ID`` through the balancer: another replica answers, replays nothing
    twice, and ends the stream or stays silent (the tool's work died with its replica,
    so its later progress and result are lost). The session itself survives: calls
    made afterwards are served by the remaining replicas."""
    with httpx2.Client(timeout=TIMEOUT) as http:
        session = Session(http, fresh_cluster.url)
        session.open()
        stream = session.call_stream("sleep", {"seconds": 30}, "kill-1")
        owner = fresh_cluster.replica(session.replicas[-1])
        got: list[Event] = []
        for event in sse_events(stream):
            got.append(event)
            if sum(e.message.get("method") == "notifications/progress" for e in got) == 2:
                break
        last_id = next(e.id for e in reversed(got) if e.id)
        owner.kill()
        stream.close()
        resumed = session.resume(last_id, read_timeout_s=5.0)
        assert resumed.status_code == 200, resumed.read()
        assert session.replicas[-1] != owner.name
        try:
            for event in sse_events(resumed):
                got.append(event)
        except httpx2.ReadTimeout:
            pass  # silent: nothing more will come from a dead replica's request
        finally:
            resumed.close()
        ids = [e.id for e in got if e.id]
        assert len(ids) == len(set(ids)), ids
        progress = [
            e.message["params"]["progress"]
            for e in got
            if e.message.get("method") == "notifications/progress"
        ]
        assert progress == sorted(set(progress)), progress
        for i in range(4):  # the session survives, on every replica still alive
            assert answered(echo(session, f"after {i}"), f"after {i}")
        assert owner.name not in session.replicas[-4:]
        owner.start()  # a restarted replica rejoins and serves the old session
        fresh_cluster.wait_healthy([owner.name])
        for i in range(3):
            assert answered(echo(session, f"rejoined {i}"), f"rejoined {i}")
        assert owner.name in session.replicas[-3:]  # round-robin over three again


def test_rolling_restart_loses_no_session(fresh_cluster: Cluster) -> None:
    """Each replica in turn is stopped (SIGTERM) and started again while one session
    keeps calling through the balancer: every call is answered (the balancer sends it
    to a live replica) and the session is never lost (no 404), before, during and
    after; the restarted replicas serve it again."""
    with httpx2.Client(timeout=TIMEOUT) as http:
        session = Session(http, fresh_cluster.url)
        session.open()
        n = 0
        for replica in fresh_cluster.replicas:
            replica.stop()
            for _ in range(3):
                n += 1
                reply = echo(session, f"call {n}")
                assert answered(reply, f"call {n}"), (replica.name, reply)
            replica.start()
            fresh_cluster.wait_healthy([replica.name])
        for _ in range(3):
            n += 1
            assert answered(echo(session, f"call {n}"), f"call {n}")
        assert set(session.replicas[-3:]) == {"r1", "r2", "r3"}
