"""Server CPU per ``tools/call`` with and without authorization, in one process, without
the HTTP stack: the cost the auth layer adds, measured where the machine's noise cannot
hide it (the ``auth`` suite of ``run.py`` measures the same over real HTTP).

    uv run --group bench python bench/auth_cpu.py [--calls 400] [--reps 7]

Rules:
1. Five ASGI apps of the same echo server (``servers/mcpkit_echo.py``): unprotected, and
   protected with RS256 and ES256 tokens from the development authorization server's
   signer, each with the validated-token cache (default) and without it
   (``max_cached_tokens=0``). Each app runs its lifespan; its key set is fetched once from
   a loopback JWKS endpoint (``auth_tokens.py``).
2. Every call is a complete 2026-07-28 ``tools/call`` POST (headers, body, JSON-RPC
   answer) handed to the app as ASGI messages; a non-200 answer stops the run.
3. Each repetition runs ``--calls`` calls per app, apps interleaved; the figure is
   ``time.process_time`` per call, and the ratio is the median of per-repetition ratios to
   the unprotected app, so a busy host slows both sides of each ratio alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "servers"))

from asgi_post import post  # noqa: E402
from auth_tokens import ISSUER, jwks_server, signers, token  # noqa: E402
from mcpkit_echo import build  # noqa: E402

# kind-ok: fixed-port a resource (audience); the app runs in process
URL = "http://127.0.0.1:8000/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "auth-cpu", "version": "1"},
}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x" * 100}, "_meta": META},
    }
).encode()
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
    (b"content-length", str(len(BODY)).encode()),
]
VARIANTS = (
    ("none", None),
    ("rs256", "RS256"),
    ("rs256_nocache", "RS256"),
    ("es256", "ES256"),
    ("es256_nocache", "ES256"),
)


def app_for(label: str, alg: str | None, jwks_base: str) -> Any:
    """Rule 1."""
    server = build()
    if alg is not None:
        from mcpkit.ext.auth.server import AuthSettings, ResourceServerLimits, protect

        cached = 0 if label.endswith("_nocache") else 10_000
        protect(
            server,
            AuthSettings(
                server_url=URL,
                authorization_servers=[ISSUER],
                jwks_url=f"{jwks_base}/{alg}.json",
                limits=ResourceServerLimits(max_cached_tokens=cached),
            ),
        )
    return server.http_app()


async def call(app: Any, headers: list[tuple[bytes, bytes]]) -> None:
    """Rule 2."""
    sent = await post(app, BODY, headers)
    if sent[0].get("status") != 200:
        raise SystemExit(f"the app answered {sent[0]}")


async def measure(calls: int, reps: int) -> dict[str, list[float]]:
    """Rule 3: µs of process CPU per call, per variant and repetition."""
    by_alg = signers()
    results: dict[str, list[float]] = {label: [] for label, _ in VARIANTS}
    with jwks_server(by_alg) as jwks_base:
        async with contextlib.AsyncExitStack() as stack:
            apps: dict[str, tuple[Any, list[tuple[bytes, bytes]]]] = {}
            for label, alg in VARIANTS:
                app = app_for(label, alg, jwks_base)
                await stack.enter_async_context(app.router.lifespan_context(app))
                headers = list(HEADERS)
                if alg is not None:
                    bearer = "Bearer " + token(by_alg[alg], URL)
                    headers.append((b"authorization", bearer.encode()))
                for _ in range(50):  # warm up: key set fetched, caches filled
                    await call(app, headers)
                apps[label] = (app, headers)
            for _ in range(reps):
                for label, _alg in VARIANTS:
                    app, headers = apps[label]
                    t0 = time.process_time()
                    for _ in range(calls):
                        await call(app, headers)
                    results[label].append(1e6 * (time.process_time() - t0) / calls)
    return results


def print_table(results: dict[str, list[float]], labels: list[str], what: str) -> None:
    """Rule 3's figures as a Markdown table, ratios against ``results["none"]``."""
    base = results["none"]
    print(f"| {what} | µs/call (median) | × none | µs added |")
    print("|---|---|---|---|")
    for label in labels:
        mine = results[label]
        ratio = statistics.median(a / b for a, b in zip(mine, base, strict=True))
        added = statistics.median(a - b for a, b in zip(mine, base, strict=True))
        print(f"| {label} | {statistics.median(mine):.0f} | {ratio:.2f} | {added:.0f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--calls", type=int, default=400, help="calls per app and repetition")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    results = asyncio.run(measure(args.calls, args.reps))
    print_table(results, [label for label, _ in VARIANTS], "app")
    return 0


if __name__ == "__main__":
    sys.exit(main())
