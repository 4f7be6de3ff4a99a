"""Fixtures of the multi-replica tests: a fresh ``redis-server`` (``redis_url``) and the
whole cluster (``demo_cluster``: Redis, three ``mcpkit demo`` replicas, HAProxy), from
:mod:`cluster`. The programs come from ``MCPKIT_REDIS_SERVER`` / ``MCPKIT_HAPROXY``, set
by the nox session ``scale``; a missing program is an error, never a skip."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster, program, running, start_redis

__all__ = ["program"]


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A fresh redis-server on loopback, without persistence; its URL."""
    proc = start_redis(tmp_path)
    try:
        yield proc.url
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Redis, three ``mcpkit demo`` replicas sharing it and one secret, HAProxy in front;
    shared by the tests of a module that leave it as they found it."""
    with running(tmp_path_factory.mktemp("cluster")) as made:
        yield made


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of its own (Redis, three ``mcpkit demo`` replicas, HAProxy), for a test
    that breaks it."""
    with running(tmp_path / "cluster") as made:
        yield made
