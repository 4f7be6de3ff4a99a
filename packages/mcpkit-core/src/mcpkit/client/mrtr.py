"""The client side of multi round-trip requests (MRTR, SEP-2322).

Spec: 2026-07-28 ``basic/patterns/mrtr`` §Client Requirements, ``basic/index``
§ResultType.

Rules:
1. A result without ``resultType`` is ``"complete"`` (servers of earlier versions);
   ``"complete"`` (and any type the caller lists in ``accept``) is returned as is;
   ``"input_required"`` starts a round; a type with a registered result handler (an
   extension's, e.g. ``"task"``) is handed to it and its return value is processed in
   turn; any other value is invalid (:class:`ProtocolViolationError`).
2. Only ``tools/call``, ``prompts/get`` and ``resources/read`` may answer
   ``input_required``; on another method that is a protocol violation.
3. Each round answers every entry of ``inputRequests`` with the same handlers that serve
   handshake-era server requests (one at a time, in the server's order), then retries the
   original request as a new request (new JSON-RPC id) with the original params plus
   ``inputResponses`` and, only when the server sent one, the exact ``requestState``.
   Nothing from a round leaks into any other request.
4. A handler error ends the call: it is raised locally (there is no error slot in
   ``inputResponses``), as the same -32603 error a handshake-era server would get
   (:class:`~mcpkit.client.handlers.HandlerFailedError`, handlers rule 6) unless the
   handler raised a ``JSONRPCError`` itself. So does an answer that does not match its request
   (:class:`~mcpkit.client.handlers.InputHandlerError`): it is never sent.
5. At most ``max_rounds`` retries; then :class:`InputRoundsExceededError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import cast

from mcpkit.client.errors import InputRoundsExceededError, ProtocolViolationError
from mcpkit.client.handlers import InputHandlers
from mcpkit.core.shapes import JSON, as_object

__all__ = ["INPUT_CAPABLE", "ResultHandler", "complete_result"]

INPUT_CAPABLE = frozenset({"tools/call", "prompts/get", "resources/read"})
ResultHandler = Callable[[str, "JSON | None", JSON], Awaitable[JSON]]
"""``async def handler(method, params, result) -> result``: turns a result of an
extension's ``resultType`` into the one the caller gets (rule 1)."""


def _result_type(
    method: str, result: JSON, known: Collection[str] = ("complete", "input_required")
) -> str:
    kind = result.get("resultType", "complete")
    if kind not in known:
        raise ProtocolViolationError(
            f"{method}: resultType {kind!r} is not one this client understands "
            f"({', '.join(repr(k) for k in known)})"
        )
    if kind == "input_required" and method not in INPUT_CAPABLE:
        raise ProtocolViolationError(
            f"{method}: resultType 'input_required' is only allowed on "
            f"{', '.join(sorted(INPUT_CAPABLE))}"
        )
    return cast(str, kind)  # one of known: a string


async def complete_result(
    method: str,
    params: JSON | None,
    result: JSON,
    send: Callable[[JSON], Awaitable[JSON]],
    handlers: InputHandlers,
    *,
    max_rounds: int,
    result_handlers: Mapping[str, ResultHandler] | None = None,
    accept: Collection[str] = ("complete",),
) -> tuple[JSON, int]:
    """Drive ``result`` to completion (rules 1-5); returns ``(result, rounds)``.

    ``send(params)`` sends ``method`` again as a new request with those params.
    ``result_handlers`` handle extension result types; types in ``accept`` are returned.
    """
    rounds = 0
    extra = result_handlers or {}
    known = {"complete", "input_required", *extra, *accept}
    while True:
        kind = _result_type(method, result, sorted(known))
        if kind in accept:
            return result, rounds
        if kind != "input_required":
            if kind == "complete":
                return result, rounds
            result = await extra[kind](method, params, result)
            continue
        if rounds >= max_rounds:
            raise InputRoundsExceededError(method, rounds)
        rounds += 1
        requests = as_object(result.get("inputRequests"))
        responses: JSON = {}
        if requests is not None:
            for key, raw in requests.items():
                request = as_object(raw)
                asked = request.get("method") if request is not None else None
                if request is None or not isinstance(asked, str):
                    raise ProtocolViolationError(
                        f"{method}: inputRequests[{key!r}] is not a request object"
                    )
                responses[key] = await handlers.answer(asked, request.get("params"))
        retry: JSON = {
            k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")
        }
        retry["inputResponses"] = responses
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        result = await send(retry)
