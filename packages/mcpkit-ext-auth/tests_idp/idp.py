"""The real OpenID Provider of the ext-auth-idp tests, TLS for every loopback server, and
a headless browser that signs in through HTML forms.

Rules:
1. The OP is npm ``oidc-provider`` (``conformance/toolchain.py`` pins it) run by
   ``op_server.mjs`` under the toolchain's Node 22: a real process on 127.0.0.1, port 0,
   whose issuer URL is read from its output (``conformance/harness.py`` ``served``).
2. TLS everywhere (``Secure`` cookies are not sent over ``http://``): one ``trustme`` CA
   per test session issues the certificate of ``127.0.0.1``; Python trusts it through
   :meth:`Tls.client_context`, child processes through :meth:`Tls.env`
   (``SSL_CERT_FILE`` and ``NODE_EXTRA_CA_CERTS``).
3. The browser parses each page with :mod:`html.parser` (never a regular expression),
   submits the page's one form (the first submit button, or the one named in ``press``;
   a page offering named buttons none of which is in ``press`` is an error), keeps
   cookies, follows redirects across origins and stops at the first redirect to the
   client's callback, which it returns unfetched. Like a browser, it sends ``Secure``
   cookies to loopback over plain http too (:class:`LoopbackSecureCookies`). Bounded:
   at most :data:`MAX_STEPS` requests and :data:`MAX_PAGE_BYTES` per page.
4. Every HTTP request here has a timeout; the admin hook of the OP is reached with its
   bearer token only.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import re
import secrets
import socket
import ssl
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2
import trustme
import uvicorn

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "conformance"))

import harness  # noqa: E402  (conformance/harness.py: served processes, announced URLs)
import toolchain  # noqa: E402  (conformance/toolchain.py: Node 22 and oidc-provider, pinned)

OP_SCRIPT = Path(__file__).resolve().parent / "op_server.mjs"
ISSUER_LINE = re.compile(r"^issuer: (https://\S+)", re.MULTILINE)
MAX_STEPS = 20
MAX_PAGE_BYTES = 1_000_000
TIMEOUT_S = 30.0
JSON = dict[str, Any]


# -- TLS -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tls:
    """A test CA and the certificate it issued to ``127.0.0.1`` (PEM files in ``folder``)."""

    ca: trustme.CA
    ca_pem: Path
    cert_pem: Path
    key_pem: Path

    @classmethod
    def create(cls, folder: Path) -> Tls:
        ca = trustme.CA()
        leaf = ca.issue_cert("127.0.0.1", "localhost")
        paths = (folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
        ca.cert_pem.write_to_path(str(paths[0]))
        for i, blob in enumerate(leaf.cert_chain_pems):
            blob.write_to_path(str(paths[1]), append=i > 0)
        leaf.private_key_pem.write_to_path(str(paths[2]))
        return cls(ca, *paths)

    def client_context(self) -> ssl.SSLContext:
        """An SSL context for clients that trusts this CA (and only it)."""
        return ssl.create_default_context(cafile=str(self.ca_pem))

    def env(self) -> dict[str, str]:
        """Environment for a child process (Python or Node) to trust this CA."""
        return {"SSL_CERT_FILE": str(self.ca_pem), "NODE_EXTRA_CA_CERTS": str(self.ca_pem)}

    def http(self, **kwargs: Any) -> httpx2.AsyncClient:
        """An HTTP client trusting this CA, with a timeout (rule 4)."""
        return httpx2.AsyncClient(verify=self.client_context(), timeout=TIMEOUT_S, **kwargs)


@contextlib.asynccontextmanager
async def serve_tls(make_app: Callable[[str], Any], tls: Tls) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` with uvicorn over TLS on 127.0.0.1 (a port the kernel
    picks, held from bind to serve); yields ``https://127.0.0.1:PORT``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"https://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        make_app(base),
        log_level="warning",
        ssl_certfile=str(tls.cert_pem),
        ssl_keyfile=str(tls.key_pem),
        timeout_graceful_shutdown=3,
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:  # noqa: ASYNC110 (uvicorn offers no event)
                await anyio.sleep(0.01)
        try:
            yield base
        finally:
            server.should_exit = True
            server.force_exit = True  # idle keep-alive connections would hold it 3 s


# -- the OpenID Provider ---------------------------------------------------------------


@dataclass
class OpenIdProvider:
    """A running ``oidc-provider``: its issuer and its admin hook (``op_server.mjs``)."""

    issuer: str
    admin_token: str
    tls: Tls
    log: Path

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    async def _admin(self, path: str, body: JSON) -> JSON:
        async with self.tls.http() as http:
            answer = await http.post(
                f"{self.issuer}/admin/{path}",
                json=body,
                headers={"authorization": f"Bearer {self.admin_token}"},
            )
        if answer.status_code != 200:
            raise RuntimeError(f"OP admin {path}: {answer.status_code} {answer.text}")
        result: JSON = answer.json()
        return result

    async def register_client(
        self,
        redirect_uris: list[str],
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
        auth_method: str = "client_secret_basic",
    ) -> tuple[str, str]:
        """Pre-register a confidential client (as an IdP admin would); returns
        ``(client_id, client_secret)``."""
        client_id = client_id or f"client-{secrets.token_hex(6)}"
        secret = client_secret or secrets.token_urlsafe(24)
        await self._admin(
            "clients",
            {
                "client_id": client_id,
                "client_secret": secret,
                "redirect_uris": redirect_uris,
                "grant_types": list(grant_types),
                "response_types": ["code"],
                "token_endpoint_auth_method": auth_method,
            },
        )
        return client_id, secret

    async def revoke(self, account: str) -> int:
        """Revoke every grant of ``account`` and the tokens issued under them; returns
        how many grants there were."""
        return int((await self._admin("revoke", {"account": account}))["grants"])

    async def fault(self, token: str | None) -> None:
        """Make the token endpoint misbehave: ``"hang"``, ``"html"``, ``"wrong-aud"``,
        ``"wrong-nonce"``; ``None`` restores it (releasing hung requests)."""
        await self._admin("faults", {"token": token})


@contextlib.contextmanager
def run_op(
    tls: Tls, folder: Path, clients: list[JSON] | None = None, ttl_s: dict[str, int] | None = None
) -> Iterator[OpenIdProvider]:
    """Start ``op_server.mjs`` (rule 1) for the duration; its log is ``folder/op.log``."""
    prefix = toolchain.ensure_tool("oidc-provider").parents[1]
    admin_token = secrets.token_urlsafe(24)
    config = folder / "op-config.json"
    config.write_text(
        json.dumps(
            {
                "cert": str(tls.cert_pem),
                "key": str(tls.key_pem),
                "admin_token": admin_token,
                "clients": clients or [],
                "ttl_s": ttl_s or {},
            }
        )
    )
    argv = [str(toolchain.node_executable()), str(OP_SCRIPT), str(prefix), str(config)]
    log = folder / "op.log"
    with harness.served(argv, log, env=tls.env(), announced=ISSUER_LINE) as issuer:
        yield OpenIdProvider(issuer, admin_token, tls, log)


# -- the headless browser --------------------------------------------------------------


@dataclass
class Form:
    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    buttons: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    inputs: dict[str, str] = field(default_factory=dict[str, str])  # name -> type


class _Forms(HTMLParser):
    """The forms of a page: action, method, named fields with their values, submit buttons."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower()))
            self._open = True
            return
        if not self._open:
            return
        form = self.forms[-1]
        kind = a.get("type", "submit" if tag == "button" else "text").lower()
        if tag in ("input", "button") and kind == "submit":
            form.buttons.append((a.get("name", ""), a.get("value", "")))
        elif tag == "input" and a.get("name"):
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            form.fields.append((a["name"], a.get("value", "")))
            form.inputs[a["name"]] = kind

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = False


def parse_forms(page: str) -> list[Form]:
    """The forms of an HTML page (:mod:`html.parser`)."""
    parser = _Forms()
    parser.feed(page)
    parser.close()
    return parser.forms


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def same_endpoint(url: str, endpoint: str) -> bool:
    """Whether ``url`` is ``endpoint`` (scheme, host, port and path; any query)."""
    a, b = urlsplit(url), urlsplit(endpoint)
    return (a.scheme, a.hostname, a.port, a.path) == (b.scheme, b.hostname, b.port, b.path)


class LoopbackSecureCookies(http.cookiejar.DefaultCookiePolicy):
    """A browser's cookie rule for loopback: ``Secure`` cookies are sent to
    ``http://127.0.0.1`` and ``http://localhost`` too, which browsers count as secure
    contexts (W3C Secure Contexts, "potentially trustworthy origins"); elsewhere only
    over https."""

    def return_ok_secure(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        if urlsplit(request.get_full_url()).hostname in LOOPBACK_HOSTS:
            return True
        return super().return_ok_secure(cookie, request)


class LoginFailed(RuntimeError):
    """The sign-in did not reach the callback: a page with no form, an error status, or
    too many steps. ``status`` and ``page`` say where it stopped."""

    def __init__(self, message: str, status: int = 0, page: str = "") -> None:
        super().__init__(f"{message} (HTTP {status}): {page[:500]}")
        self.status = status
        self.page = page


@dataclass
class HeadlessBrowser:
    """Rule 3: sign in as ``login`` (any password), pressing the first submit button of
    each page, or the button whose name or value is in ``press``.

    ``visits`` records every URL requested, ``pages`` every HTML page's URL."""

    tls: Tls
    login: str = "alice"
    password: str = "any-password"
    press: tuple[str, ...] = ()
    visits: list[str] = field(default_factory=list[str])
    pages: list[str] = field(default_factory=list[str])
    http: httpx2.AsyncClient | None = None

    async def authorize(self, url: str, callback: str) -> str:
        """Follow ``url`` to the first redirect whose target is the endpoint ``callback``;
        return that target (the client's callback URL with ``code``/``state``/``iss`` or
        ``error``), never fetched. Raises :class:`LoginFailed`."""
        if self.http is None:
            jar = http.cookiejar.CookieJar(policy=LoopbackSecureCookies())
            self.http = self.tls.http(follow_redirects=False, cookies=jar)
        method, data = "GET", None
        for _ in range(MAX_STEPS):
            self.visits.append(url)
            status, headers, page = await self._fetch(method, url, data)
            if status in (301, 302, 303, 307, 308):
                target = urljoin(url, headers.get("location", ""))
                if same_endpoint(target, callback):
                    return target
                if status in (301, 302, 303):
                    method, data = "GET", None
                url = target
                continue
            if status != 200:
                raise LoginFailed("sign-in stopped at an error", status, page)
            self.pages.append(url)
            form = self._form(page, status)
            target = urljoin(url, form.action or url)
            if same_endpoint(target, callback):  # response_mode=form_post: the callback itself
                return target
            method = "POST" if form.method == "post" else "GET"
            data = self._fill(form)
            if method == "GET":
                url, data = str(httpx2.URL(target, params=data)), None
            else:
                url = target
        raise LoginFailed(f"no callback after {MAX_STEPS} steps", 0, "")

    async def _fetch(
        self, method: str, url: str, data: dict[str, str] | None
    ) -> tuple[int, httpx2.Headers, str]:
        """One request; the page read up to :data:`MAX_PAGE_BYTES` (rule 3)."""
        assert self.http is not None
        body = bytearray()
        async with self.http.stream(method, url, data=data) as answer:
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > MAX_PAGE_BYTES:
                    raise LoginFailed("a page over the size bound", answer.status_code, "")
            return answer.status_code, answer.headers, body.decode(errors="replace")

    def _form(self, page: str, status: int) -> Form:
        forms = parse_forms(page)
        if len(forms) != 1:
            raise LoginFailed(f"expected one form, found {len(forms)}", status, page)
        return forms[0]

    def _fill(self, form: Form) -> dict[str, str]:
        data = dict(form.fields)
        for name, kind in form.inputs.items():
            if kind in ("text", "email") and name in ("login", "username", "email"):
                data[name] = self.login
            elif kind == "password":
                data[name] = self.password
        chosen = next((b for b in form.buttons if b[0] in self.press or b[1] in self.press), None)
        if chosen is None and self.press and any(name for name, _ in form.buttons):
            # The page offers a choice and none is the one asked for: never guess.
            raise LoginFailed(f"no button {self.press} among {form.buttons}", 200, "")
        chosen = chosen or (form.buttons[0] if form.buttons else None)
        if chosen and chosen[0]:
            data[chosen[0]] = chosen[1]
        return data

    async def aclose(self) -> None:
        if self.http is not None:
            await self.http.aclose()
            self.http = None
