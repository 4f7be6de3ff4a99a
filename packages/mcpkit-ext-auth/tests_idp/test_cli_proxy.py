"""``mcpkit run app.py --auth-provider oidc ...``: one command line stands up a server
behind the OAuth proxy in front of the real OpenID Provider (issue 30 section 4).

The real ``mcpkit`` process serves plain http on loopback (the proxy's ``__Host-``
cookies reach it as they reach a browser's loopback origin), discovers the OP over TLS at
start-up (trusting the test CA through ``SSL_CERT_FILE``), reads the client secret from
the environment only; the official Python SDK's client then signs in through the proxy's
consent and the OP's forms, calls a tool and refreshes."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from idp import HeadlessBrowser, OpenIdProvider, Tls, harness
from peers import run_peer

pytestmark = pytest.mark.anyio

APP = """
from mcpkit.ext.auth.server import principal
from mcpkit.server import Context, Server

server = Server("cli-app")


@server.tool()
def whoami(ctx: Context) -> str:
    caller = principal(ctx)
    assert caller is not None
    return f"{caller.subject} {caller.client_id}"
"""


async def test_mcpkit_run_with_an_oidc_provider_serves_behind_the_proxy(
    op: OpenIdProvider, tls: Tls, tmp_path: Path
) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    client_id, secret = f"cli-{secrets.token_hex(4)}", secrets.token_urlsafe(24)
    env = {**os.environ, **tls.env(), "IDP_SECRET": secret}
    log = tmp_path / "mcpkit-run.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "mcpkit.cli.main", "run", str(app)]
        argv += ["--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--auth-provider", "oidc", "--auth-issuer", op.issuer]
        argv += ["--auth-client-id", client_id, "--auth-client-secret-env", "IDP_SECRET"]
        with log.open("ab") as sink:
            return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)

    with harness.served_fresh(start, "mcpkit run", log, start_timeout_s=60) as port:
        base = f"http://127.0.0.1:{port}"
        await op.register_client([f"{base}/callback"], client_id=client_id, client_secret=secret)
        browser = HeadlessBrowser(tls, login=f"cli-{secrets.token_hex(4)}", press=("approve",))
        try:
            run = await run_peer("python-sdk", f"{base}/mcp", browser, "whoami", {}, tls)
        finally:
            await browser.aclose()
    assert run.error is None, run
    assert run.tools == ["whoami"]
    assert run.first == {"text": f"{browser.login} {run.client_id}"}
    assert run.refreshed, (run.tokens, run.authorization_urls)
    assert run.second == run.first
    assert len(browser.pages) == 3  # the proxy's consent, the OP's login and consent
    assert secret not in log.read_text(errors="replace")  # never logged
