"""Content blocks and resource contents: what tools, prompts and sampling messages carry.

Sources: spec 2025-11-25 / 2026-07-28 schema ``ContentBlock``, ``TextContent``,
``ImageContent``, ``AudioContent`` (2025-03-26+), ``ResourceLink`` (2025-06-18+),
``EmbeddedResource``, ``TextResourceContents``, ``BlobResourceContents``,
``ToolUseContent`` / ``ToolResultContent`` / ``SamplingMessageContentBlock`` (sampling
with tools, 2025-11-25+); ``server/tools`` §Tool Result, ``client/sampling``.

Rules:
1. Blocks are told apart by ``type`` only (a discriminated union). An unknown ``type``
   is a validation error naming the tag and the expected tags; nothing is guessed.
2. ``ContentBlock`` (tool results, prompt messages) has no ``tool_use``/``tool_result``;
   those exist only in sampling (``SamplingContentBlock``).
3. Base64 payloads (``data``, ``blob``) are kept as the received strings; they are not
   decoded or re-encoded.
4. Resource contents are text if they have ``text``, blob if they have ``blob``.
"""

from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from pydantic import Discriminator, Field, Tag
from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import MCPModel, Meta
from mcpkit.core.types.common import Annotations, AnnotationsWire, Icon, IconWire

__all__ = [
    "AudioContent",
    "AudioContentWire",
    "BlobResourceContents",
    "BlobResourceContentsWire",
    "ContentBlock",
    "ContentBlockWire",
    "EmbeddedResource",
    "EmbeddedResourceWire",
    "ImageContent",
    "ImageContentWire",
    "ResourceContents",
    "ResourceContentsUnion",
    "ResourceContentsUnionWire",
    "ResourceContentsWire",
    "ResourceLink",
    "ResourceLinkWire",
    "SamplingContentBlock",
    "TextContent",
    "TextContentWire",
    "TextResourceContents",
    "TextResourceContentsWire",
    "ToolResultContent",
    "ToolUseContent",
]


class ResourceContents(MCPModel):
    """The contents of a resource at ``uri``; use the text or blob subclass."""

    uri: str
    mime_type: str | None = None
    meta: Meta = None


class ResourceContentsWire(TypedDict):
    """Wire form of :class:`ResourceContents`."""

    uri: str
    mimeType: NotRequired[str]
    _meta: NotRequired[JSON]


class TextResourceContents(ResourceContents):
    """Resource contents as text."""

    text: str


class TextResourceContentsWire(ResourceContentsWire):
    """Wire form of :class:`TextResourceContents`."""

    text: str


class BlobResourceContents(ResourceContents):
    """Resource contents as base64-encoded bytes (``blob``)."""

    blob: str


class BlobResourceContentsWire(ResourceContentsWire):
    """Wire form of :class:`BlobResourceContents`."""

    blob: str


def _resource_contents_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "blob" if "blob" in value else "text"
    return "blob" if isinstance(value, BlobResourceContents) else "text"


ResourceContentsUnion = Annotated[
    Annotated[TextResourceContents, Tag("text")] | Annotated[BlobResourceContents, Tag("blob")],
    Discriminator(_resource_contents_tag),
]
"""Text or blob resource contents, chosen by the presence of ``blob``."""


ResourceContentsUnionWire: TypeAlias = TextResourceContentsWire | BlobResourceContentsWire
"""Wire form of :data:`ResourceContentsUnion`: tell them apart with ``"blob" in value``."""


class TextContent(MCPModel):
    """A text block."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: Meta = None


class TextContentWire(TypedDict):
    """Wire form of :class:`TextContent`."""

    type: Literal["text"]
    text: str
    annotations: NotRequired[AnnotationsWire]
    _meta: NotRequired[JSON]


class ImageContent(MCPModel):
    """An image: base64 ``data`` of type ``mime_type``."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


class ImageContentWire(TypedDict):
    """Wire form of :class:`ImageContent`."""

    type: Literal["image"]
    data: str
    mimeType: str
    annotations: NotRequired[AnnotationsWire]
    _meta: NotRequired[JSON]


class AudioContent(MCPModel):
    """Audio (2025-03-26+): base64 ``data`` of type ``mime_type``."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


class AudioContentWire(TypedDict):
    """Wire form of :class:`AudioContent`."""

    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: NotRequired[AnnotationsWire]
    _meta: NotRequired[JSON]


class ResourceLink(MCPModel):
    """A link to a resource the client may read (2025-06-18+); not necessarily listed.

    Carries the ``Resource`` fields; ``size`` is in bytes.
    """

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class ResourceLinkWire(TypedDict):
    """Wire form of :class:`ResourceLink`."""

    type: Literal["resource_link"]
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[AnnotationsWire]
    icons: NotRequired[list[IconWire]]
    _meta: NotRequired[JSON]


class EmbeddedResource(MCPModel):
    """Resource contents embedded in a message."""

    type: Literal["resource"] = "resource"
    resource: ResourceContentsUnion
    annotations: Annotations | None = None
    meta: Meta = None


class EmbeddedResourceWire(TypedDict):
    """Wire form of :class:`EmbeddedResource`."""

    type: Literal["resource"]
    resource: ResourceContentsUnionWire
    annotations: NotRequired[AnnotationsWire]
    _meta: NotRequired[JSON]


ContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
"""A block of a tool result or prompt message, chosen by ``type``."""


ContentBlockWire: TypeAlias = (
    TextContentWire | ImageContentWire | AudioContentWire | ResourceLinkWire | EmbeddedResourceWire
)
"""Wire form of :data:`ContentBlock`: a type checker narrows it on ``block["type"]``."""


class ToolUseContent(MCPModel):
    """Sampling only (2025-11-25+): the model asks to call tool ``name`` with ``input``.

    ``id`` is matched by the ``tool_use_id`` of the ``ToolResultContent`` answering it.
    """

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: Meta = None


class ToolResultContent(MCPModel):
    """Sampling only (2025-11-25+): the result of the tool use ``tool_use_id``."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool | None = None
    meta: Meta = None


SamplingContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
    Field(discriminator="type"),
]
"""A block of a sampling message (schema ``SamplingMessageContentBlock``), chosen by ``type``."""
