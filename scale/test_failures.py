"""Redis failures behind the balancer (issue 17 "Failure behaviour, tested"): a restart,
a pause (SIGSTOP). Each test has a cluster of its own (Redis, three ``mcpkit demo``
replicas, HAProxy) and breaks it; replica failures: ``test_failures_replicas.py``.
What each case loses is in docs/deployment.md, "What a failure loses".

Every wait is bounded: each HTTP read by ``TIMEOUT`` (a hang fails the test), each
recovery by ``RECOVERY_S``."""

from __future__ import annotations

import time
from typing import Any

import httpx2
from cluster import Cluster
from wire import Session

TIMEOUT = httpx2.Timeout(20.0)
RECOVERY_S = 60.0
"""A recovery must happen within this (Redis's own bounds are 2 s per operation)."""
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "scale-tests", "version": "0"},
}
RETRYABLE = {503}
"""HTTP statuses a client may retry."""


def echo(session: Session, text: str) -> dict[str, Any]:
    return session.post("tools/call", {"name": "echo", "arguments": {"text": text}})


def answered(reply: dict[str, Any], text: str) -> bool:
    result = reply.get("result")
    return isinstance(result, dict) and result["content"][0]["text"] == text  # type: ignore[index]


def retryable(reply: dict[str, Any]) -> bool:
    """An error the client can retry: HTTP 503, or a JSON-RPC error response."""
    return reply.get("status") in RETRYABLE or "error" in reply


def until_recovered(http: httpx2.Client, url: str) -> tuple[Session, float]:
    """Open a session and call echo until it works; returns it and the time it took."""
    started = time.monotonic()
    while True:
        try:
            session = Session(http, url)
            session.open()
            if answered(echo(session, "back"), "back"):
                return session, time.monotonic() - started
        except (AssertionError, httpx2.HTTPError):
            pass
        if time.monotonic() - started > RECOVERY_S:
            raise AssertionError(f"no recovery within {RECOVERY_S} s")
        time.sleep(0.5)


def test_redis_restart_gives_retryable_errors_then_recovers(fresh_cluster: Cluster) -> None:
    """While Redis is down a request that needs it (``initialize``) is answered at once
    (no hang) with 503 or a JSON-RPC error, on every replica; once it is back, sessions
    open and calls work again on their own (no replica restarted). Redis here keeps
    nothing on disk, yet the session of before works again: the replicas holding it
    write it back."""
    assert fresh_cluster.redis is not None
    with httpx2.Client(timeout=TIMEOUT) as http:
        session = Session(http, fresh_cluster.url)
        session.open()
        assert answered(echo(session, "before"), "before")
        fresh_cluster.redis.stop()
        for i in range(3):  # each replica in turn
            started = time.monotonic()
            reply = Session(http, fresh_cluster.url).post("initialize", INITIALIZE)
            assert retryable(reply), (i, reply)
            assert time.monotonic() - started < TIMEOUT.read, "a request hung while Redis was down"
        fresh_cluster.redis.start()
        _, took_s = until_recovered(http, fresh_cluster.url)
        # the replicas write back the sessions they hold: the old session lives on
        deadline = time.monotonic() + RECOVERY_S
        while not answered(echo(session, "old"), "old"):
            assert time.monotonic() < deadline, "the session of before did not come back"
            time.sleep(0.5)
    assert took_s < RECOVERY_S


def test_redis_paused_bounded_waits_and_recovery(fresh_cluster: Cluster) -> None:
    """SIGSTOP on redis-server (a partition: connections stay open, nothing answers):
    a request that needs Redis (``initialize`` writes the session) gets a retryable
    error within the Redis operation bound, on every replica; requests of a session a
    replica holds are answered, or refused the same way, never left hanging. After
    SIGCONT the session works again and new sessions open."""
    assert fresh_cluster.redis is not None
    with httpx2.Client(timeout=TIMEOUT) as http:
        session = Session(http, fresh_cluster.url)
        session.open()
        assert answered(echo(session, "before"), "before")
        fresh_cluster.redis.pause()
        try:
            for i in range(3):  # each replica in turn
                started = time.monotonic()
                reply = Session(http, fresh_cluster.url).post("initialize", INITIALIZE)
                assert retryable(reply), (i, reply)
                assert time.monotonic() - started < TIMEOUT.read, "initialize hung"
                started = time.monotonic()
                reply = echo(session, f"paused {i}")
                assert answered(reply, f"paused {i}") or retryable(reply), (i, reply)
                assert time.monotonic() - started < TIMEOUT.read, "a request hung"
        finally:
            fresh_cluster.redis.resume()
        deadline = time.monotonic() + RECOVERY_S
        while not answered(echo(session, "after"), "after"):
            assert time.monotonic() < deadline, "the session did not recover after SIGCONT"
            time.sleep(0.5)
        until_recovered(http, fresh_cluster.url)
