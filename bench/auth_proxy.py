"""The OAuth proxy's cost: a login round trip through it, and the server CPU of a
``tools/call`` with a proxy-issued token against one with a development-server token.

    uv run --group bench python bench/auth_proxy.py [--logins 20] [--calls 400] [--reps 7]

Rules:
1. A login round trip is what an MCP client and its user's browser do, over real HTTP
   on loopback: dynamic registration, the authorization request, the consent page and
   its approval, the upstream IdP's authorization endpoint (a local provider signing a
   real ES256 ``id_token``, ``packages/mcpkit-ext-auth/tests/oauthproxy/fake_idp.py``),
   the proxy's callback (code exchange upstream, ``id_token`` validation, userinfo) and
   the token request. The figure is the median wall time of ``--logins`` round trips.
2. Per call: two ASGI apps of the same echo server (``servers/mcpkit_echo.py``), one
   protected with ``protect()`` for the development server's ES256 tokens (as
   ``auth_cpu.py``), one behind the proxy (``OAuthProxy.install``) called with the
   access token of a real login through it. Calls are ``auth_cpu.py``'s (complete
   ``tools/call`` POSTs as ASGI messages); each app is warmed up first, so its key set is
   fetched and the token cached. Repetitions interleave the two apps; the ratio is the
   median of per-repetition ratios of ``time.process_time`` per call (a busy host slows
   both sides of each ratio alike). The target is at most 1.05.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "packages" / "mcpkit-ext-auth" / "tests"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "servers"))
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "oauthproxy"))

import httpx2  # noqa: E402
from auth_cpu import HEADERS, URL, app_for, call  # noqa: E402
from auth_tokens import jwks_server, signers, token  # noqa: E402
from fake_idp import FakeIdP  # noqa: E402
from loopback import serve_at  # noqa: E402
from mcpkit_echo import build  # noqa: E402
from proxy_helpers import Stack, upstream_for  # noqa: E402

from mcpkit.ext.auth.oauthproxy import OAuthProxy  # noqa: E402


async def measure(logins: int, calls: int, reps: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"login_ms": [], "dev": [], "proxy": []}
    idp = FakeIdP()
    by_alg = signers()
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(serve_at(idp.app))
        jwks_base = stack.enter_context(jwks_server(by_alg))
        built: dict[str, OAuthProxy] = {}

        def proxy_app(base: str) -> Any:
            proxy = OAuthProxy(upstream_for(idp), base_url=base, resource=URL)
            built["proxy"] = proxy
            return proxy.app

        base = await stack.enter_async_context(serve_at(proxy_app, lifespan="off"))
        proxy = built["proxy"]
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
        site = Stack(proxy, idp, base, URL, http, [])
        proxied = build()
        proxy.install(proxied)  # the same proxy object: its keys, its issuer
        apps: dict[str, tuple[Any, list[tuple[bytes, bytes]]]] = {}
        for _ in range(logins):  # rule 1
            t0 = time.perf_counter()
            _, tokens = await site.login()
            results["login_ms"].append(1e3 * (time.perf_counter() - t0))
        proxy_headers = [*HEADERS, (b"authorization", f"Bearer {tokens['access_token']}".encode())]
        dev = app_for("es256", "ES256", jwks_base)
        dev_headers = [
            *HEADERS,
            (b"authorization", f"Bearer {token(by_alg['ES256'], URL)}".encode()),
        ]
        behind = proxied.http_app()
        for label, app, headers in (("dev", dev, dev_headers), ("proxy", behind, proxy_headers)):
            await stack.enter_async_context(app.router.lifespan_context(app))
            for _ in range(50):  # warm-up: key set fetched, token cached
                await call(app, headers)
            apps[label] = (app, headers)
        for _ in range(reps):  # rule 2
            for label in ("dev", "proxy"):
                app, headers = apps[label]
                t0 = time.process_time()
                for _ in range(calls):
                    await call(app, headers)
                results[label].append(1e6 * (time.process_time() - t0) / calls)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--logins", type=int, default=20, help="login round trips")
    ap.add_argument("--calls", type=int, default=400, help="calls per app and repetition")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    r = asyncio.run(measure(args.logins, args.calls, args.reps))
    ratio = statistics.median(p / d for p, d in zip(r["proxy"], r["dev"], strict=True))
    print(
        f"| login round trip through the proxy | {statistics.median(r['login_ms']):.1f} ms "
        f"(median of {args.logins}) |"
    )
    print(f"| tools/call, development-server token | {statistics.median(r['dev']):.0f} µs CPU |")
    print(f"| tools/call, proxy-issued token | {statistics.median(r['proxy']):.0f} µs CPU |")
    print(f"| proxy / development server (median of per-repetition ratios) | {ratio:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
