"""Host helpers: a per-server skill registry, content-bound approval and an on-disk cache.

Spec: ``skills.mdx`` §Skill URIs, §Names, §Lazy Retrieval, §The Acting Window and the
Held Entry, §Security Considerations (content-bound approval, cache integrity, cache
isolation and durable origin) (SEP-2640).

Rules:
1. A skill's identity is ``(label, uri)``: ``label`` is the name the host gave the
   server when it connected (never ``serverInfo.name``). Nothing is keyed by ``uri``
   alone.
2. No prefetch: :meth:`SkillRegistry.add_server` calls ``skills/list`` and nothing
   else; :meth:`SkillRegistry.approve` reads nothing. A file is read when
   :meth:`SkillRegistry.read` is asked for it, verified against the held entry
   (:mod:`.client` rule 3).
3. Names never shadow: :meth:`SkillRegistry.resolve` finds a name within one server's
   namespace; a name that several skills share (same server or not, the host's own
   filesystem skills included) raises :class:`AmbiguousSkillNameError` listing every
   qualified name, which always resolves. A qualified name is ``label:skill-path`` for
   a ``skill://`` URI and ``label:scheme://skill-path`` for any other scheme (parsed
   with ``urllib.parse``); two skills of one server that would still share one (URIs
   differing only in spelling) are both named ``label:<their full URI>``, so a
   qualified name never stands for two skills.
4. An approval binds to the entry's ``{(uri, digest)}`` set; a refreshed entry with a
   different set revokes it (:meth:`SkillRegistry.refresh` returns True). A dynamic
   skill cannot be approved.
5. :class:`SkillCache` keeps verified bytes under ``directory/<label>/<uri>`` (both
   percent-encoded, ``.`` too, so no label is ``.`` or ``..``; a long URI becomes its
   SHA-256), so the origin is recoverable from the path. A label is 1 to
   :data:`MAX_LABEL_BYTES` UTF-8 bytes (``ValueError`` otherwise, in
   :meth:`SkillRegistry.add_server` and every cache method), so every path segment
   stays under the file system's 255-byte limit. It refuses a directory inside, or
   holding, any filesystem-skill discovery path it is given; creates it owner-only
   (0700); writes each file once, atomically (never modified in place); and recomputes
   the digest of the cached bytes on every read, treating a mismatch as a miss (the
   entry is deleted).
6. A registry keeps at most ``max_skills`` (10,000) entries per server, each URI at most
   :data:`~.client.MAX_URI_BYTES` (client rule 2): a listing beyond raises
   :class:`TooManySkillsError` and registers nothing for that server.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from mcpkit.client import ClientError
from mcpkit.ext.skills.client import (
    InvalidSkillEntryError,
    SkillContent,
    SkillEntry,
    SkillFile,
    get_skill,
    list_skills,
    read_skill_file,
    verify_content,
)
from mcpkit.ext.skills.names import digest_of

if TYPE_CHECKING:
    from mcpkit.client import Client

MAX_LABEL_BYTES = 64
"""The longest server label, in UTF-8 bytes (rule 5)."""

__all__ = [
    "MAX_LABEL_BYTES",
    "AmbiguousSkillNameError",
    "SkillCache",
    "SkillRegistry",
    "TooManySkillsError",
    "UnknownSkillError",
]


class UnknownSkillError(ClientError, KeyError):
    """No skill of that name (or ``(label, uri)``) is registered."""


class TooManySkillsError(ClientError):
    """Rule 6: a server listed more skills than the registry keeps."""


class AmbiguousSkillNameError(ClientError):
    """Rule 3: a name several skills share; ``candidates`` are their qualified names."""

    def __init__(self, name: str, candidates: list[str]) -> None:
        super().__init__(f"skill name {name!r} is ambiguous: use one of {', '.join(candidates)}")
        self.candidates = candidates


@dataclass
class _Server:
    client: Client
    # kind-ok: unbounded-table peer-chosen URIs, at most max_skills per server (rule 6)
    entries: dict[str, SkillEntry] = field(default_factory=dict[str, SkillEntry])
    invalid: list[InvalidSkillEntryError] = field(default_factory=list[InvalidSkillEntryError])


class SkillRegistry:
    """The host's skills, per server label (rules 1-4). ``local_names`` are the host's
    own filesystem skills' names, which an MCP-served name never shadows.
    ``cache``: an optional :class:`SkillCache`."""

    def __init__(
        self,
        *,
        local_names: Iterable[str] = (),
        cache: SkillCache | None = None,
        max_skills: int = 10_000,
    ) -> None:
        self.local_names = frozenset(local_names)
        self.max_skills = max_skills
        self.cache = cache
        # kind-ok: unbounded-table servers the host connects, one entry per label
        self._servers: dict[str, _Server] = {}
        # kind-ok: unbounded-table approvals the user gives, one per registered skill
        self._approved: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}

    async def add_server(self, label: str, client: Client) -> list[SkillEntry]:
        """List ``client``'s skills under ``label`` (rule 2: nothing else is fetched).
        Entries that fail checking are kept apart in :meth:`invalid`, never loaded."""
        label_segment(label)
        server = _Server(client)
        async for item in list_skills(client):
            if len(server.entries) + len(server.invalid) >= self.max_skills:
                raise TooManySkillsError(
                    f"server {label!r} lists more than {self.max_skills} skills "
                    "(SkillRegistry(max_skills=...))"
                )
            if isinstance(item, InvalidSkillEntryError):
                server.invalid.append(item)
            else:
                server.entries[item.uri] = item
        self._servers[label] = server
        return list(server.entries.values())

    def remove_server(self, label: str) -> None:
        """Forget ``label``'s skills and approvals, and its cached files."""
        self._servers.pop(label, None)
        # kind-ok: unbounded-table approvals the user gives, one per registered skill
        self._approved = {k: v for k, v in self._approved.items() if k[0] != label}
        if self.cache is not None:
            self.cache.remove_server(label)

    def invalid(self, label: str) -> list[InvalidSkillEntryError]:
        """The entries of ``label`` that must not be loaded, with why."""
        return list(self._servers[label].invalid)

    def entry(self, label: str, uri: str) -> SkillEntry:
        server = self._servers.get(label)
        found = server.entries.get(uri) if server is not None else None
        if found is None:
            raise UnknownSkillError(f"no skill {uri!r} from server {label!r}")
        return found

    def qualified_names(self) -> dict[str, tuple[str, str]]:
        """``label:skill-path`` -> ``(label, uri)`` for every registered skill."""
        out: dict[str, tuple[str, str]] = {}
        for label, server in self._servers.items():
            named: dict[str, list[str]] = {}
            for uri, entry in server.entries.items():
                named.setdefault(f"{label}:{_short_name(entry.root)}", []).append(uri)
            for name, uris in named.items():
                if len(uris) == 1:
                    out[name] = (label, uris[0])
                else:  # rule 3: spelled apart, so neither shadows the other
                    out.update({f"{label}:{uri}": (label, uri) for uri in uris})
        return out

    def resolve(self, name: str) -> tuple[str, str]:
        """Rule 3: ``(label, uri)`` for a qualified name, or for a bare skill name that
        exactly one registered skill has and no local skill has."""
        qualified = self.qualified_names()
        if name in qualified:
            return qualified[name]
        matches = sorted(
            q for q, (label, uri) in qualified.items() if self.entry(label, uri).name == name
        )
        if name in self.local_names and matches:
            raise AmbiguousSkillNameError(name, [f"local:{name}", *matches])
        if len(matches) > 1:
            raise AmbiguousSkillNameError(name, matches)
        if not matches:
            raise UnknownSkillError(f"no skill named {name!r}")
        return qualified[matches[0]]

    # -- approval (rule 4) --------------------------------------------------------------
    def approve(self, label: str, uri: str) -> None:
        """Record the user's approval of the held entry's content set."""
        entry = self.entry(label, uri)
        if entry.files is None:
            raise ValueError(f"{uri} is dynamic: its content cannot be bound to an approval")
        self._approved[(label, uri)] = entry.content_set()

    def is_approved(self, label: str, uri: str) -> bool:
        bound = self._approved.get((label, uri))
        return bound is not None and bound == self.entry(label, uri).content_set()

    async def refresh(self, label: str, uri: str) -> bool:
        """``skills/get`` the entry again; True when its content set changed (any
        approval of it is then revoked)."""
        server = self._servers[label]
        fresh = await get_skill(server.client, uri)
        old = server.entries.get(uri)
        server.entries[uri] = fresh
        changed = old is None or old.content_set() != fresh.content_set()
        if changed:
            self._approved.pop((label, uri), None)
        return changed

    # -- reading (rule 2) ---------------------------------------------------------------
    async def read(self, label: str, skill_uri: str, file_uri: str) -> SkillContent:
        """One file of a registered skill, from ``label``'s server only, verified against
        the held entry (or from the cache when it verifies)."""
        entry = self.entry(label, skill_uri)
        listed = entry.file(file_uri)
        if self.cache is not None and listed is not None:
            data = self.cache.get(label, listed)
            if data is not None:
                verify_content(entry, file_uri, data)
                return SkillContent(file_uri, data, None, None)
        content = await read_skill_file(self._servers[label].client, entry, file_uri)
        if self.cache is not None and listed is not None:
            self.cache.put(label, listed, content.data)
        return content


class SkillCache:
    """Rule 5: verified skill files on disk, keyed by server label and URI."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        discovery_paths: Iterable[str | os.PathLike[str]] = (),
    ):
        self.directory = Path(directory).resolve()
        for found in discovery_paths:
            other = Path(found).resolve()
            if self.directory.is_relative_to(other) or other.is_relative_to(self.directory):
                raise ValueError(
                    f"the skill cache {self.directory} overlaps the skill discovery path "
                    f"{other}: MCP-served skills must be cached outside every discovery path"
                )
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)

    def path_for(self, label: str, uri: str) -> Path:
        """Where ``label``'s ``uri`` is cached (rule 5)."""
        name = quote(uri, safe="")
        if len(name) > 200:
            name = "sha256-" + hashlib.sha256(uri.encode("utf-8")).hexdigest()
        return self.directory / label_segment(label) / name

    def get(self, label: str, file: SkillFile) -> bytes | None:
        """The cached bytes of ``file`` when they still hash to its digest, else None."""
        path = self.path_for(label, file.uri)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if len(data) != file.size or digest_of(data) != file.digest:
            path.unlink(missing_ok=True)
            return None
        return data

    def put(self, label: str, file: SkillFile, data: bytes) -> None:
        """Store verified bytes (refused when they do not match ``file``)."""
        if len(data) != file.size or digest_of(data) != file.digest:
            raise ValueError(f"{file.uri}: only verified bytes are cached")
        path = self.path_for(label, file.uri)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def remove_server(self, label: str) -> None:
        """Delete every file cached for ``label``."""
        shutil.rmtree(self.directory / label_segment(label), ignore_errors=True)


def label_segment(label: str) -> str:
    """Rule 5: ``label`` as one path segment (never ``.`` or ``..``); ``ValueError``
    for an empty label or one over :data:`MAX_LABEL_BYTES`."""
    if not label:
        raise ValueError("a server label must be a non-empty string the host chose")
    if len(label.encode("utf-8", "surrogatepass")) > MAX_LABEL_BYTES:
        raise ValueError(f"a server label is at most {MAX_LABEL_BYTES} UTF-8 bytes")
    return quote(label, safe="").replace(".", "%2E")


def _short_name(root: str) -> str:
    """Rule 3: the skill path of a ``skill://`` root, else the root with its scheme."""
    parts = urlsplit(root)
    path = parts.netloc + parts.path
    return path if parts.scheme == "skill" else f"{parts.scheme}://{path}"
