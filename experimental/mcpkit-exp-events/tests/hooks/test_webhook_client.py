"""The sender's HTTP client (:mod:`mcpkit.experimental.events.webhooks.sender` rules 3, 5
and 8): nothing a receiver answers is kept for the next POST (cookies), no compression
is negotiated, response headers are bounded, and delivery refuses an event loop the
client cannot run on. A real receiver: uvicorn over trustme TLS on 127.0.0.1."""

from __future__ import annotations

import ssl
import tempfile
from pathlib import Path

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hooks.hookkit import HOOK_HOST, free_socket, loopback_resolver, make_tls, serve
from mcpkit.experimental.events.webhooks import AddressPolicy
from mcpkit.experimental.events.webhooks.sender import MAX_RESPONSE_HEADERS, Sender

POLICY = AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver)


class Seen:
    """A receiver recording each request's headers; it answers 204 with a cookie and
    ``extra`` header fields."""

    def __init__(self, extra: int = 0) -> None:
        self.headers: list[dict[str, str]] = []
        self.extra = extra

    async def handle(self, request: Request) -> Response:
        await request.body()
        self.headers.append(dict(request.headers))
        response = Response(status_code=204)
        response.set_cookie("track", "peer-chosen")
        for i in range(self.extra):
            response.headers[f"x-extra-{i}"] = "v"
        return response


async def _posts(seen: Seen, n: int) -> list[tuple[int | None, str | None]]:
    app = Starlette(routes=[Route("/hooks/x", seen.handle, methods=["POST"])])
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp))
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context())
            url = f"https://{HOOK_HOST}:{port}/hooks/x"
            got = [await sender.post(url, b"{}", {}) for _ in range(n)]
            await sender.aclose()
    return [(g.status, g.error) for g in got]


@pytest.mark.anyio
async def test_a_cookie_the_receiver_sets_is_never_sent_back() -> None:
    seen = Seen()
    assert await _posts(seen, 2) == [(204, None), (204, None)]
    assert [h.get("cookie") for h in seen.headers] == [None, None]


@pytest.mark.anyio
async def test_no_compression_is_asked_for() -> None:
    seen = Seen()
    await _posts(seen, 1)
    assert "accept-encoding" not in seen.headers[0]


@pytest.mark.anyio
async def test_response_headers_past_the_bound_are_connection_refused() -> None:
    assert await _posts(Seen(extra=8), 1) == [(204, None)]
    assert await _posts(Seen(extra=MAX_RESPONSE_HEADERS + 1), 1) == [(None, "connection_refused")]


def test_delivery_refuses_a_non_asyncio_event_loop() -> None:
    # No loop at all (trio is not installed here; on trio asyncio has no running loop
    # either): the check raises, naming what is needed.
    with pytest.raises(RuntimeError, match="asyncio"):
        Sender.check_event_loop()

    async def on_asyncio() -> None:
        Sender.check_event_loop()

    anyio.run(on_asyncio, backend="asyncio")


@pytest.mark.parametrize("verify", [False, "/etc/ssl/certs/ca-certificates.crt", None])
def test_tls_verification_cannot_be_turned_off_or_misconfigured(verify: object) -> None:
    # Refused when made (the server's start-up), not at the first POST: False would send
    # signed events to whoever answers; a path (httpx's habit) failed only in delivery.
    with pytest.raises(ValueError, match="verify"):
        Sender(POLICY, verify=verify)  # type: ignore[arg-type]
    sender = Sender(POLICY)
    with pytest.raises(ValueError, match="verify"):
        sender.verify = verify  # type: ignore[assignment]


def test_a_context_that_skips_the_certificate_or_the_name_is_refused() -> None:
    no_name = ssl.create_default_context()
    no_name.check_hostname = False  # any valid certificate, for any name, would pass
    no_cert = ssl.create_default_context()
    no_cert.check_hostname = False
    no_cert.verify_mode = ssl.CERT_NONE
    for ctx in (no_name, no_cert):
        with pytest.raises(ValueError, match="verify"):
            Sender(POLICY, verify=ctx)
    assert Sender(POLICY, verify=ssl.create_default_context()).verify is not True


@pytest.mark.anyio
async def test_an_internationalized_host_is_sent_as_its_a_label() -> None:
    # Host header, SNI and the resolver all see the ASCII form (IDNA 2008, UTS 46), never
    # UTF-8 bytes in the Host header.
    a_label = "xn--hks-snaa.test"
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    seen = Seen()
    app = Starlette(routes=[Route("/hooks/x", seen.handle, methods=["POST"])])
    with tempfile.TemporaryDirectory() as tmp:
        tls = make_tls(Path(tmp), a_label)
        async with serve(app, tls=tls) as port:
            policy = AddressPolicy(allow=["127.0.0.0/8"], resolver=resolve)
            sender = Sender(policy, verify=tls.client_context())
            got = await sender.post(f"https://HÖöks.test:{port}/hooks/x", b"{}", {})
            await sender.aclose()
    assert (got.status, got.error) == (204, None)
    assert asked == [a_label]
    assert seen.headers[0]["host"] == f"{a_label}:{port}"


@pytest.mark.anyio
async def test_a_proxy_or_netrc_in_the_environment_is_never_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A proxy would connect on its own, past the address check (rule 3).
    proxy = free_socket()
    proxy.listen()
    proxy.setblocking(False)
    proxy_url = f"http://127.0.0.1:{proxy.getsockname()[1]}"
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy_url)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine {HOOK_HOST} login user password netrc-secret\n")
    monkeypatch.setenv("NETRC", str(netrc))
    seen = Seen()
    assert await _posts(seen, 1) == [(204, None)]
    assert "authorization" not in seen.headers[0]
    with pytest.raises(BlockingIOError):
        proxy.accept()  # nobody connected to the proxy
    proxy.close()
