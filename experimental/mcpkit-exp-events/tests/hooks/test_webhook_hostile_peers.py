"""Hostile peers against the webhook machinery (SEP-3415 §Webhook security): a receiver
that trickles its answer, a server that sends huge ``webhook-id`` values, callback paths
that a normalising origin maps out of the declared prefix, documents and key sets that
make a library raise, and one trusted server's key set breaking another's rotation.
Real servers on 127.0.0.1 (uvicorn, trustme TLS)."""

from __future__ import annotations

import contextlib
import json
import socket
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from hooks.hookkit import HOOK_HOST, TLS, deployment, loopback_resolver, make_tls, serve
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookMessage,
    WebhookReceiver,
    WellKnownPolicy,
    generate_secret,
)
from mcpkit.experimental.events.webhooks.identity import ServerIdentity, ServerKeys
from mcpkit.experimental.events.webhooks.sender import Sender
from mcpkit.experimental.events.webhooks.signing import signed_headers
from mcpkit.experimental.events.webhooks.ssrf import AddressRefused
from mcpkit.experimental.events.webhooks.wellknown import ReceiverDocuments
from mcpkit.experimental.events.wire import (
    CALLBACK_ENDPOINT_ERROR,
    EVENTS_SUBSCRIBE,
    JWKS_PATH,
    WELL_KNOWN_RECEIVER_PATH,
)

pytestmark = pytest.mark.anyio

POLICY = AddressPolicy(allow=["127.0.0.0/8", "::1/128"], resolver=loopback_resolver)


def _tls(tmp: str, *names: str) -> TLS:
    return make_tls(Path(tmp), *names)


# -- a receiver trickling its answer holds a POST for hours --------------------------------


async def _trickle(request: Request) -> Response:
    await request.body()

    async def drip() -> AsyncIterator[bytes]:
        for _ in range(100_000):
            yield b" "
            await anyio.sleep(0.1)

    return StreamingResponse(drip(), media_type="application/json")


async def test_a_trickled_response_ends_the_post_at_request_timeout_s() -> None:
    """Each read is quicker than the timeout, so per-read timeouts never fire: the
    challenge or delivery POST must still end after ``request_timeout_s`` in all."""
    with tempfile.TemporaryDirectory() as tmp:
        tls = _tls(tmp)
        app = Starlette(routes=[Route("/hooks/x", _trickle, methods=["POST"])])
        async with serve(app, tls=tls) as port:
            sender = Sender(POLICY, verify=tls.client_context(), request_timeout_s=0.5)
            started = time.monotonic()
            with anyio.fail_after(10):  # 20x the bound; unfixed: 4096 bytes x 0.1 s
                got = await sender.post(f"https://{HOOK_HOST}:{port}/hooks/x", b"{}", {})
            assert got.error == "timeout"
            assert got.status is None
            assert time.monotonic() - started < 10
            await sender.aclose()
