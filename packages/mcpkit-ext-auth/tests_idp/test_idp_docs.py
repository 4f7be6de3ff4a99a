"""The docs' complete example of the generic OIDC provider (``docs/extensions/auth.md``,
block ``idp-oidc``, "Use your identity provider") runs against the real OpenID Provider.

The block is read from the page as written; only its two example addresses change: the
provider's issuer becomes the OP's, the proxy's public URL the loopback origin it is
served at (over TLS, trusted through the session's CA). Its client secret comes from the
environment variable the block names, as a deployment's would. Then a client nobody here
wrote (the official Python SDK's) signs in through the proxy's consent and the OP's
forms and calls the block's ``my_email`` tool, which reaches the OP's userinfo with the
caller's upstream token, server-side; after a refresh through the proxy it calls again.
The block's ``whoami`` answers the OP's subject.

Rules: the page is read line by line (a fence is a line starting with three backticks);
the block must exist exactly once.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import jwt
import pytest
from idp import ROOT, HeadlessBrowser, OpenIdProvider, Tls, serve_tls
from peers import run_peer

pytestmark = pytest.mark.anyio

DOC = ROOT / "docs" / "extensions" / "auth.md"
BLOCK = "idp-oidc"
IDP_ADDR, PROXY_ADDR = "https://login.example.com", "https://mcp.example.com"


def docs_block(name: str, page: Path = DOC) -> str:
    """The python block of ``page`` whose first line is ``# docs-example: NAME``."""
    found: list[str] = []
    lines = page.read_text("utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "```python" and lines[i + 1 : i + 2] == [f"# docs-example: {name}"]:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            found.append("\n".join(lines[i + 1 : end]) + "\n")
    assert len(found) == 1, f"{page}: {len(found)} blocks named {name}"
    return found[0]


async def test_the_docs_oidc_example_serves_behind_the_real_op(
    op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = docs_block(BLOCK)
    assert IDP_ADDR in code
    assert PROXY_ADDR in code
    secret = secrets.token_urlsafe(24)
    monkeypatch.setenv("MCP_PROXY_CLIENT_SECRET", secret)
    defined: dict[str, Any] = {}

    def app(base: str) -> object:
        source = code.replace(IDP_ADDR, op.issuer).replace(PROXY_ADDR, base)
        exec(compile(source, f"{DOC}:{BLOCK}", "exec"), defined)
        return defined["server"].http_app()

    async with serve_tls(app, tls) as base:
        proxy = defined["proxy"]
        assert proxy.callback_url == f"{base}/callback"
        client_id = proxy.upstream.client_id  # as the block names it
        await op.register_client([proxy.callback_url], client_id=client_id, client_secret=secret)
        browser.press = ("approve",)
        run = await run_peer("python-sdk", f"{base}/mcp", browser, "my_email", {}, tls)
        assert run.error is None, run
        assert run.tools == ["my_email", "whoami"]
        assert run.first == {"text": f"{browser.login}@example.test"}  # the OP's userinfo
        assert run.refreshed, (run.tokens, run.authorization_urls)
        assert run.second == run.first
        # Every token the client saw is the proxy's own, for this server (the OP's stayed
        # in the proxy, used server-side by my_email).
        keys = jwt.PyJWKSet.from_dict(proxy.jwks()).keys[0]
        for token in run.tokens:
            claims = jwt.decode(
                token["access_token"],
                keys,
                algorithms=["ES256"],
                audience=f"{base}/mcp",
                issuer=proxy.issuer,
            )
            assert claims["sub"] == browser.login
        who = await run_peer("mcpkit", f"{base}/mcp", browser, "whoami", {}, tls)
        assert who.first == {"text": browser.login}
