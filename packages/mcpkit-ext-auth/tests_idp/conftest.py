"""Fixtures of the ext-auth-idp tests (run by ``uv run nox -s ext-auth-idp``): one TLS CA
and one real OpenID Provider per test session, a fresh headless browser per test.

The helpers are in :mod:`idp` (this directory is on ``sys.path``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from idp import HeadlessBrowser, OpenIdProvider, Tls, run_op


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tls]:
    """The session's CA and the certificate of 127.0.0.1 (``Tls``). For the session,
    ``SSL_CERT_FILE`` names this CA, so every HTTPS client in the test process built with
    the default trust (httpx2's ``verify=True``: e.g. ``protect()``'s JWKS fetch) trusts
    the loopback servers, as a deployment trusts its real CA."""
    found = Tls.create(tmp_path_factory.mktemp("tls"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SSL_CERT_FILE", str(found.ca_pem))
        yield found


@pytest.fixture(scope="session")
def op(tls: Tls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    """The real OpenID Provider (npm oidc-provider), shared by the session's tests: each
    test registers its own client (``op.register_client``) and signs in as its own
    account, so revoking (``op.revoke(account)``) touches that test alone."""
    with run_op(tls, tmp_path_factory.mktemp("op")) as provider:
        yield provider


@pytest.fixture
async def browser(tls: Tls) -> AsyncIterator[HeadlessBrowser]:
    """A headless browser with an empty cookie jar, signing in as a fresh account."""
    import secrets

    driver = HeadlessBrowser(tls, login=f"user-{secrets.token_hex(4)}")
    try:
        yield driver
    finally:
        await driver.aclose()
