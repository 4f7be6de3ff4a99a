"""The server side: serve a skills directory (and generated skills) on an mcpkit Server.

Spec: ``skills.mdx`` §Capability Negotiation, §Resource Mapping, §Listing Skills,
§Getting a Skill, §Reading Directories, §Error Handling (SEP-2640).

Rules:
1. :meth:`Skills.install` advertises ``io.modelcontextprotocol/skills`` inline under
   ``capabilities.extensions`` with exactly the spec's settings (``{"directoryRead":
   true}`` or ``{}``), on both eras, and declares the ``resources`` capability even
   when no skill file is served yet (the spec requires it). ``specVersion`` and
   ``stability`` travel in core's ``io.mcpkit/extensions`` about-block.
2. Every file of a directory skill is an ordinary resource (``resources/list``,
   ``resources/read``): ``text`` for UTF-8 text, ``blob`` otherwise; ``SKILL.md`` is
   ``text/markdown`` with ``name`` and ``description`` from its frontmatter and the
   other frontmatter fields under ``_meta["io.modelcontextprotocol.skills/<field>"]``.
   A read returns the file's bytes as they are on disk now: a client holding an older
   entry sees a mismatch and refreshes with ``skills/get``.
3. ``skills/list`` pages entries with the server's ``page_size`` (never splitting one)
   and an opaque cursor (-32602 for a bad one); ``skills/get {uri}`` answers the same
   entry for every served skill, else -32602. Both carry ``resultType: "complete"``;
   on 2026-07-28 also ``ttlMs`` and ``cacheScope`` (``Server(cache_hints=...)`` for
   ``skills/list`` / ``skills/get``, default 0 ms, private); on the handshake era not.
4. ``resources/directory/read {uri, cursor?}`` (only with ``directory_read=True``)
   lists a directory resource's direct children, paged; subdirectories are
   ``inode/directory`` without a trailing slash; -32602 for a URI that is not a
   directory resource. The result has ``resultType: "complete"``.
5. The directory is re-scanned (:mod:`.catalog` rule 6: stat only, re-hash only what
   changed) before ``skills/get`` and before the first page (no cursor) of
   ``skills/list``, ``resources/list`` and ``resources/directory/read``, at most once per
   ``recheck_interval_s`` (0: every time); later pages page through that snapshot.
   Changed registrations go through ``add_resource``/``remove_resource``, so
   handshake-era sessions get ``notifications/resources/list_changed``. A re-scan that
   finds a problem keeps serving the last good snapshot and logs the problem once.
6. A dynamic skill (:meth:`Skills.add_dynamic`) has ``resources: "dynamic"``; its
   producer (sync or async, no arguments) returns ``{file path: str | bytes}`` and is
   called on every read and directory read. Without a ``SKILL.md`` in its output, one
   is made from the entry's frontmatter.
7. ``watch=True`` (the ``watch`` extra: ``watchfiles``) also re-scans on every change
   the file watcher reports while the server runs (its lifespan), so handshake-era
   sessions hear ``list_changed`` without anyone listing first.
8. The server's list filters (:meth:`~mcpkit.server.Server.add_list_filter`) apply here
   as to ``resources/read``: a skill whose ``SKILL.md`` the request may not see is left
   out of ``skills/list`` and is unknown to ``skills/get`` (-32602); a directory shows
   only visible files and directories holding one, and a directory with none is unknown
   (-32602).
"""

from __future__ import annotations

import base64
import importlib.util
import inspect
import json
import logging
import math
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import yaml

from mcpkit.core.extensions import Extension, Stability
from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.skills.catalog import (
    DirectoryCatalog,
    FileRecord,
    SkillLoadError,
    SkillRecord,
    Snapshot,
    check_frontmatter,
    uri_of,
)
from mcpkit.ext.skills.frontmatter import FrontmatterError, parse_frontmatter, same_json
from mcpkit.ext.skills.names import (
    DIRECTORY_MIME_TYPE,
    EXTENSION_ID,
    META_PREFIX,
    SKILL_FILE,
    SPEC_VERSION,
    check_skill_name,
    is_text,
    mime_type_of,
)
from mcpkit.server import CacheHint, JSONRPCError, ResourceNotFoundError

if TYPE_CHECKING:
    from mcpkit.server import Context, Server

__all__ = ["Producer", "Skills"]

logger = logging.getLogger("mcpkit.ext.skills")
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
DEFAULT_HINT = CacheHint(0)
Producer = Callable[[], "Mapping[str, str | bytes] | Awaitable[Mapping[str, str | bytes]]"]
"""A dynamic skill's content: ``{path under the skill: text or bytes}``."""


class Skills:
    """The Skills extension for one server: a directory's skills and generated ones.

    ``Skills.from_directory(path)`` serves ``path`` (:mod:`.catalog`);
    ``directory_read`` (default True) serves ``resources/directory/read``;
    ``recheck_interval_s`` bounds how often the directory is re-scanned (rule 5)."""

    def __init__(
        self,
        catalog: DirectoryCatalog | None = None,
        *,
        directory_read: bool = True,
        recheck_interval_s: float = 0.0,
        stability: Stability = Stability.STABLE,
        watch: bool = False,
    ) -> None:
        if not (recheck_interval_s >= 0 and math.isfinite(recheck_interval_s)):
            raise ValueError(
                f"recheck_interval_s must be finite and >= 0, not {recheck_interval_s!r}"
            )
        if watch and catalog is None:
            raise ValueError("Skills(watch=True) needs a directory to watch")
        if watch and importlib.util.find_spec("watchfiles") is None:
            raise ImportError(
                "Skills(watch=True) needs watchfiles: pip install 'mcpkit-ext-skills[watch]'"
            )
        self.watch = watch
        self.catalog = catalog
        self.directory_read = directory_read
        self.recheck_interval_s = recheck_interval_s
        self.stability = stability
        self.server: Server | None = None
        self.snapshot = catalog.scan() if catalog is not None else Snapshot()
        # kind-ok: unbounded-table skills the server's code declares
        self.dynamic: dict[str, tuple[SkillRecord, Producer]] = {}
        self._checked_s = time.monotonic()
        self._lock = anyio.Lock()
        self._last_problem = ""

    @classmethod
    def from_directory(
        cls,
        path: str | Path,
        *,
        directory_read: bool = True,
        include_hidden: bool = False,
        enforce_limits: bool = True,
        recheck_interval_s: float = 0.0,
        scheme: str = "skill",
        watch: bool = False,
        allow_empty: bool = False,
    ) -> Skills:
        """Serve every skill under ``path``. Raises :class:`~.catalog.SkillLoadError`
        listing every problem (naming, frontmatter, limits, escaping links, a file named
        like ``SKILL.md`` in another case), or for a directory with no skill at all
        unless ``allow_empty`` (a directory meant to fill later); ``FileNotFoundError``
        for a missing ``path``."""
        catalog = DirectoryCatalog(
            path, scheme=scheme, include_hidden=include_hidden, enforce_limits=enforce_limits
        )
        skills = cls(
            catalog,
            directory_read=directory_read,
            recheck_interval_s=recheck_interval_s,
            watch=watch,
        )
        if not allow_empty and not skills.snapshot.skills:
            raise SkillLoadError(
                [
                    f"{path}: no skill found (no sub-directory holds a {SKILL_FILE}); pass "
                    "allow_empty=True to serve a directory that fills later"
                ]
            )
        return skills

    # -- the extension ----------------------------------------------------------------
    def extension(self) -> Extension:
        """The ``capabilities.extensions`` entry (rule 1)."""
        config = {"directoryRead": True} if self.directory_read else {}
        return Extension(EXTENSION_ID, SPEC_VERSION, self.stability, config)

    def install(self, server: Server) -> Skills:
        """Register the methods, the resources and the capability on ``server``; once."""
        if self.server is not None:
            raise RuntimeError("this Skills instance is already installed on a server")
        if server.method("modern", "skills/list") is not None:
            raise ValueError("this server already serves skills/list (one Skills per server)")
        self.server = server
        server.add_extension(self)
        server.add_capability("resources", partial(_resources_capability, server))
        server.add_method("skills/list", self._skills_list)
        server.add_method("skills/get", self._skills_get)
        if self.directory_read:
            server.add_method("resources/directory/read", self._directory_read)
        server.add_middleware(self._recheck_on_list)
        if self.watch:
            server.add_lifespan(lambda _server: self._watching())
        self._sync(Snapshot(), self.snapshot)
        for record, producer in self.dynamic.values():
            self._register_dynamic(record, producer)
        return self

    def add_dynamic(
        self,
        path: str,
        producer: Producer,
        *,
        description: str,
        frontmatter: Mapping[str, Any] | None = None,
        scheme: str = "skill",
    ) -> SkillRecord:
        """Serve a generated skill at ``path`` (``reports/daily``: the last segment is its
        name) with ``resources: "dynamic"`` (rule 6). ``frontmatter`` adds fields beside
        ``name`` and ``description``. Raises ``ValueError`` for a bad name or path."""
        segments = path.split("/")
        if any(not s or s in (".", "..") for s in segments):
            raise ValueError(f"add_dynamic: {path!r} is not a skill path")
        problem = check_skill_name(segments[-1])
        if problem is not None:
            raise ValueError(f"add_dynamic: {problem}")
        fm: JSON = {**(frontmatter or {}), "name": segments[-1], "description": description}
        problems = check_frontmatter(path, fm)
        if problems:
            raise ValueError("add_dynamic: " + "; ".join(problems))
        json.dumps(fm)  # a TypeError here, not on the wire
        record = SkillRecord(path, uri_of(scheme, f"{path}/{SKILL_FILE}"), fm, None)
        if record.uri in self.snapshot.skills or record.uri in self.dynamic:
            raise ValueError(f"add_dynamic: a skill is served at {record.uri} already")
        self.dynamic[record.uri] = (record, producer)
        if self.server is not None:
            self._register_dynamic(record, producer)
        return record

    # -- change (rule 5) ----------------------------------------------------------------
    async def refresh(self, *, force: bool = False) -> bool:
        """Re-scan the directory now (``force``) or when ``recheck_interval_s`` has
        passed; returns whether anything served changed."""
        catalog = self.catalog
        if catalog is None:
            return False
        async with self._lock:
            now = time.monotonic()
            if not force and now - self._checked_s < self.recheck_interval_s:
                return False
            self._checked_s = now
            try:
                fresh = await anyio.to_thread.run_sync(catalog.scan)
            except (SkillLoadError, OSError) as exc:
                if str(exc) != self._last_problem:
                    logger.warning("skills: keeping the last good snapshot: %s", exc)
                    self._last_problem = str(exc)
                return False
            self._last_problem = ""
            old, self.snapshot = self.snapshot, fresh
            return self._sync(old, fresh)

    def _sync(self, old: Snapshot, new: Snapshot) -> bool:
        server = self.server
        if server is None:
            return False
        changed = False
        for uri in old.files.keys() - new.files.keys():
            server.remove_resource(uri)
            changed = True
        for uri, record in new.files.items():
            before = old.files.get(uri)
            skill_md = record.rel.endswith(SKILL_FILE) and new.skills.get(uri)
            was = old.skills.get(uri)
            if (
                before is None
                or before.digest != record.digest
                or (skill_md and (was is None or was.frontmatter != skill_md.frontmatter))
            ):
                self._register_file(server, record, skill_md or None)
                changed = True
        return changed or old.skills.keys() != new.skills.keys()

    def _register_file(self, server: Server, record: FileRecord, skill: SkillRecord | None) -> None:
        options: dict[str, Any] = {"mime_type": record.mime_type, "size": record.size}
        name = record.rel.rsplit("/", 1)[-1]
        if skill is not None:
            name = str(skill.frontmatter["name"])
            options["description"] = skill.frontmatter["description"]
            extra = {
                META_PREFIX + k: v
                for k, v in skill.frontmatter.items()
                if k not in ("name", "description")
            }
            if extra:
                options["meta"] = extra
        server.add_resource(partial(self._read_file, record.uri), record.uri, name=name, **options)

    def _read_file(self, uri: str) -> str | bytes:
        """Rule 2: the file's bytes now; refused when it left the snapshot or the root."""
        record = self.snapshot.files.get(uri)
        catalog = self.catalog
        if record is None or catalog is None:
            raise ResourceNotFoundError(uri)
        path = (catalog.root / record.rel).resolve()
        if not path.is_relative_to(catalog.root):
            raise ResourceNotFoundError(uri)
        target = path.relative_to(catalog.root).as_posix()
        skill_dirs = (s.path for s in self.snapshot.skills.values())
        if target != record.rel and not catalog.serves_target(target, skill_dirs):
            raise ResourceNotFoundError(uri)  # catalog rule 3, re-checked at the read
        try:
            data = path.read_bytes()
        except OSError:
            raise ResourceNotFoundError(uri) from None
        return data.decode("utf-8") if is_text(data) else data

    @asynccontextmanager
    async def _watching(self) -> AsyncGenerator[None]:
        """Rule 7: re-scan on every change ``watchfiles`` reports, while serving."""
        import watchfiles

        awatch: Any = cast(Any, watchfiles).awatch  # its stop_event type is partly unknown
        catalog = self.catalog
        assert catalog is not None
        stop = anyio.Event()

        async def watch() -> None:
            changes = awatch(catalog.root, stop_event=stop, debounce=100, rust_timeout=200)
            async for _ in changes:
                await self.refresh(force=True)

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            try:
                yield
            finally:
                stop.set()
                group.cancel_scope.cancel()

    async def _recheck_on_list(self, ctx: Context, call_next: Callable[[Context], Any]) -> JSON:
        if ctx.method == "resources/list" and ctx.params.get("cursor") is None:
            await self.refresh()
        return await call_next(ctx)

    # -- dynamic skills (rule 6) --------------------------------------------------------
    def _register_dynamic(self, record: SkillRecord, producer: Producer) -> None:
        server = self.server
        assert server is not None
        fm = record.frontmatter
        extra = {META_PREFIX + k: v for k, v in fm.items() if k not in ("name", "description")}
        server.add_resource(
            partial(self._read_dynamic, record, SKILL_FILE),
            record.uri,
            name=str(fm["name"]),
            description=str(fm["description"]),
            mime_type="text/markdown",
            meta=extra or None,
        )
        root = record.uri.removesuffix("/" + SKILL_FILE)

        async def read_file(path: str) -> str | bytes:
            return await self._read_dynamic(record, path)

        server.add_resource(read_file, root + "/{+path}", name=f"{fm['name']} (dynamic)")

    async def _produce(self, record: SkillRecord, producer: Producer) -> dict[str, str | bytes]:
        made: Any = producer()
        if inspect.isawaitable(made):
            made = await made
        if not isinstance(made, Mapping):
            raise JSONRPCError(INTERNAL_ERROR, f"{record.uri}: the skill's producer failed")
        files = dict(cast("Mapping[str, str | bytes]", made))
        if SKILL_FILE not in files:
            files[SKILL_FILE] = _skill_md(record.frontmatter)
        return files

    async def _read_dynamic(self, record: SkillRecord, path: str) -> str | bytes:
        _, producer = self.dynamic[record.uri]
        files = await self._produce(record, producer)
        if path not in files:
            root = record.uri.removesuffix(SKILL_FILE)
            raise ResourceNotFoundError(root + path)
        return files[path]

    # -- methods (rules 3, 4) -----------------------------------------------------------
    def _all(self) -> dict[str, SkillRecord]:
        return {**self.snapshot.skills, **{u: r for u, (r, _) in self.dynamic.items()}}

    async def _skills_list(self, ctx: Context) -> JSON:
        if ctx.params.get("cursor") is None:
            await self.refresh()
        entries = [r.entry() for u, r in sorted(self._all().items()) if _shown(ctx, u)]
        chunk, cursor = _page("skills/list", "", entries, ctx)
        result: JSON = {"resultType": "complete", "skills": chunk}
        if cursor is not None:
            result["nextCursor"] = cursor
        return _hinted(ctx, "skills/list", result)

    async def _skills_get(self, ctx: Context) -> JSON:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise JSONRPCError(INVALID_PARAMS, "skills/get: params.uri must be a string")
        await self.refresh()
        record = self._all().get(uri)
        if record is None or not _shown(ctx, uri):
            raise JSONRPCError(INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
        return _hinted(ctx, "skills/get", {"resultType": "complete", "skill": record.entry()})

    async def _directory_read(self, ctx: Context) -> JSON:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise JSONRPCError(
                INVALID_PARAMS, "resources/directory/read: params.uri must be a string"
            )
        if ctx.params.get("cursor") is None:
            await self.refresh()
        children = self.snapshot.directories.get(uri)
        if children is None:
            children = await self._dynamic_directory(uri)
        if children is not None and ctx.server.visibility.filters:
            children = self._visible_children(ctx, uri, children)
        if children is None:
            raise JSONRPCError(
                INVALID_PARAMS, f"{uri} is not a directory resource served here", {"uri": uri}
            )
        chunk, cursor = _page("resources/directory/read", uri, children, ctx)
        result: JSON = {"resultType": "complete", "resources": chunk}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def _visible_children(self, ctx: Context, uri: str, children: list[JSON]) -> list[JSON] | None:
        """Rule 8: the children this request may see; None when nothing below ``uri``
        is visible (the directory is then unknown to it, as a hidden resource is)."""
        shown = [f for f in self.snapshot.files if _shown(ctx, f)]

        def directory_shown(d: str) -> bool:
            return _shown(ctx, d) or any(f.startswith(d + "/") for f in shown)

        if not directory_shown(uri):
            return None
        return [
            c
            for c in children
            if (
                directory_shown(str(c["uri"]))
                if c.get("mimeType") == DIRECTORY_MIME_TYPE
                else _shown(ctx, str(c["uri"]))
            )
        ]

    async def _dynamic_directory(self, uri: str) -> list[JSON] | None:
        for record, producer in self.dynamic.values():
            root = record.uri.removesuffix("/" + SKILL_FILE)
            if uri != root and not uri.startswith(root + "/"):
                continue
            below = uri[len(root) + 1 :]
            files = await self._produce(record, producer)
            prefix = below + "/" if below else ""
            dirs: set[str] = set()
            found: list[JSON] = []
            for path, content in sorted(files.items()):
                if not path.startswith(prefix):
                    continue
                head, _, rest = path[len(prefix) :].partition("/")
                if rest:
                    dirs.add(head)
                    continue
                data = content.encode() if isinstance(content, str) else content
                found.append(
                    {"uri": f"{uri}/{head}", "name": head, "mimeType": mime_type_of(head, data)}
                )
            found += [
                {"uri": f"{uri}/{d}", "name": d, "mimeType": DIRECTORY_MIME_TYPE}
                for d in sorted(dirs)
            ]
            if found or not below:
                return found
        return None


def _skill_md(frontmatter: JSON) -> str:
    """A ``SKILL.md`` whose frontmatter reads back as ``frontmatter``: block YAML when
    PyYAML's (YAML 1.1) output means the same under YAML 1.2, else the JSON form (a YAML
    1.2 flow mapping), e.g. for a string like ``0o17`` that PyYAML leaves unquoted."""
    block = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True)
    text = f"---\n{block}---\n"
    try:
        if same_json(parse_frontmatter(text), frontmatter):
            return text
    except FrontmatterError:
        pass
    return "---\n" + json.dumps(frontmatter, ensure_ascii=False) + "\n---\n"


def _shown(ctx: Context, uri: str) -> bool:
    """Rule 8: whether this request may see the resource at ``uri`` (the server's list
    filters, :mod:`mcpkit.server.visibility` rule 4)."""
    visibility = ctx.server.visibility
    return not visibility.filters or visibility.names_resource(ctx, uri)


def _resources_capability(server: Server, era: Any) -> JSON | None:
    """Rule 1: declare ``resources`` when core would not (no resource registered)."""
    return None if server.resources or server.templates else {"listChanged": True}


def _hinted(ctx: Context, method: str, result: JSON) -> JSON:
    """Rule 3: ``ttlMs``/``cacheScope`` on 2026-07-28 only."""
    if ctx.era == "modern":
        hint = ctx.server.cache_hints.get(method, DEFAULT_HINT)
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = hint.scope
    return result


def _page(method: str, key: str, items: list[JSON], ctx: Context) -> tuple[list[JSON], str | None]:
    """One page of ``items`` from the request's cursor; -32602 for a cursor this method
    did not issue for ``key``."""
    size = max(1, ctx.server.page_size)
    start = 0
    cursor = ctx.params.get("cursor")
    if cursor is not None:
        try:
            raw: Any = json.loads(base64.urlsafe_b64decode(str(cursor).encode("ascii")))
            state = as_object(raw) or {}
            start = state["o"]
            if state.get("m") != method or state.get("k") != key or not isinstance(start, int):
                raise ValueError
            if start < 0 or start > len(items):
                raise ValueError
        except (ValueError, KeyError, UnicodeError, TypeError):
            raise JSONRPCError(INVALID_PARAMS, f"{method}: invalid cursor") from None
    end = start + size
    if end >= len(items):
        return items[start:], None
    token = json.dumps({"m": method, "k": key, "o": end}, separators=(",", ":"))
    return items[start:end], base64.urlsafe_b64encode(token.encode()).decode("ascii")
