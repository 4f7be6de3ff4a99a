"""Fuzz suite settings and shared servers.

Hypothesis profiles, chosen with ``MCPKIT_FUZZ_PROFILE``:

- ``default`` (CI and ``uv run nox``): derandomized (the same examples every run, so a
  failure reproduces), bounded example counts (``FUZZ_EXAMPLES`` per test, scaled per
  test by its cost), no example database written into the tree.
- ``long``: random examples, 20 times as many, the example database on (failures are
  replayed first next time): ``MCPKIT_FUZZ_PROFILE=long uv run pytest
  packages/mcpkit-core/tests/fuzz``.

No deadline in either: two noisy cores make per-example timing meaningless; hangs are
caught by the drivers' liveness bounds instead.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from hypothesis import HealthCheck, settings

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

PROFILE = os.environ.get("MCPKIT_FUZZ_PROFILE", "default")
SCALE = 20 if PROFILE == "long" else 1
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]

settings.register_profile(
    "default",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_SLOW,
    print_blob=True,
)
settings.register_profile("long", deadline=None, suppress_health_check=_SLOW, print_blob=True)
if PROFILE not in ("default", "long"):
    raise pytest.UsageError(f"MCPKIT_FUZZ_PROFILE must be 'default' or 'long', not {PROFILE!r}")
settings.load_profile(PROFILE)


def examples(n: int) -> Any:
    """``@settings`` for a test that runs ``n`` examples in the default profile."""
    return settings(max_examples=n * SCALE)


class ThreadedHTTP:
    """uvicorn serving an ASGI app on 127.0.0.1 in a thread with its own event loop,
    so synchronous hypothesis tests can talk to it with a blocking client."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.server.run(sockets=[self.sock])

    def __enter__(self) -> ThreadedHTTP:
        self.thread.start()
        for _ in range(1000):
            if self.server.started:
                return self
            self.thread.join(0.01)
        raise RuntimeError("uvicorn did not start within 10 s")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        assert not self.thread.is_alive(), "uvicorn did not stop"


@pytest.fixture(scope="module")
def http_target() -> Iterator[tuple[str, Any]]:
    """The fuzz server over streamable HTTP: ``(url, endpoint)``."""
    from fuzz_server import build

    from mcpkit.server.http import http_app

    app = http_app(build())
    with ThreadedHTTP(app) as served:
        yield f"http://127.0.0.1:{served.port}/mcp", app.state.mcp
