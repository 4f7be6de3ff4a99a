"""Sampling: the server asks the client's LLM for a message (``sampling/createMessage``).

Sources: spec 2025-11-25 / 2026-07-28 ``client/sampling`` and schema
``CreateMessageRequest``, ``CreateMessageRequestParams``, ``CreateMessageResult``,
``SamplingMessage``, ``ModelPreferences``, ``ModelHint``, ``ToolChoice``. Deprecated in
2026-07-28 (SEP-2577) but fully functional.

Rules:
1. In the handshake era this is a server->client request; in 2026-07-28 it is only an
   MRTR input request (an entry of ``InputRequiredResult.inputRequests``), without
   JSON-RPC ``id``. Either way the body is ``method`` + ``params``.
2. A message's ``content`` is one block or a list of blocks (2025-11-25+);
   ``tool_use``/``tool_result`` blocks need the client's ``sampling.tools`` capability.
3. Priorities in ``ModelPreferences`` are 0..1; ``max_tokens`` is a token count.
4. ``include_context`` values other than ``"none"`` are deprecated (2026-07-28).
5. ``CreateMessageResult.text`` is the text of the message's text blocks (joined with
   newlines), None when it has none; other blocks (image, audio, tool use) are skipped.
"""

from typing import Any, Literal

from pydantic import Field

from mcpkit.core.types._base import MCPModel, Meta, Number, RequestParams, Result, Role
from mcpkit.core.types._dictview import WireDictView
from mcpkit.core.types.content import SamplingContentBlock, TextContent
from mcpkit.core.types.tools import Tool

__all__ = [
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "ToolChoice",
]

IncludeContext = Literal["none", "thisServer", "allServers"]
"""Which MCP context the client should add to the prompt (non-"none" values deprecated)."""


class ModelHint(MCPModel):
    """A model name hint, matched by the client as a substring (e.g. ``"claude-3-5"``)."""

    name: str | None = None


class ModelPreferences(MCPModel):
    """The server's model preferences; each priority is 0 (unimportant) to 1 (most)."""

    hints: list[ModelHint] | None = None
    cost_priority: Number | None = Field(default=None, ge=0, le=1)
    speed_priority: Number | None = Field(default=None, ge=0, le=1)
    intelligence_priority: Number | None = Field(default=None, ge=0, le=1)


class ToolChoice(MCPModel):
    """How the model may use the offered tools: ``auto`` (default), ``required`` or ``none``."""

    mode: Literal["auto", "required", "none"] | None = None


class SamplingMessage(MCPModel):
    """One message of the conversation to sample from."""

    role: Role
    content: SamplingContentBlock | list[SamplingContentBlock]
    meta: Meta = None


class CreateMessageRequestParams(RequestParams):
    """What to sample: ``messages``, at most ``max_tokens`` tokens, optional ``tools``
    (2025-11-25+) with ``tool_choice``."""

    messages: list[SamplingMessage]
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: Number | None = None
    max_tokens: int
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None


class CreateMessageRequest(MCPModel):
    """``sampling/createMessage``."""

    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageResult(WireDictView, Result):
    """The sampled message, the ``model`` that produced it and why it stopped.

    ``stop_reason`` is open: ``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse``
    (2025-11-25+) or provider-specific. ``text`` is the message's text (rule 5); dict
    reads by wire key (``result["content"]``) still work (``_dictview``).
    """

    role: Role
    content: SamplingContentBlock | list[SamplingContentBlock]
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str | None:
        """The text of the message (rule 5): a text block's ``text``, the text blocks of
        a list joined with newlines, or None when it holds no text block."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        texts = [b.text for b in blocks if isinstance(b, TextContent)]
        return "\n".join(texts) if texts else None
