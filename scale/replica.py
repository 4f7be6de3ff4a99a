"""One replica of the multi-replica tests and benchmarks, until ``mcpkit run --redis``
does the same from the command line::

    python scale/replica.py TARGET --port PORT

``TARGET`` is ``demo`` (``mcpkit demo``'s server) or a ``module:factory`` as for
``mcpkit run``. With ``MCPKIT_REDIS_URL`` set, the server is wired to that Redis with
:func:`mcpkit.server.redis.replicate` (hub, event store; the shared secret from
``MCPKIT_SECRET`` / ``MCPKIT_STATE_SECRET``), else it keeps everything in memory. Serves
streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    from mcpkit.cli.run import load_server
    from mcpkit.server.http import run_http

    if args.target == "demo":
        from mcpkit.server.demo import build_demo_server

        server = build_demo_server()
    else:
        server = load_server(args.target)
    options: dict[str, Any] = {}
    if os.environ.get("MCPKIT_REDIS_URL"):
        from mcpkit.server.redis import RedisSettings, replicate

        options = replicate(server, RedisSettings.from_env())
    run_http(server, host="127.0.0.1", port=args.port, log_level="warning", **options)


if __name__ == "__main__":
    main()
