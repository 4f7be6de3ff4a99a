"""``mcpkit skills serve|ls|verify|pull``: the command line of the Skills extension.

Rules:
1. ``serve DIR``: serve ``DIR``'s skills (:meth:`~mcpkit.ext.skills.Skills.from_directory`)
   over stdio (default) or ``--transport http`` at ``http://HOST:PORT/mcp``, bound to
   ``127.0.0.1`` unless ``--host`` says otherwise; ``--port 0`` picks a free port. A
   directory that cannot be served, or holds no skill (unless ``--allow-empty``), is
   refused before anything starts (status 2, every problem listed).
2. ``ls TARGET``: one line per skill: its URI, file count and total bytes (``dynamic``
   for a generated skill); entries that must not be loaded are listed as ``INVALID``
   with why. TARGET is a URL or a server command, as for ``mcpkit ls``.
3. ``verify TARGET [SKILL_URI]``: fetch every file of every skill (or of the one named,
   via ``skills/get``), verifying size, digest and ``SKILL.md`` frontmatter; one line
   per skill; exit status 1 on any mismatch or invalid entry, 0 when all verify.
4. ``pull TARGET SKILL_URI DEST``: write the skill's verified files under ``DEST``,
   which must not exist: everything is fetched and verified into a temporary directory
   beside ``DEST`` first and then renamed into place in one step, so ``DEST`` is never
   half written. A dynamic skill (no digests) is refused. File paths come from the
   entry's normalised URIs under the skill root (:func:`~.names.normal_uri`); a path
   with ``..`` or an empty segment, two files with one path, or a file other than the
   entry's own ``SKILL.md`` at ``SKILL.md`` is refused.
5. Errors a user can fix (no such skill, ``DEST`` exists, verification failure, a file
   system error such as a missing parent of ``DEST``) exit 1 with one line on stderr;
   usage errors exit 2.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio

__all__ = ["add_arguments", "run"]


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (0-65535)")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The sub-subcommands of ``mcpkit skills``."""
    sub = parser.add_subparsers(dest="skills_command", required=True)
    serve = sub.add_parser("serve", help="serve a skills directory")
    serve.add_argument("directory", help="the directory whose sub-directories are skills")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="HTTP port; 0 = any free")
    serve.add_argument("--name", default="mcpkit-skills", help="serverInfo.name")
    serve.add_argument("--no-directory-read", action="store_true", help="no directoryRead")
    serve.add_argument("--include-hidden", action="store_true", help="serve dotfiles too")
    serve.add_argument(
        "--allow-empty", action="store_true", help="serve a directory with no skill yet"
    )
    ls = sub.add_parser("ls", help="list a server's skills with their sizes")
    ls.add_argument("target", help="server URL or command")
    verify = sub.add_parser("verify", help="fetch and verify every skill file")
    verify.add_argument("target", help="server URL or command")
    verify.add_argument("skill_uri", nargs="?", help="only this skill (its SKILL.md URI)")
    pull = sub.add_parser("pull", help="fetch one skill, verified, into a new directory")
    pull.add_argument("target", help="server URL or command")
    pull.add_argument("skill_uri", help="the skill's SKILL.md URI")
    pull.add_argument("dest", help="a directory that does not exist yet")


def run(args: argparse.Namespace) -> int:
    """Rule 1-5."""
    command = args.skills_command
    if command == "serve":
        return _serve(args)
    if command == "pull" and (Path(args.dest).exists() or Path(args.dest).is_symlink()):
        print(
            f"mcpkit skills pull: {args.dest} exists; pull writes a new directory", file=sys.stderr
        )
        return 1
    from mcpkit.client import ClientError
    from mcpkit.server import JSONRPCError

    try:
        return anyio.run(_CLIENT_COMMANDS[command], args)
    except (ClientError, JSONRPCError, ValueError, OSError) as exc:  # rule 5
        print(f"mcpkit skills {command}: {exc}", file=sys.stderr)
        return 1


def _serve(args: argparse.Namespace) -> int:
    from mcpkit.ext.skills import SkillLoadError, Skills
    from mcpkit.server import Server

    try:
        skills = Skills.from_directory(
            args.directory,
            directory_read=not args.no_directory_read,
            include_hidden=args.include_hidden,
            allow_empty=args.allow_empty,
        )
    except (SkillLoadError, OSError) as exc:
        print(f"mcpkit skills serve: {exc}", file=sys.stderr)
        return 2
    server = Server(args.name)
    skills.install(server)
    if args.transport == "http":
        server.run("http", host=args.host, port=args.port)
    else:
        server.run()
    return 0


async def _ls(args: argparse.Namespace) -> int:
    from mcpkit.client import Client
    from mcpkit.ext.skills.client import InvalidSkillEntryError, list_skills

    async with Client(args.target) as client:
        async for item in list_skills(client):
            if isinstance(item, InvalidSkillEntryError):
                print(f"INVALID  {item}")
            elif item.files is None:
                print(f"{item.uri}  dynamic")
            else:
                print(f"{item.uri}  {len(item.files)} files  {item.total_bytes} bytes")
    return 0


async def _verify(args: argparse.Namespace) -> int:
    from mcpkit.client import Client
    from mcpkit.ext.skills.client import (
        InvalidSkillEntryError,
        SkillEntry,
        SkillVerificationError,
        get_skill,
        list_skills,
        read_skill_file,
    )

    failed = 0
    async with Client(args.target) as client:
        items: list[SkillEntry | InvalidSkillEntryError] = []
        if args.skill_uri:
            items.append(await get_skill(client, args.skill_uri))
        else:
            items += [item async for item in list_skills(client)]
        for item in items:
            if isinstance(item, InvalidSkillEntryError):
                print(f"FAIL  {item}")
                failed += 1
                continue
            try:
                await read_skill_file(client, item, item.uri)
                for file in item.files or ():
                    if file.uri != item.uri:
                        await read_skill_file(client, item, file.uri)
            except SkillVerificationError as exc:
                print(f"FAIL  {item.uri}: {type(exc).__name__}: {exc}")
                failed += 1
                continue
            kind = (
                "dynamic (frontmatter only)" if item.files is None else f"{len(item.files)} files"
            )
            print(f"OK    {item.uri}  {kind}")
    return 1 if failed else 0


def _relative(root: str, uri: str) -> str:
    """Rule 4: the path under the skill root ``root`` (normalised) of ``uri``."""
    from mcpkit.ext.skills.names import normal_uri

    key = normal_uri(uri)
    rel = unquote(key[len(root) + 1 :])
    parts = rel.split("/")
    if not key.startswith(root + "/") or any(p in ("", ".", "..") for p in parts) or "\\" in rel:
        raise ValueError(f"{uri}: not a plain path under {root}")
    return rel


def _paths(entry: Any) -> list[tuple[Any, str]]:
    """Rule 4: ``(file, path under DEST)`` for every file of ``entry``; ValueError for
    two files with one path, or another file at ``SKILL.md``."""
    from mcpkit.ext.skills.names import SKILL_FILE, normal_uri

    root = normal_uri(entry.uri).removesuffix("/" + SKILL_FILE)
    out: list[tuple[Any, str]] = []
    seen: set[str] = set()
    for file in entry.files:
        rel = SKILL_FILE if file.uri == entry.uri else _relative(root, file.uri)
        if rel in seen or (rel == SKILL_FILE and file.uri != entry.uri):
            raise ValueError(f"{file.uri}: a second file at {rel}")
        seen.add(rel)
        out.append((file, rel))
    return out


async def _pull(args: argparse.Namespace) -> int:
    from mcpkit.client import Client
    from mcpkit.ext.skills.client import get_skill, read_skill_file

    dest = Path(args.dest)
    async with Client(args.target) as client:
        entry = await get_skill(client, args.skill_uri)
        if entry.files is None:
            print(f"mcpkit skills pull: {entry.uri} is dynamic: nothing to verify", file=sys.stderr)
            return 1
        paths = _paths(entry)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent or "."))
        try:
            for file, rel in paths:
                content = await read_skill_file(client, entry, file.uri)
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content.data)
            os.rename(staging, dest)  # atomic; fails if dest appeared meanwhile
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    print(f"pulled {entry.uri}: {len(entry.files)} files, {entry.total_bytes} bytes -> {dest}")
    return 0


_CLIENT_COMMANDS: dict[str, Any] = {"ls": _ls, "verify": _verify, "pull": _pull}
