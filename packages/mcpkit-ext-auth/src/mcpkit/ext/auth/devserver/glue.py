"""The thin glue between Starlette and Authlib's framework-agnostic server components.

Authlib ships no Starlette integration; this module supplies the three hooks an
integration owes ``authlib.oauth2.rfc6749.AuthorizationServer`` (``create_oauth2_request``,
``create_json_request``, ``handle_response``) using only Authlib's public API.

Rules:
1. Request bodies are read up to ``limits.max_request_body_bytes`` (larger: 413); the
   token endpoint takes only ``application/x-www-form-urlencoded``, the registration
   endpoint only ``application/json`` (else 400 ``invalid_request`` /
   ``invalid_client_metadata``).
2. Form and query parameters keep every value (``datalist``), so Authlib's
   "parameter included more than once" checks and repeated RFC 8707 ``resource`` values
   work; ``data`` holds the first value of each.
3. Authlib's ``(status, body, headers)`` becomes a :class:`Reply` (its ``location`` is
   writable, as Authlib's RFC 9207 ``iss`` hook expects), then a Starlette response: a
   dict body is JSON, headers are kept (``Cache-Control: no-store`` on token responses).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast
from urllib.parse import parse_qsl

from authlib.oauth2.rfc6749 import JsonRequest, OAuth2Request
from authlib.oauth2.rfc6749.requests import JsonPayload, OAuth2Payload
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = [
    "BodyTooLarge",
    "FormRequest",
    "JsonBodyRequest",
    "Reply",
    "error_response",
    "read_body",
    "to_starlette",
]


class BodyTooLarge(Exception):
    """Rule 1: the body exceeds the bound (answered 413)."""


async def read_body(request: Request, max_bytes: int) -> bytes:
    """Rule 1: the request body, at most ``max_bytes`` (:class:`BodyTooLarge`)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


class _FormPayload(OAuth2Payload):
    """Rule 2."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        # kind-ok: unbounded-table one request's form fields, body read within max_bytes
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in items:
            self._datalist[key].append(value)
        self._data = {key: values[0] for key, values in self._datalist.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class _RequestBase(Protocol):
    """Authlib's ``OAuth2Request`` constructor without a body, typed (typeshed's stub
    leaves ``body`` untyped in one of its overloads)."""

    def __init__(self, method: str, uri: str, *, headers: Mapping[str, str]) -> None: ...


class FormRequest(OAuth2Request):
    """An Authlib ``OAuth2Request`` over query or form parameters (rule 2). ``dpop_jkt``
    is set by the token route when a DPoP proof verified."""

    def __init__(
        self, method: str, uri: str, headers: Mapping[str, str], items: Iterable[tuple[str, str]]
    ) -> None:
        cast(_RequestBase, super()).__init__(method, uri, headers=headers)
        self.params = _FormPayload(items)
        """The parameters, typed (``payload`` is the same object, for Authlib)."""
        self.payload = self.params
        self.dpop_jkt: str | None = None

    @property
    def form(self) -> dict[str, str]:
        return self.params.data

    @property
    def args(self) -> dict[str, str | None]:
        return cast(dict[str, str | None], self.params.data)

    @staticmethod
    def parse_form(body: bytes) -> list[tuple[str, str]]:
        return parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)


class _JsonBody(JsonPayload):
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


class JsonBodyRequest(JsonRequest):
    """An Authlib ``JsonRequest`` (client registration, RFC 7591)."""

    def __init__(
        self, method: str, uri: str, headers: Mapping[str, str], data: dict[str, Any]
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = _JsonBody(data)


@dataclass
class Reply:
    """Rule 3: Authlib's response triple; ``location`` mirrors the ``Location`` header."""

    status: int
    body: Any
    headers: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())

    @property
    def location(self) -> str | None:
        for name, value in self.headers:
            if name.lower() == "location":
                return value
        return None

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(n, v) for n, v in self.headers if n.lower() != "location"]
        self.headers.append(("Location", value))


def to_starlette(reply: Reply) -> Response:
    """Rule 3."""
    headers = {name: value for name, value in reply.headers if name.lower() != "content-type"}
    body: Any = reply.body
    if isinstance(body, dict):
        content = json.dumps(body, separators=(",", ":")).encode()
        return Response(content, reply.status, headers, media_type="application/json")
    return Response(str(body or ""), reply.status, headers)


def error_response(status: int, error: str, description: str) -> Response:
    """An RFC 6749 section 5.2 error body with ``Cache-Control: no-store``."""
    return JSONResponse(
        {"error": error, "error_description": description},
        status,
        headers={"cache-control": "no-store"},
    )
