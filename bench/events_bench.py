"""The ``events`` suite: events per second through one push stream and through webhook
delivery, and server CPU per delivered event (mcpkit-exp-events, SEP-3415).

    python bench/events_bench.py --mode push -n 5000 --json out.json

Rules:
1. A fresh server (``servers/mcpkit_events.py``) runs per measurement, pinned to
   ``--server-cpu`` with ``taskset``; this process (the client, and for ``webhook`` the
   TLS receiver, certificate from a ``trustme`` CA) runs on ``--client-cpu``.
2. ``push``: one ``events/stream`` is open (its ``active`` received) before the tool
   ``emit(n)`` appends ``n`` occurrences; ``webhook``: one verified subscription to a
   receiver on loopback (``https://hooks.bench:<port>/hooks/``, signatures checked);
   ``append``: no subscriber at all (the producer's own cost, to subtract).
3. The clock and the server's CPU (``/proc``: utime + stime) run from just before ``emit``
   until the last of the ``n`` events arrived (``append``: until ``emit`` returned), never
   past it: the receiver's graceful shutdown (which waits for the server's idle
   keep-alive connections) is outside the measurement.
   ``events_per_s`` = n / elapsed; ``server_cpu_us_per_event`` = server CPU / n.
4. Every wait is bounded (``--timeout-s``); a run that does not finish records ``fatal``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
from fresh_port import start_fresh
from procstat import cpu_seconds

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "mcpkit_events.py"
JSON = dict[str, Any]


class Bearer(httpx2.Auth):
    def auth_flow(self, request: httpx2.Request):  # type: ignore[no-untyped-def]
        request.headers["Authorization"] = "Bearer bench"
        yield request


@contextlib.contextmanager
def server(cpu: int, ca: str, log: Path, max_in_flight: int = 8) -> Iterator[tuple[int, int]]:
    """The events server on a fresh port (retried when it was taken: ``fresh_port``);
    yields ``(pid, port)``."""

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = ["taskset", "-c", str(cpu), sys.executable, str(SERVER), "--transport", "http"]
        argv += ["--port", str(port), "--ca", ca, "--max-in-flight", str(max_in_flight)]
        with open(log, "ab") as out:
            return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    proc, port = start_fresh(start, "events server", log, start_timeout_s=60)
    try:
        yield proc.pid, port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.asynccontextmanager
async def receiver(cert: str, key: str, on_message: Any, http: str = "h11") -> AsyncIterator[int]:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from mcpkit.experimental.events.webhooks import WebhookReceiver

    recv = WebhookReceiver(on_message)
    app = Starlette(routes=[Mount("/hooks", app=recv)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, ssl_certfile=cert, ssl_keyfile=key, http=http
    )
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve, [sock])
        with anyio.fail_after(20):
            while not web.started:  # noqa: ASYNC110 - uvicorn offers no event
                await anyio.sleep(0.01)
        try:
            yield sock.getsockname()[1], recv  # type: ignore[misc]
        finally:
            web.should_exit = True


async def measure(
    mode: str, n: int, pid: int, port: int, tls: JSON, timeout_s: float, receiver_http: str = "h11"
) -> JSON:
    from mcpkit.client import Client
    from mcpkit.experimental.events import EventsClient
    from mcpkit.experimental.events.webhooks import subscribe_webhook

    url = f"http://127.0.0.1:{port}/mcp"
    got = 0
    done = anyio.Event()
    elapsed, cpu1 = 0.0, None

    def count() -> None:
        nonlocal got
        got += 1
        if got >= n:
            done.set()

    async def on_message(message: Any) -> None:
        if message.kind == "event":
            count()

    async with Client(url, mode="modern", auth=Bearer(), timeout_s=timeout_s) as client:
        with anyio.fail_after(timeout_s):
            if mode == "append":
                cpu0, t0 = cpu_seconds(pid), time.perf_counter()
                await client.call_tool("emit", {"count": n})
            elif mode == "push":
                events = EventsClient(client, heartbeat_timeout_s=timeout_s)
                async with events.stream("bench") as stream:
                    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(client.call_tool, "emit", {"count": n})
                        async for _ in stream:
                            count()
                            if got >= n:
                                break
            else:
                async with receiver(tls["cert"], tls["key"], on_message, receiver_http) as (
                    hp,
                    recv,
                ):
                    await subscribe_webhook(
                        client, recv, name="bench", url=f"https://hooks.bench:{hp}/hooks/"
                    )
                    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
                    await client.call_tool("emit", {"count": n})
                    await done.wait()
                    # rule 3: stopped here, before the receiver's graceful shutdown
                    elapsed, cpu1 = time.perf_counter() - t0, cpu_seconds(pid)
            if mode != "webhook":
                elapsed, cpu1 = time.perf_counter() - t0, cpu_seconds(pid)
    assert cpu0 is not None
    assert cpu1 is not None
    return {
        "mode": mode,
        "events": n,
        "elapsed_s": round(elapsed, 4),
        "events_per_s": round(n / elapsed, 1),
        "server_cpu_s": round(cpu1 - cpu0, 4),
        "server_cpu_us_per_event": round(1e6 * (cpu1 - cpu0) / n, 1),
        **({"receiver_http": receiver_http} if mode == "webhook" else {}),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mode", choices=["push", "webhook", "append"], required=True)
    ap.add_argument("-n", type=int, default=5000)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=300.0)
    ap.add_argument("--max-in-flight", type=int, default=8, help="webhook deliveries in flight")
    ap.add_argument(
        "--receiver-http",
        choices=["h11", "httptools"],
        default="h11",
        help="the webhook receiver's HTTP parser (uvicorn's; httptools: --group bench-fast)",
    )
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args(argv)
    import trustme

    with tempfile.TemporaryDirectory() as tmp:
        ca = trustme.CA()
        cert = ca.issue_cert("hooks.bench")
        paths = {k: os.path.join(tmp, f"{k}.pem") for k in ("ca", "cert", "key")}
        ca.cert_pem.write_to_path(paths["ca"])
        cert.private_key_and_cert_chain_pem.write_to_path(paths["cert"])
        cert.private_key_pem.write_to_path(paths["key"])
        try:
            log = Path(tmp) / "server.log"
            with server(args.server_cpu, paths["ca"], log, args.max_in_flight) as (pid, port):
                result = anyio.run(
                    measure,
                    args.mode,
                    args.n,
                    pid,
                    port,
                    paths,
                    args.timeout_s,
                    args.receiver_http,
                )
        except Exception as exc:  # rule 4: recorded, not raised
            log = Path(tmp) / "server.log"
            tail = log.read_text()[-400:] if log.exists() else ""
            result = {"mode": args.mode, "fatal": f"{type(exc).__name__}: {exc} {tail}"}
    args.json.write_text(json.dumps(result))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
