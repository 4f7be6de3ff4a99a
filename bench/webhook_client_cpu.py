"""In-process CPU per HTTPS POST of the webhook sender and of the HTTP clients it could
use (issue 31, target 3): which client can carry 1 000 signed events/s to one receiver.

    uv run --group bench python bench/webhook_client_cpu.py --reps 3 -n 2000 -c 8

Rules:
1. One receiver (uvicorn over TLS, a ``trustme`` certificate for ``hooks.bench``, an ASGI
   app answering 204) runs in a subprocess pinned to CPU 1; this process pins itself to
   CPU 0.
2. Every variant POSTs the same signed body (:func:`signed_headers`, signing included in
   the cost) to the checked address ``127.0.0.1`` with ``Host`` and SNI ``hooks.bench``,
   over keep-alive connections (at most 16), ``-c`` POSTs in flight: ``sender`` (the
   product's :class:`Sender`: address check, bounds), ``httpx2`` (a bare
   ``AsyncClient.post``), ``httpx2_tuned`` (``send(build_request(...))`` with the host
   header and extensions built once, the timeout set once on the client, HTTP/1.1),
   ``httpcore2`` (its connection pool directly, pre-encoded
   headers), ``aiohttp`` (a bare ``ClientSession.post``).
3. ``cpu_us_per_post`` is ``time.process_time`` over ``n`` POSTs after ``c`` warm-up
   POSTs; variants are interleaved per repetition and the median is printed.
4. Every wait is bounded: the receiver must listen within 20 s and each POST ends
   within the clients' 5 s timeouts.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

VARIANTS = ("sender", "httpx2", "httpx2_tuned", "httpcore2", "aiohttp")
Post = Callable[[int], Awaitable[None]]


def sink(cert: str, key: str, port_file: str) -> None:
    """The receiver (rule 1): 204 to every request."""
    import socket

    import uvicorn

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    with open(port_file, "w") as out:
        out.write(str(sock.getsockname()[1]))
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        access_log=False,
        ssl_certfile=cert,
        ssl_keyfile=key,
    )
    uvicorn.Server(config).run(sockets=[sock])


def signed(i: int) -> tuple[bytes, dict[str, str]]:
    from mcpkit.experimental.events.webhooks.signing import signed_headers

    body = json.dumps({"type": "event", "eventId": f"b{i}", "data": {"i": i}}).encode()
    headers = signed_headers(f"b{i}", body, ["whsec_" + "A" * 44], subscription_id="s1")
    return body, headers


async def client(name: str, port: int, ctx: ssl.SSLContext) -> tuple[Post, Any]:
    """``(post(i), aclose)`` of one variant (rule 2)."""
    host = {"host": f"hooks.bench:{port}"}
    target = f"https://127.0.0.1:{port}/hooks/"
    if name == "sender":
        from mcpkit.experimental.events.webhooks import AddressPolicy
        from mcpkit.experimental.events.webhooks.sender import Sender

        async def resolve(host: str, port: int) -> list[str]:
            return ["127.0.0.1"]

        sender = Sender(AddressPolicy(allow=["127.0.0.0/8"], resolver=resolve), verify=ctx)

        async def post_sender(i: int) -> None:
            body, headers = signed(i)
            got = await sender.post(f"https://hooks.bench:{port}/hooks/", body, headers)
            assert got.status == 204, got

        return post_sender, sender.aclose
    if name in ("httpx2", "httpx2_tuned"):
        import httpx2

        limits = httpx2.Limits(max_connections=16, max_keepalive_connections=16)
        http = httpx2.AsyncClient(verify=ctx, trust_env=False, limits=limits, timeout=5.0)
        ext = {"sni_hostname": "hooks.bench"}

        async def post_httpx2(i: int) -> None:
            body, headers = signed(i)
            r = await http.post(target, content=body, headers={**headers, **host}, extensions=ext)
            assert r.status_code == 204

        if name == "httpx2_tuned":

            async def post_tuned(i: int) -> None:
                body, headers = signed(i)
                headers.update(host)
                request = http.build_request(
                    "POST", target, content=body, headers=headers, extensions=ext
                )
                r = await http.send(request)
                assert r.status_code == 204

            return post_tuned, http.aclose
        return post_httpx2, http.aclose
    if name == "httpcore2":
        import httpcore2

        pool = httpcore2.AsyncConnectionPool(
            ssl_context=ctx, max_connections=16, max_keepalive_connections=16
        )
        timeouts = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}
        extensions = {"sni_hostname": "hooks.bench", "timeout": timeouts}
        fixed = [(b"host", host["host"].encode())]

        async def post_httpcore2(i: int) -> None:
            body, headers = signed(i)
            raw = [(k.encode(), v.encode()) for k, v in headers.items()]
            raw += [*fixed, (b"content-length", str(len(body)).encode())]
            r = await pool.request(
                "POST", target.encode(), headers=raw, content=body, extensions=extensions
            )
            assert r.status == 204

        return post_httpcore2, pool.aclose
    import aiohttp

    connector = aiohttp.TCPConnector(limit=16, ssl=ctx)
    session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=5.0))

    async def post_aiohttp(i: int) -> None:
        body, headers = signed(i)
        async with session.post(
            target,
            data=body,
            headers={**headers, **host},
            server_hostname="hooks.bench",
            allow_redirects=False,
        ) as r:
            await r.read()
            assert r.status == 204

    return post_aiohttp, session.close


async def measure(name: str, port: int, ctx: ssl.SSLContext, n: int, c: int) -> float:
    """CPU µs per POST of ``name`` (rule 3)."""
    post, aclose = await client(name, port, ctx)

    async def worker(first: int, step: int, last: int) -> None:
        for i in range(first, last, step):
            await post(i)

    try:
        async with anyio.create_task_group() as tg:  # warm-up: c connections
            for k in range(c):
                tg.start_soon(worker, k, c, c)
        cpu0 = time.process_time()
        async with anyio.create_task_group() as tg:
            for k in range(c):
                tg.start_soon(worker, k, c, n)
        return 1e6 * (time.process_time() - cpu0) / n
    finally:
        await aclose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sink", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-c", type=int, default=8, help="POSTs in flight")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default=",".join(VARIANTS))
    args = ap.parse_args(argv)
    if args.sink:
        sink(*args.sink)
        return 0
    import trustme

    os.sched_setaffinity(0, {0})
    names = args.only.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        ca = trustme.CA()
        cert, key, port_file = (os.path.join(tmp, f) for f in ("cert.pem", "key.pem", "port"))
        issued = ca.issue_cert("hooks.bench")
        issued.private_key_and_cert_chain_pem.write_to_path(cert)
        issued.private_key_pem.write_to_path(key)
        argv_sink = [sys.executable, __file__, "--sink", cert, key, port_file]
        proc = subprocess.Popen(["taskset", "-c", "1", *argv_sink])
        try:
            deadline = time.monotonic() + 20
            while not (os.path.exists(port_file) and Path(port_file).read_text()):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the receiver did not start")
                time.sleep(0.05)
            time.sleep(0.5)  # uvicorn listens just after binding
            port = int(Path(port_file).read_text())
            ctx = ssl.create_default_context()
            ca.configure_trust(ctx)
            got: dict[str, list[float]] = {name: [] for name in names}
            for _ in range(args.reps):
                for name in names:
                    got[name].append(anyio.run(measure, name, port, ctx, args.n, args.c))
        finally:
            proc.terminate()
            proc.wait(10)
    rows = {
        name: {"cpu_us_per_post": round(statistics.median(v), 1), "reps": [round(x) for x in v]}
        for name, v in got.items()
    }
    print(json.dumps({"n": args.n, "c": args.c, "variants": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
