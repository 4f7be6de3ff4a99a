"""Answers to the server's input requests: sampling, elicitation (form and URL), roots.

One set of handlers serves both eras: a handshake-era server sends these as live
requests (``sampling/createMessage``, ``elicitation/create``, ``roots/list``); on
2026-07-28 they arrive as MRTR ``inputRequests`` (SEP-2322). :meth:`InputHandlers.answer`
is the single entry point for both.

Spec: 2025-11-25 ``client/sampling``, ``client/elicitation``, ``client/roots``; SEP-1034
(elicitation defaults); 2026-07-28 ``basic/patterns/mrtr``.

Rules:
1. A capability is declared only for a handler that is set: ``sampling: {}``,
   ``elicitation: {form: {}}`` and/or ``{url: {}}``, ``roots: {listChanged: true}``.
   A request for an undeclared capability is refused with -32601 (never answered).
2. Parameters are validated with the wire models before any user code runs; invalid
   parameters, including a form ``requestedSchema`` that is not flat (an object of
   primitive and enum properties only), are refused with -32602 naming the problem.
3. SEP-1034: when a form elicitation is accepted, every property the answer leaves out
   that has a ``default`` in the schema is filled with that default.
4. Handlers return a wire model or a plain dict; the answer is the dict's wire form.
   A handler raising :class:`~mcpkit.core.jsonrpc.JSONRPCError` answers with that error.
5. Every answer is checked before it leaves (:func:`mcpkit.core.answers.answer_problems`,
   the check the server applies): the result type of the method, and for an accepted
   form the server's ``requestedSchema`` (after rule 3's defaults; ``pattern`` is not
   enforced, core rule 4). A handler whose answer fails, or that returns something
   that is neither a model nor a dict, raises :class:`InputHandlerError` (a
   ``ClientError``); nothing is sent for it. The session turns that into a -32603 error
   response to a handshake-era server request; an MRTR round raises it to the caller.
6. A handler that raises anything else (a bug, a failed dependency) gives the same error
   on both eras (issue 13 §3): :class:`HandlerFailedError`, a
   :class:`~mcpkit.core.jsonrpc.JSONRPCError` -32603 whose message names the method and
   an error id but not the exception's text (``error_details=True`` adds it, for
   development); the exception is logged with its traceback and that id on
   ``mcpkit.client``. A handshake-era server gets it as the error response (a mcpkit
   tool that does not catch it re-raises it to the caller); on 2026-07-28 it is raised
   to the caller at once, the exception chained as ``__cause__``. The same applies to
   request handlers added with ``Client.add_request_handler``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from mcpkit.client._json import as_object
from mcpkit.client.errors import ClientError
from mcpkit.core.answers import answer_problems
from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError
from mcpkit.core.shapes import JSON

if TYPE_CHECKING:
    from mcpkit.core.types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitRequestFormParams,
        ElicitRequestURLParams,
        ElicitResult,
        ListRootsResult,
        Root,
    )

__all__ = [
    "ElicitationHandler",
    "HandlerFailedError",
    "InputHandlerError",
    "InputHandlers",
    "RootsHandler",
    "RootsSource",
    "SamplingHandler",
    "UrlElicitationHandler",
    "apply_elicitation_defaults",
    "guarded",
]

R = TypeVar("R")
logger = logging.getLogger("mcpkit.client")
SamplingHandler: TypeAlias = (
    "Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult | JSON]]"
)
"""``async def sample(params) -> CreateMessageResult | dict``."""
ElicitationHandler: TypeAlias = (
    "Callable[[ElicitRequestFormParams], Awaitable[ElicitResult | JSON]]"
)
"""Form mode: ``async def elicit(params) -> ElicitResult | dict``."""
UrlElicitationHandler: TypeAlias = (
    "Callable[[ElicitRequestURLParams], Awaitable[ElicitResult | JSON]]"
)
"""URL mode: ``async def open_url(params) -> ElicitResult | dict`` (action only)."""
RootsHandler: TypeAlias = "Callable[[], Awaitable[Sequence[Root | JSON | str] | ListRootsResult]]"
"""``async def roots() -> [Root | {"uri", "name"?} | "file:///..."]``."""
RootsSource: TypeAlias = "Sequence[Root | JSON | str] | RootsHandler"


class InputHandlerError(ClientError):
    """This client's own input handler produced an answer that does not match the
    server's request (rule 5), so it was not sent. ``method`` is the input request's
    method, ``problems`` readable messages each naming a JSON path."""

    def __init__(self, method: str, problems: list[str]) -> None:
        super().__init__(
            f"the {method} handler's answer does not match the request: {'; '.join(problems)}"
        )
        self.method = method
        self.problems = problems


class HandlerFailedError(JSONRPCError):
    """A client handler for ``method`` raised (rule 6): code -32603 (Internal error), the
    message names the method and ``error_id`` (also in the client's log, with the
    traceback); ``data = {"errorId": error_id}``. The exception is ``__cause__``."""

    def __init__(self, method: str, error_id: str, detail: str | None = None) -> None:
        message = f"Internal error: the client's {method} handler failed (error id {error_id})"
        if detail is not None:
            message = f"{message}: {detail}"
        super().__init__(INTERNAL_ERROR, message, {"errorId": error_id})
        self.method = method
        self.error_id = error_id


async def guarded(method: str, call: Awaitable[R], *, error_details: bool = False) -> R:
    """Await a user handler's ``call`` for ``method`` (rule 6): a
    :class:`JSONRPCError` the handler raises on purpose passes; any other exception is
    logged with an error id and raised as :class:`HandlerFailedError`."""
    try:
        return await call
    except JSONRPCError:
        raise
    except Exception as exc:
        error_id = uuid.uuid4().hex[:12]
        logger.error("the %s handler failed (error id %s)", method, error_id, exc_info=exc)
        detail = f"{type(exc).__name__}: {exc}" if error_details else None
        raise HandlerFailedError(method, error_id, detail) from exc


def _wire(method: str, value: Any) -> JSON:
    if isinstance(value, BaseModel):
        from mcpkit.core.types import to_wire

        return to_wire(value)
    found = as_object(value)
    if found is not None:
        return found
    raise InputHandlerError(
        method,
        [f"(root): a handler must return a wire model or a dict, not {type(value).__name__}"],
    )


def _invalid(method: str, exc: ValidationError) -> JSONRPCError:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
    where = ".".join(str(p) for p in first["loc"]) or "params"
    return JSONRPCError(INVALID_PARAMS, f"Invalid params: {method}: {where}: {first['msg']}")


def apply_elicitation_defaults(requested_schema: Any, content: JSON | None) -> JSON:
    """Rule 3 (SEP-1034): ``content`` plus the schema default of every property it lacks."""
    filled: JSON = dict(content or {})
    props = as_object((as_object(requested_schema) or {}).get("properties")) or {}
    for name, value in props.items():
        prop = as_object(value)
        if name not in filled and prop is not None and "default" in prop:
            filled[name] = prop["default"]
    return filled


class InputHandlers:
    """The client's handlers for server input requests (see the module rules)."""

    def __init__(
        self,
        *,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        url_elicitation: UrlElicitationHandler | None = None,
        roots: RootsSource | None = None,
        error_details: bool = False,
    ) -> None:
        self.error_details = error_details
        self.sampling = sampling
        self.elicitation = elicitation
        self.url_elicitation = url_elicitation
        self.roots = roots

    def capabilities(self) -> JSON:
        """Rule 1: the client capabilities these handlers justify."""
        caps: JSON = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling is not None:
            caps["sampling"] = {}
        modes: JSON = {}
        if self.elicitation is not None:
            modes["form"] = {}
        if self.url_elicitation is not None:
            modes["url"] = {}
        if modes:
            caps["elicitation"] = modes
        return caps

    def handles(self, method: str) -> bool:
        return method in ("sampling/createMessage", "elicitation/create", "roots/list")

    async def answer(self, method: str, params: JSON | None) -> JSON:
        """The result for one input request (rules 1-5); raises :class:`JSONRPCError`
        (the answer is that error) or :class:`InputHandlerError` (rule 5)."""
        params = params or {}
        if method == "sampling/createMessage":
            result = await self._sample(params)
        elif method == "elicitation/create":
            result = await self._elicit(params)
        elif method == "roots/list":
            result = await self._roots()
        else:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
        problems = answer_problems(method, params, result, schema_from_peer=True)
        if problems:
            raise InputHandlerError(method, problems)
        return result

    async def _guard(self, method: str, call: Awaitable[R]) -> R:
        return await guarded(method, call, error_details=self.error_details)

    async def _sample(self, params: JSON) -> JSON:
        if self.sampling is None:
            raise JSONRPCError(
                METHOD_NOT_FOUND, "Method not found: sampling/createMessage (no sampling handler)"
            )
        from mcpkit.core.types import CreateMessageRequestParams

        try:
            typed = CreateMessageRequestParams.model_validate(params)
        except ValidationError as exc:
            raise _invalid("sampling/createMessage", exc) from None
        answer = await self._guard("sampling/createMessage", self.sampling(typed))
        return _wire("sampling/createMessage", answer)

    async def _elicit(self, params: JSON) -> JSON:
        from mcpkit.core.types import ElicitRequestFormParams, ElicitRequestURLParams

        mode = params.get("mode", "form")
        if mode == "url":
            if self.url_elicitation is None:
                raise JSONRPCError(
                    METHOD_NOT_FOUND,
                    "Method not found: elicitation/create mode 'url' (no URL elicitation handler)",
                )
            try:
                url_params = ElicitRequestURLParams.model_validate(params)
            except ValidationError as exc:
                raise _invalid("elicitation/create", exc) from None
            answer = await self._guard("elicitation/create", self.url_elicitation(url_params))
            return _wire("elicitation/create", answer)
        if mode != "form":
            raise JSONRPCError(
                INVALID_PARAMS,
                f"Invalid params: elicitation/create mode {mode!r} is not 'form' or 'url'",
            )
        if self.elicitation is None:
            raise JSONRPCError(
                METHOD_NOT_FOUND, "Method not found: elicitation/create (no elicitation handler)"
            )
        try:
            form = ElicitRequestFormParams.model_validate(params)
        except ValidationError as exc:
            raise _invalid("elicitation/create", exc) from None
        result = _wire(
            "elicitation/create", await self._guard("elicitation/create", self.elicitation(form))
        )
        if result.get("action") == "accept":
            content = result.get("content")
            result = {
                **result,
                "content": apply_elicitation_defaults(
                    params.get("requestedSchema"),
                    as_object(content),
                ),
            }
        return result

    async def _roots(self) -> JSON:
        source = self.roots
        if source is None:
            raise JSONRPCError(
                METHOD_NOT_FOUND, "Method not found: roots/list (no roots configured)"
            )
        items: Any = await self._guard("roots/list", source()) if callable(source) else source
        if isinstance(items, BaseModel):
            return _wire("roots/list", items)
        roots: list[JSON] = []
        for item in items:
            if isinstance(item, str):
                roots.append({"uri": item})
            else:
                roots.append(_wire("roots/list", item))
        return {"roots": roots}
