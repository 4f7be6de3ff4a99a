"""A skills directory on disk, scanned into an immutable snapshot of skills and files.

Spec: ``skills.mdx`` §Skill Format, §Resource Mapping, §Nested Skills, §Skill Entries,
§Limits, §Directory Resources (SEP-2640).

Rules:
1. Every directory under the root holding a file named ``SKILL.md`` is a skill; its
   skill path is its path under the root (``acme/billing/refunds``) and its files are
   every file below it, nested skills' files included. Nested skills are published
   too, flat. Files outside every skill are not served; the root itself may not be a
   skill (:class:`SkillLoadError`), and neither may a file outside every skill whose
   name is ``SKILL.md`` in another case (``skill.md``): a near miss is a problem.
2. A skill is refused (:class:`SkillLoadError`, every problem of the scan listed) when
   its last path segment is not a valid skill name, its ``SKILL.md`` has no readable
   frontmatter (:mod:`.frontmatter`), its frontmatter ``name`` differs from that
   segment, its ``description`` is missing, empty or over 1,024 characters, or (with
   ``enforce_limits``) it has more than 512 files or more than 16 MiB (:mod:`.names`).
3. A symbolic link whose target lies outside the root is refused, wherever it is. A
   link to a file inside the root is served as that file when the target itself would
   be served: inside a skill, with no hidden name on its path under the root (rule 4);
   a link to any other file (``../.env``, a file outside every skill) is left out, at
   the scan and at every read (:meth:`DirectoryCatalog.serves_target`); a link to a directory is not
   followed (so no cycle is possible). Only regular files are served.
4. Names starting with ``.`` (``.git``, ``.env``) are left out, files and directories,
   unless ``include_hidden=True``.
5. The scan visits at most ``max_files`` files and ``max_depth`` directory levels
   (:class:`SkillLoadError` beyond): a load loop is bounded.
6. A file's digest and size come from one read of its bytes. A later scan reuses them
   while the file's change key (size, modification time and status-change time in ns,
   inode) is unchanged, and re-reads only the files whose key changed
   (``DirectoryCatalog.hashed`` counts reads): a file replaced (``os.replace``) or
   rewritten in place with its size kept and its old mtime restored still has a new
   inode or ctime. A scan that finds the same directories and the same keys returns the last
   snapshot itself, rebuilding nothing.
7. Directory resources are every directory inside a skill and every directory above a
   skill (its prefix), each with its direct children: served files, and directories
   that are themselves directory resources.
8. A ``scheme`` that is not a lowercase RFC 3986 scheme, or a non-positive ``max_files``
   or ``max_depth``, is a ``ValueError`` at construction.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.core.shapes import JSON
from mcpkit.ext.skills.frontmatter import FrontmatterError, parse_frontmatter
from mcpkit.ext.skills.names import (
    DIRECTORY_MIME_TYPE,
    MAX_BYTES_PER_SKILL,
    MAX_DESCRIPTION_CHARS,
    MAX_RESOURCES_PER_SKILL,
    SKILL_FILE,
    check_skill_name,
    digest_of,
    mime_type_of,
    uri_authority,
    uri_segment,
)

__all__ = [
    "DirectoryCatalog",
    "FileRecord",
    "SkillLoadError",
    "SkillRecord",
    "Snapshot",
    "check_frontmatter",
    "uri_of",
]


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")


class SkillLoadError(ValueError):
    """A skills directory that cannot be served as it is; the message lists every
    problem found (rules 1-5)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("cannot serve these skills:\n  - " + "\n  - ".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One served file: ``rel`` (path under the root, ``/``-separated), ``uri``,
    ``size`` (bytes), ``digest`` (``sha256:...``), ``mime_type``, ``mtime_ns`` and
    ``change_key`` (rule 6: size, mtime ns, ctime ns, inode when it was read)."""

    rel: str
    uri: str
    size: int
    digest: str
    mime_type: str
    mtime_ns: int
    change_key: tuple[int, int, int, int] = (0, 0, 0, 0)

    def manifest(self) -> JSON:
        """The ``SkillResource`` of this file: ``{uri, digest, size}``."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class SkillRecord:
    """One skill: ``path`` (skill path), ``uri`` (of its ``SKILL.md``), ``frontmatter``
    (a JSON object) and ``files`` (sorted by URI; ``None`` for a dynamic skill)."""

    path: str
    uri: str
    frontmatter: JSON
    files: tuple[FileRecord, ...] | None

    def entry(self) -> JSON:
        """The ``Skill`` entry of ``skills/list`` and ``skills/get``."""
        resources: Any = "dynamic" if self.files is None else [f.manifest() for f in self.files]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one scan found: skills by ``SKILL.md`` URI, served files by URI, and each
    directory resource's children (``Resource`` objects, by directory URI)."""

    # kind-ok: unbounded-table one entry per skill on disk, the scan stops at max_files
    skills: dict[str, SkillRecord] = field(default_factory=dict[str, SkillRecord])
    # kind-ok: unbounded-table one entry per file on disk, the scan stops at max_files
    files: dict[str, FileRecord] = field(default_factory=dict[str, FileRecord])
    # kind-ok: unbounded-table one entry per directory on disk, the scan stops at max_files
    directories: dict[str, list[JSON]] = field(default_factory=dict[str, list[JSON]])


def uri_of(scheme: str, rel: str) -> str:
    """The URI of ``rel`` (a ``/``-separated path) under ``scheme``."""
    first, *rest = rel.split("/")
    return f"{scheme}://" + "/".join([uri_authority(first), *map(uri_segment, rest)])


def check_frontmatter(path: str, frontmatter: JSON) -> list[str]:
    """Rule 2's frontmatter checks for the skill at ``path``: the problems found."""
    problems: list[str] = []
    segment = path.rsplit("/", 1)[-1]
    name = frontmatter.get("name")
    if name != segment:
        problems.append(
            f"{path}: frontmatter name {name!r} must equal the directory name {segment!r}"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(f"{path}: frontmatter needs a non-empty string 'description'")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        problems.append(f"{path}: description is over {MAX_DESCRIPTION_CHARS} characters")
    return problems


@dataclass(slots=True)
class _Walk:
    # kind-ok: unbounded-table one entry per file on disk, the walk stops at max_files
    files: dict[str, os.stat_result] = field(default_factory=dict[str, os.stat_result])
    # kind-ok: unbounded-table one entry per link on disk, the walk stops at max_files
    links: dict[str, str] = field(default_factory=dict[str, str])
    # kind-ok: unbounded-table one entry per directory on disk, bounded by max_files and depth
    dirs: set[str] = field(default_factory=set[str])
    problems: list[str] = field(default_factory=list[str])


class DirectoryCatalog:
    """Scans ``root`` into a :class:`Snapshot` (rules 1-7), keeping digests between
    scans. ``scheme`` names the URI scheme (``skill``)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        scheme: str = "skill",
        include_hidden: bool = False,
        enforce_limits: bool = True,
        max_files: int = 100_000,
        max_depth: int = 32,
    ) -> None:
        if not _SCHEME.match(scheme):
            raise ValueError(
                f"scheme {scheme!r} is not a URI scheme (RFC 3986: a lowercase letter, then "
                "lowercase letters, digits, '+', '-' or '.')"
            )
        if max_files < 1 or max_depth < 1:
            raise ValueError("max_files and max_depth must be positive integers")
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise SkillLoadError([f"{root}: not a directory"])
        self.scheme = scheme
        self.include_hidden = include_hidden
        self.enforce_limits = enforce_limits
        self.max_files = max_files
        self.max_depth = max_depth
        # kind-ok: unbounded-table one entry per file on disk, bounded by max_files
        self._digests: dict[str, FileRecord] = {}
        # kind-ok: unbounded-table one entry per skill on disk, bounded by max_files
        self._frontmatter: dict[tuple[str, str], JSON] = {}
        self._last: tuple[Any, Snapshot] | None = None
        self.hashed = 0
        """How many file reads the scans made for digests (rule 6)."""

    # -- the walk ---------------------------------------------------------------------
    def _walk(self) -> _Walk:
        out = _Walk()
        root = str(self.root)
        stack: list[tuple[str, int]] = [("", 0)]
        while stack:
            rel_dir, depth = stack.pop()
            if depth > self.max_depth:
                out.problems.append(f"{rel_dir}: deeper than {self.max_depth} levels")
                continue
            try:
                entries = list(os.scandir(os.path.join(root, rel_dir)))
            except OSError as exc:
                out.problems.append(f"{rel_dir or '.'}: cannot be listed ({exc.strerror})")
                continue
            for entry in entries:
                if entry.name.startswith(".") and not self.include_hidden:
                    continue
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if os.path.commonpath([root, target]) != root:
                        out.problems.append(f"{rel}: a symbolic link out of the root")
                        continue
                    if os.path.isdir(target):
                        continue  # rule 3: not followed
                    out.links[rel] = Path(os.path.relpath(target, root)).as_posix()
                try:
                    info = os.stat(entry.path)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    out.dirs.add(rel)
                    stack.append((rel, depth + 1))
                elif stat.S_ISREG(info.st_mode):
                    out.files[rel] = info
                    if len(out.files) > self.max_files:
                        out.problems.append(f"more than {self.max_files} files under the root")
                        return out
        return out

    def serves_target(self, target: str, skill_dirs: Iterable[str]) -> bool:
        """Rule 3: whether a link to ``target`` (its ``/``-separated path under the
        root) may be served: inside one of ``skill_dirs``, no hidden name on the way."""
        if not self.include_hidden and any(p.startswith(".") for p in target.split("/")):
            return False
        dirs = set(skill_dirs)
        return any(a in dirs for a in _ancestors(target))

    def _record(self, rel: str, info: os.stat_result) -> FileRecord:
        """Rule 6: the cached record while size and mtime hold, else one fresh read."""
        known = self._digests.get(rel)
        if known is not None and known.change_key == _change_key(info):
            return known
        data = (self.root / rel).read_bytes()
        self.hashed += 1
        record = FileRecord(
            rel,
            uri_of(self.scheme, rel),
            len(data),
            digest_of(data),
            mime_type_of(rel.rsplit("/", 1)[-1], data),
            info.st_mtime_ns,
            _change_key(info),
        )
        self._digests[rel] = record
        return record

    # -- the scan ---------------------------------------------------------------------
    def scan(self) -> Snapshot:
        """Walk the root and build a :class:`Snapshot`; raises :class:`SkillLoadError`
        listing every problem (rules 1-5)."""
        walk = self._walk()
        signature = (
            frozenset(walk.dirs),
            {rel: _change_key(i) for rel, i in walk.files.items()},
        )
        if not walk.problems and self._last is not None and self._last[0] == signature:
            return self._last[1]  # rule 6: nothing changed, nothing is rebuilt
        problems = walk.problems
        if SKILL_FILE in walk.files:
            problems.append(f"the root {self.root} holds a SKILL.md: serve its parent instead")
        skill_dirs = {rel.rsplit("/", 1)[0] for rel in walk.files if rel.endswith("/" + SKILL_FILE)}
        problems += near_misses(walk.files, skill_dirs)
        members: dict[str, list[str]] = {d: [] for d in skill_dirs}
        served: set[str] = set()
        for rel in walk.files:
            target = walk.links.get(rel)
            if target is not None and not self.serves_target(target, skill_dirs):
                continue  # rule 3
            for ancestor in _ancestors(rel):
                if ancestor in members:
                    members[ancestor].append(rel)
                    served.add(rel)
        records: dict[str, FileRecord] = {}
        for rel in sorted(served):
            size = walk.files[rel].st_size
            if self.enforce_limits and size > MAX_BYTES_PER_SKILL:
                problems.append(f"{rel}: {size} bytes, over the 16 MiB per-skill limit")
                continue
            try:
                records[rel] = self._record(rel, walk.files[rel])
            except OSError as exc:
                problems.append(f"{rel}: cannot be read ({exc.strerror})")
        skills: dict[str, SkillRecord] = {}
        for path in sorted(skill_dirs):
            skill, found = self._skill(path, members[path], records)
            problems += found
            if skill is not None:
                skills[skill.uri] = skill
        if problems:
            raise SkillLoadError(problems)
        # kind-ok: unbounded-table one entry per served file, the scan stops at max_files
        self._digests = {rel: r for rel, r in self._digests.items() if rel in records}
        files = {r.uri: r for r in records.values()}
        snapshot = Snapshot(skills, files, self._directories(walk.dirs, skill_dirs, records))
        self._last = (signature, snapshot)
        return snapshot

    def _skill(
        self, path: str, rels: list[str], records: dict[str, FileRecord]
    ) -> tuple[SkillRecord | None, list[str]]:
        problems: list[str] = []
        name_problem = check_skill_name(path.rsplit("/", 1)[-1])
        if name_problem is not None:
            problems.append(f"{path}: {name_problem}")
        skill_md = records.get(f"{path}/{SKILL_FILE}")
        if skill_md is None:
            return None, problems
        files = tuple(sorted((records[r] for r in rels if r in records), key=lambda f: f.uri))
        if self.enforce_limits:
            if len(files) > MAX_RESOURCES_PER_SKILL:
                problems.append(f"{path}: {len(files)} files, over the 512-file per-skill limit")
            total = sum(f.size for f in files)
            if total > MAX_BYTES_PER_SKILL:
                problems.append(f"{path}: {total} bytes, over the 16 MiB per-skill limit")
        key = (path, skill_md.digest)
        frontmatter = self._frontmatter.get(key)
        if frontmatter is None:
            try:
                frontmatter = parse_frontmatter((self.root / skill_md.rel).read_bytes())
            except (FrontmatterError, OSError) as exc:
                return None, [*problems, f"{path}/{SKILL_FILE}: {exc}"]
            # kind-ok: unbounded-table one entry per skill on disk, the scan stops at max_files
            self._frontmatter = {k: v for k, v in self._frontmatter.items() if k[0] != path}
            self._frontmatter[key] = frontmatter
        problems += check_frontmatter(path, frontmatter)
        return SkillRecord(path, skill_md.uri, frontmatter, files), problems

    def _directories(
        self, dirs: set[str], skill_dirs: set[str], records: dict[str, FileRecord]
    ) -> dict[str, list[JSON]]:
        """Rule 7."""
        inside = {d for d in dirs if any(a in skill_dirs for a in (d, *_ancestors(d)))}
        above = {a for d in skill_dirs for a in _ancestors(d)}
        resources = inside | above | skill_dirs
        uris = {d: uri_of(self.scheme, d) for d in resources}
        children: dict[str, list[JSON]] = {uri: [] for uri in uris.values()}
        for d in sorted(resources):
            parent = d.rsplit("/", 1)[0] if "/" in d else ""
            if parent in resources:
                name = d.rsplit("/", 1)[-1]
                children[uris[parent]].append(
                    {"uri": uris[d], "name": name, "mimeType": DIRECTORY_MIME_TYPE}
                )
        for rel, record in sorted(records.items()):
            parent = rel.rsplit("/", 1)[0]
            if parent in resources:
                children[uris[parent]].append(
                    {
                        "uri": record.uri,
                        "name": rel.rsplit("/", 1)[-1],
                        "mimeType": record.mime_type,
                        "size": record.size,
                    }
                )
        return children


def near_misses(files: Iterable[str], skill_dirs: set[str]) -> list[str]:
    """Rule 1: files outside every skill named ``SKILL.md`` in another case."""
    found: list[str] = []
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        misspelt = name != SKILL_FILE and name.casefold() == SKILL_FILE.casefold()
        if misspelt and not any(a in skill_dirs for a in _ancestors(rel)):
            found.append(f"{rel}: named like {SKILL_FILE} but not {SKILL_FILE} (not a skill)")
    return found


def _change_key(info: os.stat_result) -> tuple[int, int, int, int]:
    """Rule 6: what tells a file changed without reading it."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def _ancestors(rel: str) -> list[str]:
    """The proper ancestor directories of ``rel``, nearest first (``a/b/c`` -> ``a/b``,
    ``a``)."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
