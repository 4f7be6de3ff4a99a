"""The client side: list, get and read skills, verifying every read against its entry.

Spec: ``skills.mdx`` §Skill Entries, §Limits, §Listing Skills, §Getting a Skill,
§Integrity and Verification, §Reading Directories (SEP-2640).

Rules:
1. :func:`server_supports_skills` answers from the server's declared capabilities
   (``initialize`` or ``server/discover``); nothing here asks the server first.
2. An entry is checked before use (:meth:`SkillEntry.from_json`), comparing URIs in
   their normalised form (:func:`~.names.normal_uri`: percent-encoding normalised,
   ``..`` and ``.`` segments refused): ``uri`` ending in ``/SKILL.md`` whose last
   skill-path segment equals ``frontmatter.name``; ``frontmatter`` an object of at most
   :data:`~.frontmatter.MAX_FRONTMATTER_BYTES` as JSON, with a ``name`` that follows
   the Agent Skills naming rules and a non-empty ``description`` of at most 1,024
   characters; ``resources`` the string ``"dynamic"`` or an array of ``{uri, digest,
   size}`` listing ``SKILL.md`` and each file once (after normalisation), inside the
   skill, with a ``sha256:`` digest and a non-negative integer size, every URI at most
   :data:`MAX_URI_BYTES` UTF-8 bytes, within ``max_resources`` (512) entries and
   ``max_bytes`` (16 MiB). Any other entry raises
   :class:`InvalidSkillEntryError`: it is never loaded.
3. :func:`read_skill_file` never reads a URI the held entry does not list, nor for a
   dynamic skill one that is not below it once normalised (:class:`UnlistedFileError`,
   nothing sent). A read is checked for size first
   (:class:`SizeMismatchError`), then digest (:class:`DigestMismatchError`); a
   ``SKILL.md`` is then parsed and its frontmatter compared field by field, JSON types
   included (:class:`FrontmatterMismatchError`). A dynamic skill's files carry no digest:
   only the frontmatter is compared. Every failure is a :class:`SkillVerificationError`
   (a ``ClientError``), and the unverified bytes are never returned.
4. Reads go past the client's result cache (``use_cache=False``), and so does
   :func:`get_skill`: a refreshed entry is the server's current one.
5. :func:`read_directory` raises :class:`DirectoryReadNotDeclaredError` without sending
   anything when the server did not declare ``directoryRead: true``.
6. Listing loops are bounded: at most ``client.max_pages`` pages, a repeated cursor ends
   the listing with :class:`~mcpkit.client.ProtocolViolationError`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mcpkit.client import ClientError, ProtocolViolationError
from mcpkit.core.shapes import JSON, as_list, as_object
from mcpkit.ext.skills.frontmatter import (
    MAX_FRONTMATTER_BYTES,
    FrontmatterError,
    parse_frontmatter,
    same_json,
)
from mcpkit.ext.skills.names import (
    EXTENSION_ID,
    MAX_BYTES_PER_SKILL,
    MAX_DESCRIPTION_CHARS,
    MAX_RESOURCES_PER_SKILL,
    SKILL_FILE,
    check_skill_name,
    digest_of,
    is_digest,
    normal_uri,
)

if TYPE_CHECKING:
    from mcpkit.client import Client

MAX_URI_BYTES = 4096
"""The longest skill or file URI an entry may carry (rule 2)."""

__all__ = [
    "MAX_URI_BYTES",
    "DigestMismatchError",
    "DirectoryReadNotDeclaredError",
    "FrontmatterMismatchError",
    "InvalidSkillEntryError",
    "SizeMismatchError",
    "SkillContent",
    "SkillEntry",
    "SkillFile",
    "SkillVerificationError",
    "UnlistedFileError",
    "directory_read_supported",
    "get_skill",
    "list_skills",
    "read_directory",
    "read_skill_file",
    "same_json",
    "server_supports_skills",
]


class SkillVerificationError(ClientError):
    """A skill's content or entry failed verification; ``uri`` is the file (or entry)
    concerned. The content must not be used (rule 3)."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri


class InvalidSkillEntryError(SkillVerificationError):
    """Rule 2: an entry a host must not load."""


class UnlistedFileError(SkillVerificationError):
    """Rule 3: a read of a file the held entry does not list."""


class SizeMismatchError(SkillVerificationError):
    """Rule 3: the content's byte length differs from the entry's ``size``."""


class DigestMismatchError(SkillVerificationError):
    """Rule 3: the content's SHA-256 differs from the entry's ``digest``."""


class FrontmatterMismatchError(SkillVerificationError):
    """Rule 3: ``SKILL.md``'s frontmatter differs from the entry's ``frontmatter``."""


class DirectoryReadNotDeclaredError(ClientError):
    """Rule 5: the server did not declare ``directoryRead: true``."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One ``SkillResource``: ``uri``, ``digest`` (``sha256:...``), ``size`` (bytes)."""

    uri: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A checked ``Skill`` entry (rule 2). ``files`` is None for a dynamic skill."""

    uri: str
    frontmatter: JSON
    files: tuple[SkillFile, ...] | None

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The skill's directory URI (``uri`` without ``/SKILL.md``)."""
        return self.uri.removesuffix("/" + SKILL_FILE)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files or ())

    def file(self, uri: str) -> SkillFile | None:
        """The listed file at ``uri``, if any."""
        return next((f for f in self.files or () if f.uri == uri), None)

    def content_set(self) -> frozenset[tuple[str, str]]:
        """The ``{(uri, digest)}`` set an approval binds to (empty for a dynamic skill)."""
        return frozenset((f.uri, f.digest) for f in self.files or ())

    @classmethod
    def from_json(
        cls,
        value: Any,
        *,
        max_resources: int = MAX_RESOURCES_PER_SKILL,
        max_bytes: int = MAX_BYTES_PER_SKILL,
    ) -> SkillEntry:
        """Rule 2; raises :class:`InvalidSkillEntryError`."""
        entry = as_object(value)
        if entry is None:
            raise InvalidSkillEntryError("skills[]", "an entry must be an object")
        uri = entry.get("uri")
        key = _checked_uri(str(uri)[:200], uri)
        if not key.endswith("/" + SKILL_FILE):
            raise InvalidSkillEntryError(str(uri)[:200], "uri must name a skill's SKILL.md")
        assert isinstance(uri, str)
        fm = as_object(entry.get("frontmatter"))
        if fm is None or not isinstance(fm.get("name"), str):
            raise InvalidSkillEntryError(uri, "frontmatter must be an object with a name")
        _check_frontmatter(uri, fm)
        root = key.removesuffix("/" + SKILL_FILE)
        if unquote(root.rsplit("/", 1)[-1]) != fm["name"]:
            raise InvalidSkillEntryError(uri, f"the last path segment is not {fm['name']!r}")
        resources = entry.get("resources")
        if resources == "dynamic":
            return cls(uri, fm, None)
        items = as_list(resources)
        if items is None:
            raise InvalidSkillEntryError(uri, 'resources must be an array or "dynamic"')
        if len(items) > max_resources:
            raise InvalidSkillEntryError(uri, f"{len(items)} resources, over {max_resources}")
        files: list[SkillFile] = []
        seen: set[str] = set()
        for item in items:
            files.append(_skill_file(uri, root, item, seen))
        if key not in seen:
            raise InvalidSkillEntryError(uri, "resources does not list SKILL.md itself")
        total = sum(f.size for f in files)
        if total > max_bytes:
            raise InvalidSkillEntryError(uri, f"{total} bytes in all, over {max_bytes}")
        return cls(uri, fm, tuple(files))


def _checked_uri(owner: str, uri: object) -> str:
    """Rule 2: the normalised form of a URI an entry carries."""
    if not isinstance(uri, str):
        raise InvalidSkillEntryError(owner, "a uri is missing or not a string")
    if len(uri.encode("utf-8", "surrogatepass")) > MAX_URI_BYTES:
        raise InvalidSkillEntryError(owner, f"a uri is over {MAX_URI_BYTES} bytes")
    try:
        return normal_uri(uri)
    except ValueError as exc:
        raise InvalidSkillEntryError(owner, str(exc)) from None


def _check_frontmatter(uri: str, fm: JSON) -> None:
    """Rule 2: the frontmatter's size, name and description."""
    try:
        size = len(json.dumps(fm, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        raise InvalidSkillEntryError(uri, "frontmatter is not JSON") from None
    if size > MAX_FRONTMATTER_BYTES:
        raise InvalidSkillEntryError(uri, f"frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
    problem = check_skill_name(fm.get("name"))
    if problem is not None:
        raise InvalidSkillEntryError(uri, problem)
    description = fm.get("description")
    if not isinstance(description, str) or not description.strip():
        raise InvalidSkillEntryError(uri, "frontmatter must have a non-empty description")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise InvalidSkillEntryError(uri, f"description is over {MAX_DESCRIPTION_CHARS} characters")


def _skill_file(uri: str, root: str, item: Any, seen: set[str]) -> SkillFile:
    """One ``resources`` item; ``root`` and ``seen`` are normalised (rule 2)."""
    obj = as_object(item)
    if obj is None:
        raise InvalidSkillEntryError(uri, "a resources item is not an object")
    file_uri, digest, size = obj.get("uri"), obj.get("digest"), obj.get("size")
    key = _checked_uri(uri, file_uri)
    assert isinstance(file_uri, str)
    if not key.startswith(root + "/"):
        raise InvalidSkillEntryError(uri, f"resource {file_uri[:200]!r} is outside the skill")
    if key in seen:
        raise InvalidSkillEntryError(uri, f"{file_uri[:200]} is listed twice")
    if not is_digest(digest):
        raise InvalidSkillEntryError(uri, f"{file_uri}: digest is not sha256:<64 hex>")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise InvalidSkillEntryError(uri, f"{file_uri}: size is not a non-negative integer")
    seen.add(key)
    return SkillFile(file_uri, str(digest), size)


@dataclass(frozen=True, slots=True)
class SkillContent:
    """A verified file: ``uri``, its raw ``data`` and ``mime_type``; ``text`` when it
    came as text."""

    uri: str
    data: bytes
    mime_type: str | None
    text: str | None


# -- capability (rules 1, 5) --------------------------------------------------------------
def server_supports_skills(client: Client) -> bool:
    """Whether the connected server declared ``io.modelcontextprotocol/skills``."""
    return client.server_supports_extension(EXTENSION_ID)


def directory_read_supported(client: Client) -> bool:
    """Whether the server declared ``directoryRead: true`` (only ``true`` counts)."""
    ext = client.server_extension(EXTENSION_ID)
    return ext is not None and ext.config.get("directoryRead") is True


# -- methods --------------------------------------------------------------------------------
async def _pages(client: Client, method: str, params: JSON, key: str) -> AsyncIterator[Any]:
    """Rule 6: every item of a paginated ``method``."""
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(max(1, client.max_pages)):
        sent = {**params, "cursor": cursor} if cursor is not None else dict(params)
        result = await client.request(method, sent, use_cache=False)
        items = as_list(result.get(key))
        if items is None:
            raise ProtocolViolationError(f"{method}: the result has no {key} array")
        for item in items:
            yield item
        nxt = result.get("nextCursor")
        if not isinstance(nxt, str) or not nxt:
            return
        if nxt in seen:
            raise ProtocolViolationError(f"{method}: the server repeated a cursor")
        seen.add(nxt)
        cursor = nxt
    raise ProtocolViolationError(f"{method}: more than {client.max_pages} pages")


async def list_skills(
    client: Client, *, max_resources: int = MAX_RESOURCES_PER_SKILL
) -> AsyncIterator[SkillEntry | InvalidSkillEntryError]:
    """Every entry of ``skills/list``, page by page (rule 6). An entry that fails rule 2
    is yielded as its :class:`InvalidSkillEntryError` (not raised: one bad entry does not
    hide the others; a host must not load it). Reads no file (no prefetch)."""
    async for item in _pages(client, "skills/list", {}, "skills"):
        try:
            yield SkillEntry.from_json(item, max_resources=max_resources)
        except InvalidSkillEntryError as exc:
            yield exc


async def get_skill(
    client: Client, uri: str, *, max_resources: int = MAX_RESOURCES_PER_SKILL
) -> SkillEntry:
    """``skills/get {uri}``: the server's current entry (rules 2, 4). Raises
    ``JSONRPCError`` -32602 for a URI the server does not serve, and
    :class:`InvalidSkillEntryError`."""
    result = await client.request("skills/get", {"uri": uri}, use_cache=False)
    entry = SkillEntry.from_json(result.get("skill"), max_resources=max_resources)
    if entry.uri != uri:
        raise InvalidSkillEntryError(uri, f"skills/get answered for {entry.uri}")
    return entry


def _content_bytes(uri: str, result: JSON) -> tuple[bytes, str | None, str | None]:
    contents = as_list(result.get("contents")) or []
    chosen = next((c for c in map(as_object, contents) if c and c.get("uri") == uri), None)
    if chosen is None:
        raise SkillVerificationError(uri, "resources/read returned no content for this URI")
    mime: Any = chosen.get("mimeType")
    text = chosen.get("text")
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass"), mime if isinstance(mime, str) else None, text
    blob = chosen.get("blob")
    if isinstance(blob, str):
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(uri, "the blob is not base64") from None
        return data, mime if isinstance(mime, str) else None, None
    raise SkillVerificationError(uri, "the content has neither text nor blob")


def verify_content(entry: SkillEntry, uri: str, data: bytes) -> None:
    """Rule 3 for bytes already in hand (a read, or a cache hit): size, digest, then
    ``SKILL.md``'s frontmatter. Raises a :class:`SkillVerificationError`."""
    listed = entry.file(uri)
    if entry.files is not None:
        if listed is None:
            raise UnlistedFileError(uri, f"not listed in the held entry of {entry.uri}")
        if len(data) != listed.size:
            raise SizeMismatchError(uri, f"{len(data)} bytes, the entry says {listed.size}")
        if digest_of(data) != listed.digest:
            raise DigestMismatchError(uri, f"content digest differs from {listed.digest}")
    if uri == entry.uri:
        try:
            found = parse_frontmatter(data)
        except FrontmatterError as exc:
            raise FrontmatterMismatchError(uri, str(exc)) from None
        if not same_json(found, entry.frontmatter):
            keys = sorted(
                k
                for k in {*found, *entry.frontmatter}
                if not same_json(found.get(k), entry.frontmatter.get(k))
            )
            raise FrontmatterMismatchError(uri, f"frontmatter differs in {', '.join(keys)}")


def _inside(entry: SkillEntry, uri: str) -> bool:
    """Rule 3 for a dynamic skill: ``uri``, normalised, is the skill's own or below it."""
    try:
        key = normal_uri(uri)
    except ValueError:
        return False
    root = normal_uri(entry.uri).removesuffix("/" + SKILL_FILE)
    return key.startswith(root + "/")


async def read_skill_file(client: Client, entry: SkillEntry, uri: str) -> SkillContent:
    """``resources/read`` of one of ``entry``'s files, verified (rule 3); raises
    :class:`UnlistedFileError` before sending anything for a URI the entry does not
    list, and :class:`SkillVerificationError` subclasses for a mismatch."""
    if entry.files is not None and entry.file(uri) is None:
        raise UnlistedFileError(uri, f"not listed in the held entry of {entry.uri}")
    if entry.files is None and not _inside(entry, uri):
        raise UnlistedFileError(uri, f"outside the dynamic skill {entry.uri}")
    result = await client.request("resources/read", {"uri": uri}, use_cache=False)
    data, mime, text = _content_bytes(uri, result)
    verify_content(entry, uri, data)
    return SkillContent(uri, data, mime, text)


async def read_directory(client: Client, uri: str) -> list[JSON]:
    """``resources/directory/read {uri}``: every direct child, all pages (rules 5, 6)."""
    if not directory_read_supported(client):
        raise DirectoryReadNotDeclaredError(
            "the server did not declare directoryRead: true; resources/directory/read is "
            "not sent (SEP-2640 §Capability Negotiation)"
        )
    children: list[JSON] = []
    async for item in _pages(client, "resources/directory/read", {"uri": uri}, "resources"):
        child = as_object(item)
        if child is None or not isinstance(child.get("uri"), str):
            raise ProtocolViolationError("resources/directory/read: a child without a uri")
        children.append(child)
    return children
