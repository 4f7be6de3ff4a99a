"""Multi round-trip requests (MRTR): ``InputRequiredResult`` and the retry fields.

Sources: spec 2026-07-28 ``basic/patterns/mrtr`` and ``basic/index`` §ResultType; schema
``InputRequiredResult``, ``InputRequests``, ``InputRequest``, ``InputResponses``,
``InputResponse``, ``InputResponseRequestParams``; SEP-2322. 2026-07-28 only.

Rules:
1. Only ``tools/call``, ``prompts/get`` and ``resources/read`` may answer with an
   ``InputRequiredResult`` (``resultType: "input_required"``); it carries
   ``input_requests`` and/or ``request_state`` (at least one).
2. ``input_requests`` maps server-chosen keys to ``elicitation/create``,
   ``sampling/createMessage`` or ``roots/list`` bodies (no JSON-RPC ``id``); the request
   kind is chosen by ``method``.
3. The client retries the original request with a new id, ``input_responses`` keyed like
   the requests, and ``request_state`` echoed byte for byte. ``request_state`` is opaque
   to the client and attacker-controlled to the server (verify its integrity there).
4. An input response has no tag; :data:`InputResponse` recognises it by shape (``action``
   = elicitation, ``roots`` = roots, otherwise sampling). A server that knows which key
   it asked for should validate that key's value with the matching result model.
5. Interim results carry no caching hints and are never cached.
6. A client reads a result of ``tools/call``, ``prompts/get`` or ``resources/read`` with
   :func:`parse_result`: the ``resultType`` decides the model, absent means complete, and
   any other value is invalid (extensions handle their own result types first).
"""

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from pydantic import Discriminator, Field, Tag
from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import MCPModel, Meta, RequestParams, RequestParamsWire, Result
from mcpkit.core.types.constants import (
    RESULT_TYPE_COMPLETE,
    RESULT_TYPE_INPUT_REQUIRED,
    result_type_of,
)
from mcpkit.core.types.elicitation import ElicitRequest, ElicitResult
from mcpkit.core.types.roots import ListRootsRequest, ListRootsResult
from mcpkit.core.types.sampling import CreateMessageRequest, CreateMessageResult

__all__ = [
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputRequiredResultWire",
    "InputResponse",
    "InputResponseRequestParams",
    "InputResponseRequestParamsWire",
    "InputResponses",
    "parse_result",
]

InputRequest = Annotated[
    ElicitRequest | CreateMessageRequest | ListRootsRequest,
    Field(discriminator="method"),
]
"""A request the server needs the client to fulfil, chosen by ``method``."""

InputRequests = dict[str, InputRequest]
"""Server-chosen key -> input request."""


def _input_response_tag(value: Any) -> str:
    if isinstance(value, dict):
        if "action" in value:
            return "elicit"
        return "roots" if "roots" in value else "sampling"
    if isinstance(value, ElicitResult):
        return "elicit"
    return "roots" if isinstance(value, ListRootsResult) else "sampling"


InputResponse = Annotated[
    Annotated[ElicitResult, Tag("elicit")]
    | Annotated[ListRootsResult, Tag("roots")]
    | Annotated[CreateMessageResult, Tag("sampling")],
    Discriminator(_input_response_tag),
]
"""The client's result for one input request, recognised by shape (see rule 4)."""

InputResponses = dict[str, InputResponse]
"""Key of an input request -> the client's result for it."""


class InputResponseRequestParams(RequestParams):
    """Params of a request that may be an MRTR retry (``tools/call``, ``prompts/get``,
    ``resources/read``): the answers to the previous ``input_requests`` and the echoed
    ``request_state``."""

    input_responses: InputResponses | None = None
    request_state: str | None = None


class InputResponseRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`InputResponseRequestParams`."""

    inputResponses: NotRequired[dict[str, JSON]]
    requestState: NotRequired[str]


class InputRequiredResult(MCPModel):
    """Interim result: the server needs ``input_requests`` answered, and/or wants
    ``request_state`` echoed, on a retry of the original request."""

    result_type: Literal["input_required"] = "input_required"
    input_requests: InputRequests | None = None
    request_state: str | None = None
    meta: Meta = None


class InputRequiredResultWire(TypedDict):
    """Wire form of :class:`InputRequiredResult`."""

    resultType: Literal["input_required"]
    inputRequests: NotRequired[dict[str, JSON]]
    requestState: NotRequired[str]
    _meta: NotRequired[JSON]


ResultT = TypeVar("ResultT", bound=Result)


def parse_result(result: Mapping[str, Any], model: type[ResultT]) -> ResultT | InputRequiredResult:
    """Validate a result that may be an MRTR interim result.

    ``resultType`` ``"input_required"`` gives an :class:`InputRequiredResult`;
    ``"complete"`` or no ``resultType`` (a pre-2026 server) gives ``model``. Any other
    value raises ``ValueError``: an unrecognized ``resultType`` MUST be treated as invalid
    (2026-07-28 ``basic/index`` §ResultType).
    """
    result_type = result_type_of(result)
    if result_type == RESULT_TYPE_INPUT_REQUIRED:
        return InputRequiredResult.model_validate(result)
    if result_type == RESULT_TYPE_COMPLETE:
        return model.model_validate(result)
    raise ValueError(
        f"resultType {result_type!r} is not recognized (expected "
        f"{RESULT_TYPE_COMPLETE!r} or {RESULT_TYPE_INPUT_REQUIRED!r}; spec basic/index §ResultType)"
    )
