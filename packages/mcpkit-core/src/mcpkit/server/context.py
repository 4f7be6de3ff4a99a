"""The handler context: what a tool, prompt, resource or method handler can see and do.

One :class:`Context` exists per inbound request, on either protocol era. It hides the
era from handler code: ``await ctx.elicit(...)`` is a live ``elicitation/create``
round trip on a handshake-era session and an MRTR input request (SEP-2322) on a
2026-07-28 request, with the same return value.

Rules:
1. Client capabilities come from the session (handshake era) or from this request's
   ``_meta`` alone (2026-07-28); nothing is inferred from other requests.
2. Progress is sent only when the request carried ``_meta.progressToken``, with that
   token's exact JSON value, with strictly increasing ``progress``, and never after the
   request is answered (spec ``basic/utilities/progress``).
3. Log messages are filtered by the level the client set (``logging/setLevel`` on a
   session; ``_meta["io.modelcontextprotocol/logLevel"]`` on a 2026-07-28 request, where
   nothing is sent unless that key is present).
4. Reverse calls (sampling, elicitation, roots) are refused with -32021 and
   ``data.requiredCapabilities`` when the client did not declare the capability, and
   are never sent in that case. Form elicitation schemas must be flat (T4): an object of
   primitive properties, else ``ValueError`` before anything is sent.
5. Notifications and reverse calls go to the request's own channel, so over HTTP they
   travel on the request's stream.
6. An ``input_provider`` set on the context (an extension hook) replaces both era
   strategies for obtaining client input; capability checks (rule 4) still apply.
7. Every answer is checked against its request before the handler sees it
   (:mod:`mcpkit.server.answers`): a bad one raises ``InputResponseError`` (-32602). A
   form's ``requestedSchema`` must also compile as JSON Schema, else ``ValueError``
   before anything is sent.
8. A live reverse call (handshake era) waits at most its timeout: the call's
   ``timeout_s=``, else ``Limits.elicitation_timeout_s`` (600 s) for elicitation and
   ``Limits.sampling_timeout_s`` / ``Limits.roots_timeout_s`` (60 s) for sampling and
   roots; any other method (an extension's own request through :meth:`request_input`)
   waits at most ``Limits.elicitation_timeout_s``, the longest of them. Past it
   :class:`~mcpkit.core.engine.RequestTimeoutError` is raised (the
   client gets ``notifications/cancelled``); when the session or connection ends
   first, :class:`~mcpkit.core.engine.PeerClosedError` is raised at once. A tool that
   does not catch either answers ``isError: true`` with the message.
9. On the handshake era, when the transport says it cannot carry server-to-client
   requests (``transport["requests_unavailable"]``: why, e.g. a stateless HTTP
   endpoint, JSON-response mode), a reverse call is refused first with -32600 naming
   that reason: without a session the client's capabilities are not even known, so
   rule 4's "did not declare" would be wrong.
10. ``ctx.elicit(message, Type)`` with a pydantic model, dataclass or TypedDict sends the
    form :func:`mcpkit.core.forms.form_schema` derives (``TypeError`` naming the field
    before anything is sent when the type cannot be a form) and returns an
    :class:`~mcpkit.core.forms.Elicited` (``action``, ``data``: an instance of the type
    when accepted). An accepted answer that does not validate as the type is the
    invalid-answer error of rule 7 (``InputResponseError``, -32602). A schema dict keeps
    returning the ElicitResult dict.
11. ``ctx.sample()`` returns a ``CreateMessageResult`` and ``ctx.list_roots()`` a list of
    ``Root`` models; both also read like the dicts they used to be (``result["content"]``,
    ``root["uri"]``; :mod:`mcpkit.core.types._dictview`).
12. ``ctx.http_headers()`` reads the HTTP request's headers without credentials unless
    asked for by name, bounded in bytes; it is empty over stdio and in memory
    (:mod:`mcpkit.server.request_headers`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from mcpkit.core import meta as M
from mcpkit.core.extensions import peer_supports_extension
from mcpkit.core.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JSONRPCError,
    RequestId,
)
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import TRACEPARENT, TraceContext, from_meta
from mcpkit.core.versions import Era
from mcpkit.server.answers import InputResponseError, check_answer
from mcpkit.server.mrtr import InputRequired
from mcpkit.server.request_headers import DEFAULT_MAX_BYTES
from mcpkit.server.view import ServerView

if TYPE_CHECKING:
    from mcpkit.core.engine import Channel
    from mcpkit.core.forms import Elicited
    from mcpkit.core.types import CreateMessageResult, ModelPreferences, Root, SamplingMessage
    from mcpkit.server.lifecycle import LegacySession

__all__ = ["LOG_LEVELS", "Context", "Elicited", "InputProvider", "LogLevel", "check_flat_schema"]

T = TypeVar("T")
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: dict[str, int] = {
    name: i
    for i, name in enumerate(
        ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    )
}
InputProvider = Callable[["Context", dict[str, JSON]], Awaitable[dict[str, JSON]]]
"""Replaces how a context obtains client input: ``(ctx, {key: {method, params}})`` ->
``{key: result}``. Extensions set it (e.g. a task waiting for ``tasks/update``)."""
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})
_TIMEOUT_FIELD = {
    "elicitation/create": "elicitation_timeout_s",
    "sampling/createMessage": "sampling_timeout_s",
    "roots/list": "roots_timeout_s",
}
_INPUT_CAPABILITY = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

logger = logging.getLogger("mcpkit.server")
if TYPE_CHECKING:
    from typing_extensions import TypeVar

    LifespanT = TypeVar("LifespanT", default=Any)
else:  # typing.TypeVar takes default= only from 3.13; a bare Context means Context[Any]
    from typing import TypeVar

    LifespanT = TypeVar("LifespanT")


def check_flat_schema(schema: Mapping[str, Any]) -> None:
    """Refuse a form-elicitation ``requestedSchema`` that is not flat (T4, spec
    ``client/elicitation``): a top-level object whose properties are primitives
    (string, number, integer, boolean, enums). Raises ``ValueError`` naming the field."""
    if schema.get("type") != "object":
        raise ValueError("requestedSchema must have type 'object'")
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        raise ValueError("requestedSchema.properties must be an object")
    for name, raw in cast(Mapping[str, Any], props).items():
        prop = as_object(raw)
        if prop is None:
            raise ValueError(f"requestedSchema property {name!r} must be an object")
        ptype = prop.get("type")
        if ptype == "array":
            items = prop.get("items", {})
            # multi-select enums (SEP-1330) are arrays of enum strings
            if isinstance(items, Mapping) and ("enum" in items or "anyOf" in items):
                continue
            raise ValueError(
                f"requestedSchema property {name!r}: arrays are only allowed as "
                "multi-select enums (SEP-1330)"
            )
        if ptype not in _PRIMITIVE_TYPES:
            raise ValueError(
                f"requestedSchema property {name!r} has type {ptype!r}; form elicitation "
                "allows only string, number, integer, boolean and enums"
            )


class Context(Generic[LifespanT]):
    """Per-request facts and actions for handlers.

    Attributes (read-only by convention):

    - ``request_id``: the JSON-RPC id, exact type preserved.
    - ``method`` / ``params``: the request as received (``params`` is a dict).
    - ``era``: ``"legacy"`` (handshake) or ``"modern"`` (2026-07-28).
    - ``protocol_version``: negotiated (legacy) or declared in ``_meta`` (modern).
    - ``client_capabilities`` / ``client_info``: see rule 1.
    - ``principal``: the authenticated principal, if a transport set one.
    - ``transport``: transport facts (e.g. HTTP headers) as a dict.
    - ``state``: scratch space shared by middleware and the handler for this request.
    """

    __slots__ = (
        "_answers",
        "_closed",
        "_input_seq",
        "_last_progress",
        "asked",
        "channel",
        "client_capabilities",
        "client_info",
        "era",
        "input_provider",
        "log_level",
        "method",
        "params",
        "principal",
        "protocol_version",
        "request_id",
        "server",
        "session",
        "state",
        "transport",
    )
    __mcpkit_context__ = True
    """Parameters annotated with this class receive the request's context
    (:data:`mcpkit.server.typed.CONTEXT_MARKER`)."""

    def __init__(
        self,
        server: ServerView,
        *,
        request_id: RequestId,
        method: str,
        params: JSON | None,
        era: Era,
        protocol_version: str,
        client_capabilities: JSON,
        client_info: JSON | None,
        channel: Channel | None,
        session: LegacySession | None = None,
        log_level: str | None = None,
        principal: Any = None,
        transport: JSON | None = None,
        answers: JSON | None = None,
    ) -> None:
        self.server = server
        self.request_id = request_id
        self.method = method
        self.params: JSON = params if params is not None else {}
        self.era: Era = era
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.channel = channel
        self.session = session
        self.log_level = log_level
        self.principal = principal
        self.transport: JSON = transport if transport is not None else {}
        # kind-ok: unbounded-table one request's lifetime, keys chosen by server code
        self.state: JSON = {}
        self._answers: JSON = answers if answers is not None else {}
        # kind-ok: unbounded-table one request's input keys, chosen by server code
        self.asked: set[str] = set()
        self.input_provider: InputProvider | None = None
        self._input_seq = 0
        self._last_progress: float | None = None
        self._closed = False

    # -- facts ---------------------------------------------------------------------
    @property
    def lifespan(self) -> LifespanT:
        """What the server's lifespan yielded (``Server(lifespan=...)``; ``app`` rule 9).
        Annotate the parameter ``ctx: Context[AppState]`` to type it."""
        return self.server.lifespan_state

    @property
    def meta(self) -> JSON:
        """The request's ``_meta`` object (empty dict when absent)."""
        m = as_object(self.params.get("_meta"))
        return m if m is not None else {}

    @property
    def trace_context(self) -> TraceContext | None:
        """The W3C trace context this request carried in ``_meta`` (SEP-414; None when
        absent or malformed). The context the handler runs in, which is the tracer's
        span when one is installed, is :func:`mcpkit.core.tracing.current`."""
        meta = self.meta
        if TRACEPARENT not in meta:
            return None
        limits = self.server.limits
        return from_meta(
            meta,
            max_tracestate_bytes=limits.max_tracestate_bytes,
            max_baggage_bytes=limits.max_baggage_bytes,
        )

    @property
    def progress_token(self) -> str | int | None:
        token = self.meta.get(M.PROGRESS_TOKEN)
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    @property
    def answers(self) -> Mapping[str, JSON]:
        """Client input already available to this request, by key (read-only): on
        2026-07-28 the ``inputResponses`` plus the answers carried in ``requestState``.
        Extensions that resume a handler elsewhere (e.g. as a task) hand these on."""
        return MappingProxyType(self._answers)

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared a top-level capability (``"sampling"``, ...)."""
        return self.client_capabilities.get(capability) is not None

    def http_headers(
        self, *, include: Iterable[str] = (), max_bytes: int = DEFAULT_MAX_BYTES
    ) -> dict[str, str]:
        """The HTTP request's headers (rule 12): lower-cased name to value, repeated
        headers joined with ``", "``; empty over stdio and in memory. Credentials
        (``Authorization``, ``Cookie``, ``Proxy-Authorization``, ``Mcp-Session-Id``,
        names containing ``token``, ``secret``, ``key``, ``jwt``, ...) only when named in
        ``include``, a list of names (a bare string raises ``TypeError``). At most
        ``max_bytes`` bytes of names and values, 100 headers
        (:mod:`mcpkit.server.request_headers`)."""
        from mcpkit.server.request_headers import read

        return read(self.transport, include, max_bytes)

    def client_supports_extension(self, extension_id: str) -> bool:
        """Whether the client declared ``extension_id`` in ``capabilities.extensions``."""
        return peer_supports_extension(self.client_capabilities, extension_id)

    def close(self) -> None:
        """Mark the request answered: later progress and logs are dropped (rule 2)."""
        self._closed = True

    async def close_stream(self, retry_ms: int | None = None) -> bool:
        """Ask the transport to close this request's connection now, keeping its stream
        resumable (handshake-era streamable HTTP with an event store, SEP-1699): the
        client reconnects after ``retry_ms`` milliseconds (transport default when None)
        and receives what the handler sends afterwards. Returns False (and does nothing)
        where the transport cannot do that."""
        close = self.transport.get("close_stream")
        if close is None:
            return False
        return bool(await close(retry_ms))

    # -- notifications -------------------------------------------------------------
    async def notify(self, method: str, params: JSON | None = None) -> None:
        """Send a notification related to this request (rule 5). Extension surface."""
        if self._closed or self.channel is None:
            return
        await self.channel.notify(method, params)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (rule 2). ``progress`` must increase; a value
        not above the previous one is dropped."""
        token = self.progress_token
        if token is None or self._closed:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            logger.debug("dropped non-increasing progress %r for %r", progress, token)
            return
        self._last_progress = progress
        params: JSON = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)

    def log_enabled(self, level: str) -> bool:
        threshold = self.log_level
        if threshold is None:
            return self.era == "legacy"
        return LOG_LEVELS.get(level, 0) >= LOG_LEVELS.get(threshold, 0)

    async def log(self, level: LogLevel, data: Any, logger_name: str | None = None) -> None:
        """Send ``notifications/message`` if the client's level admits it (rule 3)."""
        if not self.log_enabled(level):
            return
        params: JSON = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        await self.notify("notifications/message", params)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    # -- client input (reverse calls / MRTR) ----------------------------------------
    def _require(self, method: str, params: JSON) -> None:
        cap = _INPUT_CAPABILITY.get(method)
        if cap is None:
            return
        caps = self.client_capabilities
        missing: JSON | None = None
        if caps.get(cap) is None:
            missing = {cap: {}}
        elif method == "elicitation/create":
            mode = params.get("mode", "form")
            decl = as_object(caps.get("elicitation")) or {}
            # An empty elicitation capability means form mode only (2025-11-25).
            if mode == "url" and "url" not in decl:
                missing = {"elicitation": {"url": {}}}
            elif mode == "form" and decl and "form" not in decl:
                missing = {"elicitation": {"form": {}}}
        elif method == "sampling/createMessage" and params.get("tools") is not None:
            sampling = as_object(caps.get("sampling")) or {}
            if "tools" not in sampling:
                missing = {"sampling": {"tools": {}}}
        if missing is not None:
            raise JSONRPCError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"{method} needs the client capability {next(iter(missing))!r}, which the "
                "client did not declare",
                {"requiredCapabilities": missing},
            )

    def _next_key(self, method: str) -> str:
        self._input_seq += 1
        short = {
            "elicitation/create": "elicit",
            "sampling/createMessage": "sample",
            "roots/list": "roots",
        }.get(method, "input")
        return f"{short}-{self._input_seq}"

    def reverse_timeout_s(self, method: str, timeout_s: float | None = None) -> float:
        """Seconds a live reverse call of ``method`` may wait (rule 8): ``timeout_s``
        when given, else the server's ``Limits`` field for the method
        (``elicitation_timeout_s`` for methods no limit names)."""
        if timeout_s is not None:
            return timeout_s
        field = _TIMEOUT_FIELD.get(method, "elicitation_timeout_s")
        return float(getattr(self.server.limits, field))

    async def request_input(
        self, requests: Mapping[str, JSON], *, timeout_s: float | None = None
    ) -> dict[str, JSON]:
        """Ask the client for several inputs at once; returns results by key.

        ``requests`` maps keys to ``{"method", "params"}``. Legacy era: each is sent as
        a live request on this request's channel, waiting at most ``timeout_s`` seconds
        (default per method, rule 8; raises ``RequestTimeoutError`` past it,
        ``PeerClosedError`` when the session ends). 2026-07-28: answered from
        ``inputResponses``/``requestState``, or the handler is suspended with an
        ``InputRequired`` listing the missing keys (SEP-2322); nothing waits.

        Every answer is checked against its request first (rule 7): raises
        ``InputResponseError`` (-32602) for one that does not match.
        """
        unavailable = self.transport.get("requests_unavailable")
        if isinstance(unavailable, str) and self.era == "legacy" and self.input_provider is None:
            method = next((str(r.get("method")) for r in requests.values()), "input")
            raise JSONRPCError(  # rule 9
                INVALID_REQUEST,
                f"{method}: cannot send a server-to-client request on this response: {unavailable}",
            )
        for req in requests.values():
            self._require(req["method"], req.get("params") or {})
        self.asked.update(requests)
        if self.input_provider is not None:
            got = await self.input_provider(self, dict(requests))
            return {
                k: check_answer(k, requests[k], v) if k in requests else v for k, v in got.items()
            }
        if self.era == "modern":
            found = {
                k: check_answer(k, req, self._answers[k])
                for k, req in requests.items()
                if k in self._answers
            }
            if len(found) < len(requests):
                raise InputRequired({k: dict(v) for k, v in requests.items() if k not in found})
            return found
        if self.channel is None:
            raise JSONRPCError(
                INVALID_PARAMS, "this transport cannot carry server-to-client requests"
            )
        results: dict[str, JSON] = {}
        for key, req in requests.items():
            method = req["method"]
            results[key] = await self.channel.request(
                method, req.get("params"), timeout_s=self.reverse_timeout_s(method, timeout_s)
            )
        return {k: check_answer(k, requests[k], v) for k, v in results.items()}

    async def _one(
        self, method: str, params: JSON, key: str | None, timeout_s: float | None = None
    ) -> JSON:
        k = key if key is not None else self._next_key(method)
        out = await self.request_input(
            {k: {"method": method, "params": params}}, timeout_s=timeout_s
        )
        return out[k]

    @overload
    async def elicit(
        self,
        message: str,
        requested_schema: type[T],
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> Elicited[T]: ...

    @overload
    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> JSON: ...

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | type[Any],
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> JSON | Elicited[Any]:
        """Form-mode elicitation (spec ``client/elicitation``).

        ``requested_schema`` is a pydantic model, dataclass or TypedDict class (rule 10):
        returns an :class:`~mcpkit.core.forms.Elicited` whose ``data`` is an instance of
        it when accepted; raises ``TypeError`` before anything is sent when the type
        cannot be a form, and ``InputResponseError`` (-32602) when the accepted answer
        does not validate as the type. Or a JSON Schema dict: returns the ElicitResult
        dict ``{"action": "accept"|"decline"|"cancel", "content"?: {...}}``; an accepted
        ``content`` satisfies it (rule 7). Waits at most ``timeout_s`` seconds (default
        ``Limits.elicitation_timeout_s``, rule 8)."""
        form_type: type[Any] | None = None
        if isinstance(requested_schema, Mapping):
            schema: Mapping[str, Any] = requested_schema
        else:
            form_type = requested_schema
            from mcpkit.core.forms import form_schema  # typed forms only

            schema = form_schema(form_type)
        check_flat_schema(schema)
        from mcpkit.core.jsonschema import compile_schema

        compile_schema(schema)  # SchemaError (a ValueError) before sending
        params: JSON = {"message": message, "requestedSchema": dict(schema)}
        if self.protocol_version >= "2025-11-25":
            params = {"mode": "form", **params}
        k = key if key is not None else self._next_key("elicitation/create")
        answer = await self._one("elicitation/create", params, k, timeout_s)
        if form_type is None:
            return answer
        return _typed_answer(form_type, k, answer)

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str,
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> JSON:
        """URL-mode elicitation (2025-11-25+, SEP-1036). Returns the ElicitResult dict.
        Waits at most ``timeout_s`` seconds (default ``Limits.elicitation_timeout_s``)."""
        params: JSON = {
            "mode": "url",
            "message": message,
            "url": url,
            "elicitationId": elicitation_id,
        }
        return await self._one("elicitation/create", params, key, timeout_s)

    async def sample(
        self,
        messages: str | Sequence[SamplingMessage | JSON | str],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | JSON | None = None,
        key: str | None = None,
        timeout_s: float | None = None,
        **options: Any,
    ) -> CreateMessageResult:
        """``sampling/createMessage`` (rule 11).

        ``messages``: a string (one user text message), or a list of
        :class:`~mcpkit.core.types.SamplingMessage` models, message dicts in wire form,
        or strings (user text messages). ``max_tokens`` is a token count; the keyword
        options are the spec's params (``systemPrompt``, ``temperature``,
        ``stopSequences``, ``modelPreferences``); ``options`` are further params in wire
        spelling (``tools``, ``toolChoice``, ...). Returns the
        :class:`~mcpkit.core.types.CreateMessageResult` (``.text`` is its text; dict
        reads by wire key still work); raises ``InputResponseError`` (-32602) when the
        client's answer is not one (rule 7). Waits at most ``timeout_s`` seconds
        (default ``Limits.sampling_timeout_s``, rule 8)."""
        from mcpkit.core.types import CreateMessageResult

        params: JSON = {"messages": _wire_messages(messages), "maxTokens": max_tokens}
        named = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
            "modelPreferences": _wire_value(model_preferences),
        }
        params.update({k: v for k, v in named.items() if v is not None})
        params.update(options)
        result = await self._one("sampling/createMessage", params, key, timeout_s)
        return CreateMessageResult.model_validate(result)

    async def list_roots(
        self, *, key: str | None = None, timeout_s: float | None = None
    ) -> list[Root]:
        """``roots/list``; returns the client's :class:`~mcpkit.core.types.Root` objects
        (``uri``, ``name``; dict reads by wire key still work, rule 11); raises
        ``InputResponseError`` (-32602) when the client's answer is not a
        ListRootsResult (rule 7). Waits at most ``timeout_s`` seconds (default
        ``Limits.roots_timeout_s``, rule 8)."""
        from mcpkit.core.types import ListRootsResult

        result = await self._one("roots/list", {}, key, timeout_s)
        return ListRootsResult.model_validate(result).roots


def _typed_answer(form_type: type[Any], key: str, answer: JSON) -> Elicited[Any]:
    """Rule 10: the answer as an :class:`Elicited` of ``form_type``."""
    from mcpkit.core.forms import Elicited, FormDataError, form_data

    action = answer.get("action", "cancel")
    content = as_object(answer.get("content"))
    if action != "accept":
        return Elicited(action=action, content=content)
    try:
        data = form_data(form_type, content)
    except FormDataError as exc:
        raise InputResponseError(key, "elicitation/create", exc.problems) from None
    return Elicited(action="accept", data=data, content=content)


def _wire_value(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        from mcpkit.core.types import to_wire

        return to_wire(value)
    return value


def _wire_messages(messages: str | Sequence[SamplingMessage | JSON | str]) -> list[JSON]:
    items: Sequence[Any] = [messages] if isinstance(messages, str) else messages
    out: list[JSON] = []
    for item in items:
        if isinstance(item, str):
            out.append({"role": "user", "content": {"type": "text", "text": item}})
        else:
            out.append(_wire_value(item))
    return out


def __getattr__(name: str) -> Any:
    """``Elicited`` is re-exported lazily: importing it costs a server that never uses
    typed forms its start time."""
    if name == "Elicited":
        from mcpkit.core.forms import Elicited

        return Elicited
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
