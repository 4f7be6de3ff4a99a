"""OAuth-capable MCP clients nobody here wrote, run end to end against a protected MCP
server: the official Python SDK's ``OAuthClientProvider`` and the TypeScript SDK's OAuth
client (v1 ``@modelcontextprotocol/sdk`` 1.32.2, v2 ``@modelcontextprotocol/client`` 2.4.0,
pinned in ``conformance/toolchain.py``), each signing in through a :class:`HeadlessBrowser`
(every login and consent form on the way is an HTML form it submits).

Rules:
1. Each client runs its own default flow: discovery (RFC 9728, RFC 8414), dynamic
   registration, PKCE, ``resource``; only the browser is ours.
2. Each run: sign in, list the tools, call one, then make the access token unusable (the
   Python SDK: the token's expiry passes; TypeScript: the token is replaced, so the server
   answers 401) and call again, which the client answers by refreshing. The result
   (:class:`PeerRun`) records every token response and every authorization URL, so a test
   asserts that the second call was served by a refresh, not a second login.
3. TypeScript runs in a Node 22 child process that prints ``{"authorize": URL}`` and reads
   the callback URL on stdin; it trusts the test CA through ``NODE_EXTRA_CA_CERTS``.
   Bounded: 120 s per run.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc
import httpx2
from idp import HeadlessBrowser, Tls, toolchain
from mcp import Client as SdkClient
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from mcpkit.client import Client
from mcpkit.ext.auth.client.authcode import AuthorizationCode
from mcpkit.ext.auth.client.grant import ClientRegistration, TokenSet
from mcpkit.ext.auth.client.provider import OAuthProvider
from mcpkit.ext.auth.client.storage import MemoryTokenStorage
from mcpkit.ext.auth.server import principal
from mcpkit.server import Context, Server

TS_DRIVER = Path(__file__).resolve().parent / "ts_oauth_client.mjs"
REDIRECT_URI = "http://127.0.0.1/callback"  # loopback (RFC 8252): never fetched
RUN_TIMEOUT_S = 120.0
MAX_LINE_BYTES = 4_000_000  # one line of the driver's output (its result holds tokens)
JSON = dict[str, Any]


def protected_server() -> Server:
    """The MCP server the clients call: ``whoami`` answers ``"<subject> <client_id>"`` of
    the caller's principal, ``echo(text)`` answers ``text``. Protect it before serving."""
    server = Server("idp-interop")

    @server.tool()
    def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        caller = principal(ctx)
        assert caller is not None
        return f"{caller.subject} {caller.client_id}"

    @server.tool()
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    return server


@dataclass
class PeerRun:
    """What one client did (rule 2)."""

    client: str
    tools: list[str] = field(default_factory=list[str])
    first: JSON = field(default_factory=dict[str, Any])  # {"text"} or {"error"}
    second: JSON = field(default_factory=dict[str, Any])
    tokens: list[JSON] = field(default_factory=list[JSON])  # every token response saved
    authorization_urls: list[str] = field(default_factory=list[str])
    registrations: int = 0
    client_id: str = ""  # as registered (dynamically) at the authorization server
    client_secret: str | None = None
    client_auth_method: str = "none"  # its token_endpoint_auth_method, as registered
    error: JSON | None = None

    @property
    def refreshed(self) -> bool:
        """The second call was served by a refresh: two token responses, one login."""
        return len(self.tokens) == 2 and len(self.authorization_urls) == 1


# -- the official Python SDK ----------------------------------------------------------


class _Store:
    """The official client's ``TokenStorage``, in memory, recording every token saved."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.saved: list[OAuthToken] = []
        self.client_info: OAuthClientInformationFull | None = None
        self.registrations = 0

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.saved.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info
        self.registrations += 1


async def run_python_sdk(
    url: str, browser: HeadlessBrowser, tool: str, arguments: JSON, tls: Tls | None = None
) -> PeerRun:
    """Rule 2 with ``mcp.client.auth.OAuthClientProvider`` (``mcp`` 2.3.0)."""
    run = PeerRun("python-sdk")
    store = _Store()
    pending: list[AuthorizationCodeResult] = []

    async def redirect(authorization_url: str) -> None:
        run.authorization_urls.append(authorization_url)
        callback = await browser.authorize(authorization_url, REDIRECT_URI)
        query = dict(parse_qsl(urlsplit(callback).query))
        if "code" not in query:
            raise RuntimeError(f"the authorization ended without a code: {callback}")
        pending.append(
            AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")
            )
        )

    async def callback() -> AuthorizationCodeResult:
        return pending.pop()

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            client_name="mcpkit interop (official Python SDK)",
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=store,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    verify: Any = tls.client_context() if tls is not None else True

    async def call(client: SdkClient) -> JSON:
        result = await client.call_tool(tool, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        return (
            {"error": {"name": "isError", "message": text}} if result.is_error else {"text": text}
        )

    with anyio.fail_after(RUN_TIMEOUT_S):
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30, verify=verify) as http,
            SdkClient(streamable_http_client(url, http_client=http)) as client,
        ):
            run.tools = sorted(t.name for t in (await client.list_tools()).tools)
            run.first = await call(client)
            # The token's lifetime passes (the SDK's own record of it): the next request
            # refreshes first.
            provider.context.token_expiry_time = time.time() - 1
            run.second = await call(client)
    run.tokens = [t.model_dump(exclude_none=True) for t in store.saved]
    run.registrations = store.registrations
    if store.client_info is not None:
        run.client_id = store.client_info.client_id or ""
        run.client_secret = store.client_info.client_secret
        run.client_auth_method = store.client_info.token_endpoint_auth_method or "none"
    return run


# -- mcpkit's own client -----------------------------------------------------------------


class _RecordingStorage(MemoryTokenStorage):
    """mcpkit's in-memory token storage, recording every token set saved."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[TokenSet] = []
        self.registered: list[ClientRegistration] = []

    async def set_tokens(self, resource: str, tokens: TokenSet | None) -> None:
        await super().set_tokens(resource, tokens)
        if tokens is not None:
            self.saved.append(tokens)

    async def set_registration(self, resource: str, registration: ClientRegistration) -> None:
        await super().set_registration(resource, registration)
        self.registered.append(registration)


class _BrowserRedirect:
    """mcpkit's ``RedirectHandler`` (rule 1 of its redirect module) over the headless
    browser: the callback's query parameters."""

    def __init__(self, browser: HeadlessBrowser, run: PeerRun) -> None:
        self.browser = browser
        self.run = run

    @property
    def redirect_uri(self) -> str:
        return REDIRECT_URI

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> dict[str, str]:
        del http  # the browser keeps its own cookies
        self.run.authorization_urls.append(url)
        callback = await self.browser.authorize(url, REDIRECT_URI)
        return dict(parse_qsl(urlsplit(callback).query, keep_blank_values=True))


async def run_mcpkit(
    url: str, browser: HeadlessBrowser, tool: str, arguments: JSON, tls: Tls | None = None
) -> PeerRun:
    """Rule 2 with mcpkit's client (``OAuthProvider`` + ``AuthorizationCode``); it trusts
    the test CA through ``SSL_CERT_FILE`` (the ``tls`` fixture sets it)."""
    del tls
    run = PeerRun("mcpkit")
    storage = _RecordingStorage()
    provider = OAuthProvider(AuthorizationCode(_BrowserRedirect(browser, run)), storage=storage)

    async def call(client: Client) -> JSON:
        result = await client.call_tool(tool, arguments)
        text = getattr(result.content[0], "text", "")
        return (
            {"error": {"name": "isError", "message": text}} if result.is_error else {"text": text}
        )

    with anyio.fail_after(RUN_TIMEOUT_S):
        async with Client(url, auth=provider) as client:
            run.tools = sorted(t.name for t in await client.list_tools())
            run.first = await call(client)
            storage.saved[-1].expires_at = time.time() - 1  # its lifetime passes
            run.second = await call(client)
    run.tokens = [t.to_json() for t in storage.saved]
    run.registrations = len(storage.registered)
    if storage.registered:
        run.client_id = storage.registered[-1].client_id
        run.client_secret = storage.registered[-1].client_secret
        run.client_auth_method = storage.registered[-1].token_endpoint_auth_method
    return run


# -- the TypeScript SDK (v1, v2) ------------------------------------------------------


def ts_prefix(sdk: str) -> Path:
    """The npm prefix holding ``sdk`` ("v1" or "v2"), installed when missing."""
    tool = "sdk" if sdk == "v1" else "ext-tasks"  # v2's client is ext-tasks' pinned peer
    toolchain.ensure_tool(tool)
    return toolchain.parse_tool(tool).prefix


async def run_typescript(
    sdk: str, url: str, browser: HeadlessBrowser, tool: str, arguments: JSON, tls: Tls | None = None
) -> PeerRun:
    """Rule 2 and 3 with the TypeScript SDK ``sdk`` ("v1" or "v2")."""
    argv = [str(toolchain.node_executable()), str(TS_DRIVER), sdk, str(ts_prefix(sdk))]
    argv += [url, REDIRECT_URI, tool, json.dumps(arguments)]
    env = {**os.environ, **(tls.env() if tls is not None else {})}
    run = PeerRun(f"ts-{sdk}")
    result: JSON | None = None
    stderr: list[bytes] = []

    async def drain(stream: anyio.abc.ByteReceiveStream) -> None:
        async for chunk in stream:
            stderr.append(chunk)

    with anyio.fail_after(RUN_TIMEOUT_S):
        process: anyio.abc.Process = await anyio.open_process(
            argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        async with process, anyio.create_task_group() as tg:
            assert process.stdout is not None
            assert process.stdin is not None
            assert process.stderr is not None
            tg.start_soon(drain, process.stderr)
            buffer = b""
            async for chunk in process.stdout:
                buffer += chunk
                if len(buffer) > MAX_LINE_BYTES:
                    raise RuntimeError(f"the TypeScript SDK {sdk} client wrote a line too long")
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    message: JSON = json.loads(line)
                    if "authorize" in message:
                        callback = await browser.authorize(message["authorize"], REDIRECT_URI)
                        await process.stdin.send(callback.encode() + b"\n")
                    elif "result" in message:
                        result = message["result"]
            await process.wait()
    if result is None:
        said = b"".join(stderr).decode(errors="replace")[-4000:]
        raise RuntimeError(f"the TypeScript SDK {sdk} client crashed:\n{said}")
    run.tools = result.get("tools", [])
    run.first = result.get("first", {})
    run.second = result.get("second", {})
    run.tokens = result["tokens"]
    run.authorization_urls = result["authorizationUrls"]
    run.registrations = result["registrations"]
    run.error = result.get("error")
    run.client_id = (result.get("client") or {}).get("client_id", "")
    run.client_secret = (result.get("client") or {}).get("client_secret")
    method = (result.get("client") or {}).get("token_endpoint_auth_method")
    run.client_auth_method = method or "none"
    return run


async def run_peer(
    name: str,
    url: str,
    browser: HeadlessBrowser,
    tool: str,
    arguments: JSON,
    tls: Tls | None = None,
) -> PeerRun:
    """Run the client ``name``: "mcpkit", "python-sdk", "ts-v1" or "ts-v2"."""
    if name == "python-sdk":
        return await run_python_sdk(url, browser, tool, arguments, tls)
    if name == "mcpkit":
        return await run_mcpkit(url, browser, tool, arguments, tls)
    return await run_typescript(name.removeprefix("ts-"), url, browser, tool, arguments, tls)


PEERS = ("python-sdk", "ts-v1", "ts-v2")
"""The clients nobody here wrote; :func:`run_peer` also runs ``"mcpkit"``."""
