"""Argument completion: ``completion/complete``.

Sources: spec 2025-11-25 / 2026-07-28 ``server/utilities/completion``; schema
``CompleteRequest``, ``CompleteRequestParams``, ``CompleteResult``, ``PromptReference``,
``ResourceTemplateReference`` (``ResourceReference`` in 2025-03-26, same shape).

Rules:
1. ``ref`` names what is being completed: a prompt (``ref/prompt``, by ``name``) or a
   resource template (``ref/resource``, by template ``uri``); chosen by ``type``.
2. ``context.arguments`` (2025-06-18+) holds already-resolved argument values.
3. At most 100 ``values`` per result; ``total`` may exceed them, ``has_more`` says so.
"""

from typing import Annotated, Final, Literal, NotRequired, TypeAlias

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit.core.types._base import (
    MCPModel,
    RequestParams,
    RequestParamsWire,
    Result,
    ResultWire,
)

__all__ = [
    "MAX_COMPLETION_VALUES",
    "CompleteArgument",
    "CompleteArgumentWire",
    "CompleteContext",
    "CompleteContextWire",
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteRequestParamsWire",
    "CompleteRequestWire",
    "CompleteResult",
    "CompleteResultWire",
    "Completion",
    "CompletionReference",
    "CompletionReferenceWire",
    "CompletionWire",
    "PromptReference",
    "PromptReferenceWire",
    "ResourceTemplateReference",
    "ResourceTemplateReferenceWire",
]

MAX_COMPLETION_VALUES: Final = 100
"""Most values one completion result may carry."""


class PromptReference(MCPModel):
    """Completion target: the prompt ``name``."""

    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class PromptReferenceWire(TypedDict):
    """Wire form of :class:`PromptReference`."""

    type: Literal["ref/prompt"]
    name: str
    title: NotRequired[str]


class ResourceTemplateReference(MCPModel):
    """Completion target: the resource template ``uri`` (an RFC 6570 template)."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class ResourceTemplateReferenceWire(TypedDict):
    """Wire form of :class:`ResourceTemplateReference`."""

    type: Literal["ref/resource"]
    uri: str


CompletionReference = Annotated[
    PromptReference | ResourceTemplateReference, Field(discriminator="type")
]
"""What is being completed, chosen by ``type``."""


CompletionReferenceWire: TypeAlias = PromptReferenceWire | ResourceTemplateReferenceWire
"""Wire form of :data:`CompletionReference`, told apart by ``type``."""


class CompleteArgument(MCPModel):
    """The argument being completed: its ``name`` and the partial ``value`` typed so far."""

    name: str
    value: str


class CompleteArgumentWire(TypedDict):
    """Wire form of :class:`CompleteArgument`."""

    name: str
    value: str


class CompleteContext(MCPModel):
    """Extra context: ``arguments`` already resolved (name -> value)."""

    arguments: dict[str, str] | None = None


class CompleteContextWire(TypedDict):
    """Wire form of :class:`CompleteContext`."""

    arguments: NotRequired[dict[str, str]]


class CompleteRequestParams(RequestParams):
    """Complete ``argument`` of ``ref``."""

    ref: CompletionReference
    argument: CompleteArgument
    context: CompleteContext | None = None


class CompleteRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`CompleteRequestParams`."""

    ref: CompletionReferenceWire
    argument: CompleteArgumentWire
    context: NotRequired[CompleteContextWire]


class CompleteRequest(MCPModel):
    """``completion/complete``."""

    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams


class CompleteRequestWire(TypedDict):
    """Wire form of :class:`CompleteRequest`."""

    method: Literal["completion/complete"]
    params: CompleteRequestParamsWire


class Completion(MCPModel):
    """Completion ``values`` (at most 100), the ``total`` available, and ``has_more``."""

    values: list[str] = Field(max_length=MAX_COMPLETION_VALUES)
    total: int | None = None
    has_more: bool | None = None


class CompletionWire(TypedDict):
    """Wire form of :class:`Completion` (at most :data:`MAX_COMPLETION_VALUES` values)."""

    values: list[str]
    total: NotRequired[int]
    hasMore: NotRequired[bool]


class CompleteResult(Result):
    """The completion."""

    completion: Completion


class CompleteResultWire(ResultWire):
    """Wire form of :class:`CompleteResult`."""

    completion: CompletionWire
