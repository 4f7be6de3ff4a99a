"""The redirect handlers: the loopback receiver a browser comes back to, and the
headless handler that follows the authorization endpoint's redirect itself."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from oauth_peer import running

from mcpkit.client import Client
from mcpkit.ext.auth.client import (
    AuthorizationCode,
    HeadlessRedirect,
    LoopbackRedirect,
    OAuthError,
    OAuthProvider,
)

pytestmark = pytest.mark.anyio


async def test_loopback_receiver_gets_the_code_the_browser_brings_back() -> None:
    opened: list[str] = []

    async def browser(url: str) -> None:  # what a browser does: follow the redirects
        async with httpx2.AsyncClient(follow_redirects=True, timeout=10) as http:
            response = await http.get(url)
            assert response.status_code == 200
            assert "Authorization complete" in response.text

    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            opened.append(url)
            tg.start_soon(browser, url)

        redirect = LoopbackRedirect(timeout_s=20, open_url=open_url)
        assert redirect.redirect_uri.startswith("http://127.0.0.1:")
        try:
            async with running() as s:
                auth = OAuthProvider(AuthorizationCode(redirect))
                with anyio.fail_after(30):
                    async with Client(s.mcp_url, mode="legacy", auth=auth) as client:
                        await client.list_tools()
        finally:
            redirect.close()
    assert len(opened) == 1
    assert s.at("/authorize")[0].query["redirect_uri"] == redirect.redirect_uri
    assert s.at("/token")[0].form["redirect_uri"] == redirect.redirect_uri


async def test_loopback_receiver_wait_is_bounded_and_ignores_other_paths() -> None:
    redirect = LoopbackRedirect(timeout_s=0.5, open_url=lambda url: None)
    try:
        async with httpx2.AsyncClient(timeout=10) as http:

            async def stray() -> None:
                response = await http.get(f"http://127.0.0.1:{redirect.port}/favicon.ico")
                assert response.status_code == 404

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(stray)
                    with pytest.raises(OAuthError) as caught:
                        # kind-ok: fixed-port open_url ignores it, never fetched
                        await redirect.authorize("http://127.0.0.1:9/authorize", http)
    finally:
        redirect.close()
    assert caught.value.error == "access_denied"


async def test_headless_handler_refuses_an_endpoint_that_does_not_redirect() -> None:
    async with running() as s, httpx2.AsyncClient(timeout=10) as http:
        # kind-ok: fixed-port a redirect URI, matched and never fetched
        handler = HeadlessRedirect("http://127.0.0.1:9/callback")
        with pytest.raises(OAuthError, match="HTTP 404"):
            await handler.authorize(s.base + "/nowhere", http)


async def test_loopback_receiver_ignores_a_callback_with_another_state() -> None:
    """A forged callback (any web page can make the browser GET a loopback port) used
    to end the wait: the flow then failed, or a code without the state was taken."""
    redirect = LoopbackRedirect(timeout_s=20, open_url=lambda url: None)
    callback = f"http://127.0.0.1:{redirect.port}/callback"
    try:
        async with httpx2.AsyncClient(timeout=10) as http:

            async def browser() -> None:
                for query in ("code=evil&state=wrong", "error=access_denied", "code=evil"):
                    forged = await http.get(f"{callback}?{query}")
                    assert forged.status_code == 404
                good = await http.get(f"{callback}?code=good&state=s1")
                assert good.status_code == 200

            with anyio.fail_after(15):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(browser)
                    # kind-ok: fixed-port open_url ignores it, never fetched
                    params = await redirect.authorize("http://127.0.0.1:9/authorize?state=s1", http)
    finally:
        redirect.close()
    assert params == {"code": "good", "state": "s1"}
