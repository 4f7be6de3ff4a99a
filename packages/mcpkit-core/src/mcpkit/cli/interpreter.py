"""Which command an MCP host should run for ``mcpkit install``: this interpreter, or uv.

``uv run --with PKG mcpkit install ...`` runs mcpkit in an environment uv builds for that
one command (``<cache>/builds-v0/.tmpXXXX``) and deletes when it exits; an entry naming
that interpreter starts nothing the next time the host launches it.

Rules:
1. An interpreter is ephemeral when its path (``sys.executable`` as invoked, symlinks
   not followed) or its environment (``sys.prefix``) lies under uv's cache directory
   or under the temporary directory. uv's cache directory is found as uv documents it
   (docs.astral.sh/uv/reference/storage): ``UV_CACHE_DIR``, else
   ``$XDG_CACHE_HOME/uv``, else ``~/.cache/uv``; ``%LOCALAPPDATA%\\uv\\cache`` on
   Windows. Its environments (``builds-v0`` for ``uv run --with``, ``archive-v0`` for
   ``uvx``) are disposable by definition: ``uv cache clean``/``prune`` removes them.
   The temporary directory is Python's (``TMPDIR``, else ``/tmp``), where ``uv run
   --no-cache`` builds.
2. uv is found as ``$UV`` (the binary uv sets for the commands it runs) when that file
   exists, else ``shutil.which("uv")``; the entry names it by absolute path, since a
   host does not start commands with the shell's ``PATH``.
3. The uv command is ``uv run [--project DIR | --with MCPKIT] [--python V] [--with
   PKG]... [--with-editable DIR]... [--env-file FILE] mcpkit run TARGET``:
   ``--project`` is the nearest directory at or above the current one holding a
   ``pyproject.toml`` (uv's own project discovery, so the host gets the environment
   ``uv run`` gave here); without one, mcpkit-core itself is added as it is installed
   here (``--with-editable``/``--with`` its directory for a local install, else
   ``mcpkit-core==VERSION``). Paths are made absolute.
4. When this interpreter is ephemeral, what ``uv run --with`` added (every importable
   distribution installed under uv's cache or the temporary directory: uv keeps them in
   ``archive-v0`` and links them into ``builds-v0``) is carried into the command,
   pinned (``--with name==version``, a local one by its directory), so the host gets
   what the server was just loaded with; the command says so on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import Distribution, PackageNotFoundError, distribution, distributions
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

__all__ = ["UvRun", "ephemeral_additions", "ephemeral_reason", "find_uv", "uv_cache_dir"]


def uv_cache_dir(env: dict[str, str] | None = None) -> Path:
    """Rule 1: uv's cache directory, as uv's documentation orders the candidates."""
    env = dict(os.environ) if env is None else env
    explicit = env.get("UV_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(local) / "uv" / "cache"
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "uv"


def _under(path: Path, root: Path) -> bool:
    try:
        return path.is_relative_to(root) or path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def ephemeral_reason(
    executable: str | None = None, prefix: str | None = None, env: dict[str, str] | None = None
) -> str | None:
    """Rule 1: why the interpreter (default: this one) will not last, or None."""
    paths = [Path(os.path.abspath(p)) for p in (executable or sys.executable, prefix or sys.prefix)]
    cache = uv_cache_dir(env)
    for path in paths:
        if _under(path, cache):
            return f"it is in uv's cache ({cache}), which uv deletes or prunes"
    temp = Path(tempfile.gettempdir())
    for path in paths:
        if _under(path, temp):
            return f"it is in the temporary directory ({temp})"
    return None


def find_uv(env: dict[str, str] | None = None) -> str | None:
    """Rule 2: uv's absolute path, or None."""
    env = dict(os.environ) if env is None else env
    named = env.get("UV")
    if named and Path(named).is_file():
        return str(Path(named).absolute())
    found = shutil.which("uv", path=env.get("PATH"))
    return str(Path(found).absolute()) if found else None


def _project_dir(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / "pyproject.toml").is_file():
            return directory
    return None


def _requirement(dist: Distribution) -> list[str]:
    """``["--with", "name==version"]``, or a local install's directory (rule 3)."""
    text = dist.read_text("direct_url.json")
    info: Any = None
    if text:
        try:
            info = json.loads(text)
        except ValueError:
            info = None
    if isinstance(info, dict):
        found = cast("dict[str, Any]", info)
        url = str(found.get("url", ""))
        if url.startswith("file:"):
            dir_info: Any = found.get("dir_info")
            editable = isinstance(dir_info, dict) and bool(
                cast("dict[str, Any]", dir_info).get("editable")
            )
            return ["--with-editable" if editable else "--with", unquote(urlsplit(url).path)]
    return ["--with", f"{dist.metadata['Name']}=={dist.version}"]


def _mcpkit_requirement() -> list[str]:
    """Rule 3: mcpkit-core as it is installed here."""
    try:
        return _requirement(distribution("mcpkit-core"))
    except PackageNotFoundError:
        return ["--with", "mcpkit-core"]


def ephemeral_additions(env: dict[str, str] | None = None) -> list[list[str]]:
    """Rule 4: the uv options re-adding every importable distribution installed in an
    ephemeral place (rule 1), one ``[option, value]`` each, sorted by name."""
    found: dict[str, list[str]] = {}
    for dist in distributions():
        try:
            where = os.path.abspath(str(dist.locate_file("")))
        except (OSError, NotImplementedError):
            continue
        name = str(dist.metadata["Name"] or "")
        if name and ephemeral_reason(where, where, env) is not None:
            found.setdefault(name.lower(), _requirement(dist))
    return [found[k] for k in sorted(found)]


@dataclass
class UvRun:
    """Rule 3's command: ``uv`` (absolute path), the options given and those carried
    from an ephemeral environment (rule 4)."""

    uv: str
    with_packages: list[str] = field(default_factory=list[str])
    with_editable: list[str] = field(default_factory=list[str])
    python: str | None = None
    env_file: str | None = None
    carried: list[list[str]] = field(default_factory=list[list[str]])
    """Rule 4's options, from :func:`ephemeral_additions`."""

    def argv(self, target: str, cwd: Path | None = None) -> list[str]:
        """``[uv, "run", ..., "mcpkit", "run", target]``."""
        here = (cwd or Path.cwd()).absolute()
        project = _project_dir(here)
        words = [self.uv, "run"]
        words += ["--project", str(project)] if project else _mcpkit_requirement()
        if self.python:
            words += ["--python", self.python]
        for option in self.carried:
            words += option
        for package in self.with_packages:
            words += ["--with", package]
        for directory in self.with_editable:
            words += ["--with-editable", str((here / directory).absolute())]
        if self.env_file:
            words += ["--env-file", str((here / self.env_file).absolute())]
        return [*words, "mcpkit", "run", target]
