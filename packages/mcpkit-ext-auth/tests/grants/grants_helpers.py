"""Loopback servers for the grant tests: uvicorn on 127.0.0.1 serving small Starlette
token endpoints that record what they receive and answer as a test tells them to."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from loopback import serve_at
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.ext.auth.client.grant import ClientRegistration, GrantContext

JSON = dict[str, Any]


def serve(app: Any) -> contextlib.AbstractAsyncContextManager[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yields the base URL."""
    return serve_at(lambda _base: app, lifespan="off")


@dataclass
class Seen:
    """One request a recording endpoint received."""

    path: str
    headers: dict[str, str]
    form: dict[str, str]


Answer = Callable[[Seen], Awaitable[Response] | Response]


def token_answer(token: str = "at-1", **extra: Any) -> Response:
    return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 60, **extra})


@dataclass
class Endpoints:
    """Recording token endpoints: ``/token`` (the authorization server) and
    ``/idp/token`` (an enterprise IdP); ``answers[path]`` decides each answer."""

    seen: list[Seen] = field(default_factory=list)
    answers: dict[str, Answer] = field(default_factory=dict)

    def app(self) -> Starlette:
        async def endpoint(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            seen = Seen(request.url.path, {k.lower(): v for k, v in request.headers.items()}, form)
            self.seen.append(seen)
            answer = self.answers.get(request.url.path)
            if answer is None:
                return token_answer()
            result = answer(seen)
            return await result if isinstance(result, Awaitable) else result

        return Starlette(
            routes=[
                Route("/token", endpoint, methods=["POST"]),
                Route("/idp/token", endpoint, methods=["POST"]),
            ]
        )

    def at(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]


@dataclass
class Loopback:
    base: str
    endpoints: Endpoints
    http: httpx2.AsyncClient

    def context(self, **metadata: Any) -> GrantContext:
        """A grant context for the loopback authorization server (issuer = base URL)."""
        server_metadata: JSON = {"issuer": self.base, "token_endpoint": f"{self.base}/token"}
        server_metadata.update(metadata)
        return GrantContext(
            http=self.http,
            resource_metadata={"resource": f"{self.base}/mcp"},
            server_metadata=server_metadata,
            resource=f"{self.base}/mcp",
            scopes=["mcp:read"],
            registration=ClientRegistration(client_id="unused"),
        )
