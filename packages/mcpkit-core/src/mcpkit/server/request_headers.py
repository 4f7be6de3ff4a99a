"""The HTTP request's headers, as a handler may read them: :meth:`Context.http_headers
<mcpkit.server.context.Context.http_headers>`.

Rules:
1. Over Streamable HTTP the result maps each header name, lower-cased, to its value;
   a header sent more than once is one entry, its values joined with ``", "`` (RFC 9110
   §5.3). Over stdio and in memory there is no HTTP request: the result is empty (tell
   the transports apart with ``ctx.transport.get("name")``: ``"streamable-http"`` over
   HTTP).
2. Credentials are left out unless named in ``include``: ``Authorization``,
   ``Proxy-Authorization``, ``Cookie``, ``Mcp-Session-Id`` (a session id lets its holder
   act in the session), and any header whose name, with ``_`` read as ``-``, contains
   one of :data:`CREDENTIAL_MARKERS` (``X-Api-Key``, ``X-Api_Key``, ``X-Auth-Token``,
   ``Cf-Access-Jwt-Assertion``, ``DPoP``, ``Ocp-Apim-Subscription-Key``,
   ``X-Forwarded-Client-Cert``, ...): when in doubt a header is left out. The
   authenticated caller is ``ctx.principal`` (the auth extension), not the raw header.
   ``include`` is an iterable of names (``include=["authorization"]``); a bare string
   raises ``TypeError`` (it would otherwise be read letter by letter and match nothing).
3. Headers are peer data, so the result is bounded: headers are taken in the order
   received while the running total of name and value bytes stays within ``max_bytes``
   (default :data:`DEFAULT_MAX_BYTES`) and at most :data:`MAX_HEADERS` names; the rest
   are left out. Values are decoded as Latin-1 (the bytes as sent, RFC 9110 §5.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

__all__ = [
    "CREDENTIAL_HEADERS",
    "CREDENTIAL_MARKERS",
    "DEFAULT_MAX_BYTES",
    "MAX_HEADERS",
    "is_credential",
    "read",
]

DEFAULT_MAX_BYTES = 16_384
MAX_HEADERS = 100
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "mcp-session-id"}
)
CREDENTIAL_MARKERS = (
    "auth",
    "token",
    "secret",
    "pass",  # password, passwd, passphrase, x-pass
    "cookie",
    "session",
    "key",  # api-key, apikey, access-key, subscription-key, functions-key, private-key
    "signature",
    "jwt",
    "assertion",
    "credential",
    "bearer",
    "dpop",
    "private",
    "cert",  # client certificates forwarded by proxies
    "csrf",
    "xsrf",
)


def is_credential(name: str) -> bool:
    """Rule 2: whether the lower-cased header ``name`` may carry a credential."""
    name = name.replace("_", "-")
    return name in CREDENTIAL_HEADERS or any(m in name for m in CREDENTIAL_MARKERS)


def _raw(headers: Any) -> list[tuple[bytes, bytes]]:
    """The ``(name, value)`` byte pairs of a Starlette ``Headers`` or an ASGI list."""
    raw: Any = getattr(headers, "raw", headers)
    if not isinstance(raw, list):
        return []
    out: list[tuple[bytes, bytes]] = []
    for pair in cast(list[Any], raw):
        if isinstance(pair, tuple) and len(cast(tuple[Any, ...], pair)) == 2:
            name, value = cast(tuple[Any, Any], pair)
            if isinstance(name, bytes) and isinstance(value, bytes):
                out.append((name, value))
    return out


def read(
    transport: Mapping[str, Any], include: Iterable[str] = (), max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, str]:
    """Rules 1-3 over a context's transport facts (``transport["headers"]``).

    Raises ``TypeError`` when ``include`` is a string or bytes rather than an iterable
    of names (rule 2)."""
    if isinstance(include, str | bytes):
        raise TypeError(
            f"http_headers(include={include!r:.60}): include is a list of header names;"
            f" write include=[{include!r:.60}]"
        )
    wanted = {n.lower().replace("_", "-") for n in include}
    out: dict[str, str] = {}
    total = 0
    for raw_name, raw_value in _raw(transport.get("headers")):
        name = raw_name.decode("latin-1").lower()
        if is_credential(name) and name.replace("_", "-") not in wanted:
            continue
        value = raw_value.decode("latin-1")
        total += len(raw_name) + len(raw_value)
        if total > max_bytes or (name not in out and len(out) >= MAX_HEADERS):
            break
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out
