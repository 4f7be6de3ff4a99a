"""One worker process of ``run_http(server, workers=N)`` (``python -m
mcpkit.server.http.worker``, started by :func:`mcpkit.server.http.workers.serve_workers`).

Rules (:mod:`.workers` rules 1, 2 and 5):
1. The server is loaded afresh from the ``target`` the parent passed
   (:func:`mcpkit.server.loading.load_server`); the endpoint options, Redis settings and
   HTTP stack come from ``MCPKIT_WORKER_SPEC`` (JSON), the inherited socket from its
   ``fd``.
2. The shared secret is loaded, then ``MCPKIT_SECRET``, ``MCPKIT_SECRET_FILE`` and
   ``MCPKIT_STATE_SECRET`` are deleted from ``os.environ`` before serving.
3. A worker prints no serving line (the parent does).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcpkit.server.http.run import run_http
from mcpkit.server.http.workers import SECRET_ENVS, SPEC_ENV
from mcpkit.server.loading import load_server
from mcpkit.server.logs import configure_logging
from mcpkit.server.redis.settings import RedisSettings
from mcpkit.server.replicas import apply_shared_secret
from mcpkit.server.replication import load_secret

__all__ = ["main"]


def main() -> None:
    """Serve the inherited socket (rules 1-3)."""
    spec: dict[str, Any] = json.loads(os.environ.pop(SPEC_ENV))
    configure_logging(spec.pop("server_log_level", "INFO"))
    server = load_server(spec.pop("target"))
    secret = load_secret()
    for name in SECRET_ENVS:  # rule 2
        os.environ.pop(name, None)
    apply_shared_secret(server, secret, why="a worker process")
    redis = spec.pop("redis")
    uvicorn_options = {**spec.pop("uvicorn_options"), "fd": spec.pop("fd")}
    run_http(
        server,
        redis=RedisSettings(**redis) if redis else None,
        uvicorn_options=uvicorn_options,
        announce=False,
        secret=secret,
        **spec,
    )


if __name__ == "__main__":
    main()
