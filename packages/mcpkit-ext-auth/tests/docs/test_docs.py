"""Every code block in ``docs/extensions/auth.md`` runs and does what the text says.

Each ```python block starts with ``# docs-example: NAME`` and each ```bash block with
``# docs-cli: NAME``; ``CHECKS[NAME]`` runs it and checks the behaviour the page
describes. A block without a marker or without a check fails, so an example cannot be
added without being run. The page's fixed addresses (the MCP server on 127.0.0.1:8000,
the development authorization server on 127.0.0.1:9000) are replaced by free loopback
ports before a block runs; nothing else is changed. Everything is real: the development
authorization server and the protected server are served by uvicorn on loopback, the
shell blocks run the installed ``mcpkit`` command through ``bash``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import stat
import subprocess
import sys
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import jwt
import pytest
from cli_helpers import browser_env, cli_env, follow_in_thread, serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oauthproxy"))
from fake_idp import CLIENT_SECRET, FakeIdP
from proxy_helpers import Stack as ProxyStack

from mcpkit.client import Client, MemoryTransport
from mcpkit.client.errors import HTTPAuthError
from mcpkit.core.jsonrpc import INVALID_REQUEST, JSONRPCError
from mcpkit.ext.auth.cli import BearerToken
from mcpkit.ext.auth.client import OAuthError
from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.server import Principal

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

DOC = Path(__file__).resolve().parents[4] / "docs" / "extensions" / "auth.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-(?:example|cli): ([\w-]+)\n")
# kind-ok: fixed-port the documented URL, replaced by a free port before it runs
MCP_ADDR, AS_ADDR = "http://127.0.0.1:8000", "http://127.0.0.1:9000"
SCOPES = ["notes:read", "notes:write"]
JSON = dict[str, Any]


def blocks() -> list[tuple[str, str, str]]:
    """``(language, name, code)`` of every python and bash block of the page."""
    found: list[tuple[str, str, str]] = []
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        if lang in ("python", "bash"):
            m = MARKER.match(code)
            found.append((lang, m.group(1) if m else "", code))
    return found


def block(name: str) -> str:
    (code,) = [c for _, n, c in blocks() if n == name]
    return code


def localised(code: str, mcp_base: str = MCP_ADDR, issuer: str = AS_ADDR) -> str:
    """The block with the page's addresses replaced by the test's (module docstring)."""
    return code.replace(MCP_ADDR, mcp_base).replace(AS_ADDR, issuer)


def run(name: str, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_example_{name}"}
    exec(compile(code, f"<docs-example {name}>", "exec"), namespace)
    return namespace


@dataclass
class Stack:
    """The development authorization server and the page's protected server, served."""

    auth_server: DevAuthServer
    url: str  # the MCP endpoint
    namespace: dict[str, Any]  # what the protect-server block defined

    def token(self, scopes: list[str]) -> str:
        return self.auth_server.issue_token(scopes=scopes, audience=self.url)


@contextlib.asynccontextmanager
async def stack(example: str = "protect-server") -> AsyncIterator[Stack]:
    async with serve_dev_auth_server(scopes_supported=SCOPES) as auth_server:
        defined: dict[str, Any] = {}

        def make_app(base: str) -> Any:
            defined.update(run(example, localised(block(example), base, auth_server.issuer)))
            return defined["server"].http_app()

        async with serve(make_app) as base:
            yield Stack(auth_server, f"{base}/mcp", defined)


async def call_with_token(url: str, token: str) -> str:
    async with Client(url, auth=BearerToken(token)) as client:
        result = await client.call_tool("add_note", {"text": "hi"})
    return result.content[0].text  # type: ignore[union-attr]


# -- checks, one per block ---------------------------------------------------------------


async def check_protect_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with stack() as s, httpx2.AsyncClient(timeout=10) as http:
        base = s.url.removesuffix("/mcp")
        prm = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["resource"] == s.url
        assert prm["authorization_servers"] == [s.auth_server.issuer]
        assert prm["scopes_supported"] == SCOPES
        bare = await http.post(s.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert bare.status_code == 401
        challenge = bare.headers["www-authenticate"]
        assert 'scope="notes:read"' in challenge
        assert "resource_metadata=" in challenge
        with pytest.raises(HTTPAuthError) as refused:
            await call_with_token(s.url, s.token(["notes:read"]))
        assert refused.value.status == 403
        assert 'error="insufficient_scope"' in refused.value.challenge
        assert await call_with_token(s.url, s.token(SCOPES)) == "saved for dev-user"
        assert s.namespace["notes"] == ["hi"]
        # over stdio (here in memory) no token is checked: no principal, a clear -32600
        stdio = await unauthorized_in_memory(s.namespace["server"], "add_note", {"text": "x"})
        assert stdio.code == INVALID_REQUEST
        assert stdio.message.startswith("Unauthorized:")


async def check_client_interactive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    opened: list[str] = []

    def browser(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)
        return follow_in_thread(url)

    monkeypatch.setattr(webbrowser, "open", browser)
    async with stack() as s:
        ns = run("client-interactive", block("client-interactive"))
        assert await ns["main"](s.url) == "saved for dev-user"
        # notes:read from the 401 challenge, then a step-up for add_note's notes:write.
        assert len(opened) == 2
        tokens = tmp_path / ".config" / "my-app" / "tokens.json"
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
        assert await ns["main"](s.url) == "saved for dev-user"  # stored tokens: no browser
        assert len(opened) == 2


async def check_client_headless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with stack() as s:
        ns = run("client-headless", block("client-headless"))
        assert await ns["main"](s.url) == "saved for dev-user"
        assert s.namespace["notes"] == ["from CI"]


async def check_client_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with stack() as s:
        s.auth_server.register_client(
            "reporting", client_secret="s3cret-value", scope=" ".join(SCOPES)
        )
        ns = run("client-credentials", block("client-credentials"))
        text = await ns["main"]("reporting", "s3cret-value", s.url)
        assert text.startswith("saved for ")
        assert s.namespace["notes"] == ["from a service"]


async def check_client_several_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two servers of one authorization server each get their own token; a third of
    another authorization server is refused before the secret is sent there."""
    async with serve_dev_auth_server(scopes_supported=SCOPES) as auth_server:
        auth_server.register_client("reporting", client_secret="s3cret", scope=" ".join(SCOPES))
        seen: list[dict[str, str]] = [{}, {}]
        notes: list[dict[str, Any]] = [{}, {}]

        def app_for(i: int) -> Callable[[str], Any]:
            def make_app(base: str) -> Any:
                notes[i].update(
                    run(
                        "protect-server",
                        localised(block("protect-server"), base, auth_server.issuer),
                    )
                )
                inner = notes[i]["server"].http_app()

                async def app(scope: Any, receive: Any, send: Any) -> None:
                    for k, v in scope.get("headers", []):
                        if k == b"authorization":
                            seen[i][v.decode()] = scope["path"]
                    await inner(scope, receive, send)

                return app

            return make_app

        async with (
            serve(app_for(0)) as base_a,
            serve(app_for(1)) as base_b,
            serve_dev_auth_server(scopes_supported=SCOPES) as other_as,
            serve(
                lambda base: run(
                    "protect-server", localised(block("protect-server"), base, other_as.issuer)
                )["server"].http_app()
            ) as base_c,
        ):
            ns = run(
                "client-several-servers",
                localised(block("client-several-servers"), issuer=auth_server.issuer),
            )
            urls = [f"{base_a}/mcp", f"{base_b}/mcp"]
            answers = await ns["main"]("reporting", "s3cret", urls)
            assert [a.startswith("saved for ") for a in answers] == [True, True]
            assert notes[0]["notes"] == notes[1]["notes"] == ["from one provider"]
            assert seen[0]
            assert seen[1]
            assert not set(seen[0]) & set(seen[1])  # no token reached both servers
            for i, url in enumerate(urls):
                for header in seen[i]:
                    claims = jwt.decode(header.split()[1], options={"verify_signature": False})
                    assert claims["aud"] == url
            with pytest.raises(OAuthError) as refused:
                await ns["main"]("reporting", "s3cret", [*urls, f"{base_c}/mcp"])
            assert refused.value.error == "invalid_client"


async def check_dev_server_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = run("dev-server-in-process", block("dev-server-in-process"))
    token = await ns["issue_a_token"]()
    claims = jwt.decode(token, options={"verify_signature": False})
    # kind-ok: fixed-port the documented audience, compared only
    assert claims["aud"] == "http://127.0.0.1:8000/mcp"
    assert claims["scope"] == "notes:read"
    assert claims["sub"] == "dev-user"
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"


async def granted_on_step_up(issuer: str) -> list[str]:
    """At the authorization server ``issuer``: register a public client with
    ``notes:read`` (as the official SDKs do), then ask for both scopes in an
    authorization code flow with PKCE; the scopes of the token it gets."""
    import base64
    import hashlib
    import secrets
    from urllib.parse import parse_qs, urlsplit

    redirect = "http://127.0.0.1/callback"
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    async with httpx2.AsyncClient(timeout=10) as http:
        metadata = {"redirect_uris": [redirect], "token_endpoint_auth_method": "none"}
        registered = await http.post(f"{issuer}/register", json={**metadata, "scope": SCOPES[0]})
        client_id = registered.json()["client_id"]
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "scope": " ".join(SCOPES),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        answer = await http.get(f"{issuer}/authorize", params=query)
        code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        form |= {"client_id": client_id, "redirect_uri": redirect}
        tokens = (await http.post(f"{issuer}/token", data=form)).json()
    return sorted(tokens["scope"].split())


async def check_dev_server_step_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = run("dev-server-step-up", block("dev-server-step-up"))
    async with serve_dev_auth_server(ns["auth_server"]) as auth_server:
        assert await granted_on_step_up(auth_server.issuer) == SCOPES
    async with serve_dev_auth_server(scopes_supported=SCOPES) as default:  # the class's
        assert await granted_on_step_up(default.issuer) == ["notes:read"]


async def check_production_idp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = run("production-idp", block("production-idp"))
    async with (
        serve(lambda base: ns["server"].http_app()) as base,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        prm = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["resource"] == "https://mcp.example.com/mcp"
        assert prm["authorization_servers"] == ["https://login.example.com/realms/acme"]
        bare = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1})
        bad = await http.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": "Bearer not-a-jwt"},
        )
    assert bare.status_code == 401
    assert (
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
        in (bare.headers["www-authenticate"])
    )
    assert 'scope="files:read"' in bare.headers["www-authenticate"]
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert "not-a-jwt" not in bad.text


IDP_ADDR, PROXY_ADDR = "https://login.example.com", "https://mcp.example.com"


async def check_idp_oidc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example against a local provider signing real id_tokens (the same block runs
    against the real OpenID Provider in ``tests_idp/test_idp_docs.py``)."""
    monkeypatch.setenv("MCP_PROXY_CLIENT_SECRET", CLIENT_SECRET)
    idp = FakeIdP()
    async with serve(idp.app) as idp_base:
        defined: dict[str, Any] = {}

        def make_app(base: str) -> Any:
            code = block("idp-oidc").replace(IDP_ADDR, idp_base).replace(PROXY_ADDR, base)
            defined.update(run("idp-oidc", code))
            return defined["server"].http_app()

        async with serve(make_app) as base, httpx2.AsyncClient(timeout=10) as http:
            proxy = defined["proxy"]
            s = ProxyStack(proxy, idp, base, f"{base}/mcp", http, [])
            _, tokens = await s.login()
            assert await s.whoami(tokens["access_token"]) == idp.user
            async with Client(s.mcp_url, auth=BearerToken(tokens["access_token"])) as client:
                email = await client.call_tool("my_email", {})
            assert email.content[0].text == f"{idp.user}@example.com"  # type: ignore[union-attr]
            assert idp.access  # the upstream token was used server-side, never sent out
            assert not any(t in str(tokens) for t in idp.access)


async def check_idp_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from joserfc.jwk import ECKey

    from mcpkit.ext.auth.oauthproxy import RedisProxyStore

    key = ECKey.generate_key("P-256")
    (tmp_path / "proxy-signing-key.pem").write_bytes(key.as_pem(private=True))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOOGLE_SECRET", "g-secret")
    monkeypatch.setenv("MCP_PROXY_SECRET", "ab" * 32)
    proxy = run("idp-redis", block("idp-redis"))["proxy"]  # Redis is reached lazily
    assert isinstance(proxy.vault.store, RedisProxyStore)
    published = proxy.jwks()["keys"][0]
    assert (published["x"], published["y"]) == (key.as_dict()["x"], key.as_dict()["y"])
    assert proxy.upstream.issuer == "https://accounts.google.com"


async def check_dpop_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with stack("dpop-server") as s, httpx2.AsyncClient(timeout=10) as http:
        base = s.url.removesuffix("/mcp")
        prm = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["dpop_bound_access_tokens_required"] is True
        bearer = await http.post(
            s.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": f"Bearer {s.token([])}"},
        )
        assert bearer.status_code == 401
        assert "DPoP" in bearer.headers["www-authenticate"]


async def check_rs_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "rs-scopes"
) -> None:
    ns: dict[str, Any] = {}

    def make_app(base: str) -> Any:
        ns.update(run(name, localised(block(name), base)))
        return ns["server"].http_app()

    async with serve(make_app) as base:
        url = f"{base}/mcp"
        async with Client(url, auth=BearerToken("reader")) as reader:
            names = [t.name for t in await reader.list_tools()]
        assert names == []
        with pytest.raises(HTTPAuthError) as refused:
            async with Client(url, auth=BearerToken("reader")) as reader:
                await reader.call_tool("purge", {})
        assert refused.value.status == 403
        assert 'scope="files:read ops"' in refused.value.challenge
        async with Client(url, auth=BearerToken("admin")) as admin:
            names = [t.name for t in await admin.list_tools()]
            purged = await admin.call_tool("purge", {})
            secret = await admin.read_resource("file:///private/x")
        assert names == ["purge"]
        assert purged.content[0].text == "purged"  # type: ignore[union-attr]
        assert secret.contents[0].text == "secret x"  # type: ignore[union-attr]


async def check_rs_scopes_decorator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 26: the same rules given on the decorators behave the same.
    await check_rs_scopes(tmp_path, monkeypatch, "rs-scopes-decorator")


async def check_rs_mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 25 §4: refused into an unprotected parent, carried into a protected one.
    ns: dict[str, Any] = {}
    printed = io.StringIO()

    def make_app(base: str) -> Any:
        with contextlib.redirect_stdout(printed):
            ns.update(run("rs-mount", localised(block("rs-mount"), base)))
        return ns["gateway"].http_app()

    async with serve(make_app) as base, httpx2.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        anonymous = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert anonymous.status_code == 401
        with pytest.raises(HTTPAuthError) as refused:
            async with Client(url, auth=BearerToken("reader")) as reader:
                await reader.call_tool("files_purge", {})
        assert refused.value.status == 403
        assert 'scope="ops"' in refused.value.challenge
        # the line the page says the example prints
        said = re.search(r"It prints `(refused: [^`]+)`", DOC.read_text("utf-8"))
        assert said
        assert printed.getvalue() == " ".join(said.group(1).split()) + "\n"
        async with Client(url, auth=BearerToken("admin")) as admin:
            purged = await admin.call_tool("files_purge", {})
        assert purged.content[0].text == "purged"  # type: ignore[union-attr]


async def check_rs_late_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 26: a scope rule naming nothing refuses start-up; late_bound=True does not.
    import io

    ns: dict[str, Any] = {}
    printed = io.StringIO()

    def make_app(base: str) -> Any:
        with contextlib.redirect_stdout(printed):
            ns.update(run("rs-late-bound", localised(block("rs-late-bound"), base)))
        return ns["server"].http_app()

    text = " ".join(DOC.read_text("utf-8").split())
    documented = re.search(r"It prints `(auth\.require\(tool='sav_note'[^`]+)`", text)
    assert documented is not None
    async with serve(make_app) as base:
        assert printed.getvalue().strip() == documented.group(1)
        url = f"{base}/mcp"
        for tool in ("save_note", "export"):
            with pytest.raises(HTTPAuthError) as refused:
                async with Client(url, auth=BearerToken("reader")) as reader:
                    await reader.call_tool(tool, {"text": "x"})
            assert refused.value.status == 403
            assert 'scope="notes:read notes:write"' in refused.value.challenge
            ns["server"].add_tool(lambda: "exported", name="export")  # registered while serving
        async with Client(url, auth=BearerToken("writer")) as writer:
            exported = await writer.call_tool("export", {})
        assert exported.content[0].text == "exported"  # type: ignore[union-attr]


async def check_client_grants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # auth-grants: the section "More grants" (DPoP client against the dpop-server block).
    async with stack("dpop-server") as s:
        s.auth_server.register_client("reporting", client_secret="s3cret-value")
        ns = run("client-grants", block("client-grants"))
        assert await ns["main"]("reporting", "s3cret-value", s.url) == []
        assert ns["workload"].extensions == ()
        assert [e.id for e in ns["enterprise"].extensions] == [
            "io.modelcontextprotocol/enterprise-managed-authorization"
        ]
        monkeypatch.setenv("SSO_ID_TOKEN", "id.token.value")
        assert ns["enterprise"].id_token() == "id.token.value"


# -- shell blocks ----------------------------------------------------------------------


def commands(name: str) -> list[str]:
    """The block's command lines (continuation lines joined, comments dropped)."""
    text = block(name).replace("\\\n", " ")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


async def bash(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    with anyio.fail_after(120):
        return await anyio.run_process(["bash", "-c", line], check=False, env=env)


def shell_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = cli_env(tmp_path, **extra)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


async def check_auth_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (line,) = commands("auth-server")
    # kind-ok: fixed-port the documented port, replaced by port 0 (the issuer printed)
    line = line.replace("--port 9000", "--port 0")
    env = shell_env(tmp_path)
    async with await anyio.open_process(["bash", "-c", f"exec {line}"], env=env) as proc:
        try:
            assert proc.stdout is not None
            out = b""
            with anyio.fail_after(60):
                while out.count(b"\n") < 3:
                    out += await proc.stdout.receive()
            lines = out.decode().splitlines()[:3]
            printed = dict(ln.split(": ", 1) for ln in lines)
            issuer = urlsplit(printed["issuer"])
            assert (issuer.scheme, issuer.hostname) == ("http", "127.0.0.1")
            assert issuer.port
            assert not issuer.path
            async with httpx2.AsyncClient(timeout=10) as http:
                metadata = (await http.get(printed["metadata"])).json()
                jwks = (await http.get(printed["jwks"])).json()
            assert metadata["issuer"] == printed["issuer"]
            assert set(SCOPES) <= set(metadata["scopes_supported"])
            assert jwks["keys"][0]["alg"] == "ES256"
            assert await granted_on_step_up(printed["issuer"]) == SCOPES  # --client-scopes
        finally:
            proc.send_signal(signal.SIGINT)
            with anyio.fail_after(30):
                status = await proc.wait()
    assert status == 0


async def check_cli_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "browser.log"
    env = shell_env(tmp_path, BROWSER=browser_env(tmp_path), FAKE_BROWSER_LOG=str(log))
    async with stack() as s:
        base = s.url.removesuffix("/mcp")
        listed, called = [await bash(localised(c, base), env) for c in commands("cli-login")]
        assert listed.returncode == 0, listed.stderr
        assert "add_note" in listed.stdout.decode()
        assert called.returncode == 0, called.stderr
        assert called.stdout.decode().strip() == "saved for dev-user"
        tokens = tmp_path / "config" / "mcpkit" / "tokens.json"
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        logins = len(log.read_text().splitlines())
        assert logins >= 1
        again = await bash(localised(commands("cli-login")[0], base), env)
        assert again.returncode == 0, again.stderr
        assert len(log.read_text().splitlines()) == logins  # the cached tokens were enough
        assert s.namespace["notes"] == ["hi"]


async def check_cli_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with stack() as s:
        env = shell_env(tmp_path, TOKEN=s.token(SCOPES))
        (line,) = commands("cli-token")
        out = await bash(localised(line, s.url.removesuffix("/mcp")), env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode().strip() == "saved for dev-user"


async def unauthorized_in_memory(server: Any, tool: str, arguments: JSON) -> JSONRPCError:
    """The error ``tool`` answers a caller without a principal (in memory, as on stdio)."""
    async with Client(MemoryTransport(server)) as client:
        with pytest.raises(JSONRPCError) as refused:
            await client.call_tool(tool, arguments)
    return refused.value


async def check_principal_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = run("principal-or-none", block("principal-or-none"))
    async with Client(MemoryTransport(ns["server"])) as client:
        who = await client.call_tool("whoami", {})
    assert who.content[0].text == "a local user"  # type: ignore[union-attr]
    refused = await unauthorized_in_memory(ns["server"], "close_account", {})
    assert refused.code == INVALID_REQUEST
    assert refused.message.startswith("Unauthorized: this operation needs an authenticated")
    assert refused.data is None
    ada = Principal(subject="ada", issuer="https://idp.example")
    async with Client(MemoryTransport(ns["server"], principal=ada)) as client:
        who = await client.call_tool("whoami", {})
        closed = await client.call_tool("close_account", {})
    assert who.content[0].text == "ada"  # type: ignore[union-attr]
    assert closed.content[0].text == "closed ada"  # type: ignore[union-attr]


Check = Callable[[Path, pytest.MonkeyPatch], Awaitable[None]]
CHECKS: dict[str, Check] = {
    "protect-server": check_protect_server,
    "principal-or-none": check_principal_or_none,
    "client-interactive": check_client_interactive,
    "client-headless": check_client_headless,
    "client-credentials": check_client_credentials,
    "client-several-servers": check_client_several_servers,
    "dev-server-in-process": check_dev_server_in_process,
    "dev-server-step-up": check_dev_server_step_up,
    "production-idp": check_production_idp,
    "idp-oidc": check_idp_oidc,
    "idp-redis": check_idp_redis,
    "dpop-server": check_dpop_server,
    "rs-scopes": check_rs_scopes,
    "rs-scopes-decorator": check_rs_scopes_decorator,
    "rs-mount": check_rs_mount,
    "rs-late-bound": check_rs_late_bound,
    "client-grants": check_client_grants,
    "auth-server": check_auth_server,
    "cli-login": check_cli_login,
    "cli-token": check_cli_token,
}


def test_every_block_is_marked_and_checked() -> None:
    names = [name for _, name, _ in blocks()]
    assert all(names), "a python/bash block of auth.md lacks its docs-example/docs-cli marker"
    assert sorted(names) == sorted(CHECKS), "each block needs exactly one check"


def test_the_server_example_is_under_20_lines() -> None:
    code = [ln for ln in block("protect-server").splitlines()[1:] if ln.strip()]
    assert len(code) < 20, code


@pytest.mark.parametrize("name", sorted(CHECKS))
async def test_docs_block_runs_and_behaves_as_documented(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await CHECKS[name](tmp_path, monkeypatch)
