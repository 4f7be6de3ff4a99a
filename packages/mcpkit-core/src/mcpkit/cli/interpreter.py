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
3. The uv command is ``uv run [--project DIR | --no-project MCPKIT...] [--python V] [--with
   PKG]... [--with-editable DIR]... [--env-file FILE] mcpkit run TARGET``:
   ``--project`` is the nearest directory at or above the current one holding a
   ``pyproject.toml`` (uv's own project discovery), and only when that project provides
   the mcpkit-core running here: its installed files lie in the project's environment
   (``UV_PROJECT_ENVIRONMENT``, else ``.venv`` of the project or of a directory above
   it, its workspace). Otherwise (no project, or one that does not depend on mcpkit,
   where ``uv run --project`` would fail to spawn ``mcpkit`` and create a ``.venv`` and
   ``uv.lock`` in it) the command says ``--no-project`` (a host may start it inside that
   project) and every installed ``mcpkit-*`` distribution is added as it is
   installed here (``--with-editable``/``--with`` its directory for a local install,
   else ``name==VERSION``), so a server importing ``mcpkit.ext.tasks`` keeps it. Paths
   are made absolute.
4. When this interpreter is ephemeral, what ``uv run --with`` added (every importable
   distribution installed under uv's cache or the temporary directory: uv keeps them in
   ``archive-v0`` and links them into ``builds-v0``) is carried into the command,
   pinned (``--with name==version``, a local one by its directory), so the host gets
   what the server was just loaded with; the command says so on stderr.
5. The values of ``--with`` (a PEP 508 requirement, a URL or an existing path:
   :func:`requirement_problem`), ``--python`` (a version with major 3 and a minor
   below 31, a version specifier, or an existing path: :func:`python_problem`) and
   ``--with-editable`` (an existing directory) are checked before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import Distribution, PackageNotFoundError, distribution, distributions
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

__all__ = [
    "UvRun",
    "ephemeral_additions",
    "ephemeral_reason",
    "find_uv",
    "mcpkit_requirements",
    "provides_mcpkit",
    "python_problem",
    "requirement_problem",
    "uv_cache_dir",
]


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


def _site(dist: Distribution) -> Path | None:
    try:
        return Path(os.path.abspath(str(dist.locate_file(""))))
    except (OSError, NotImplementedError):
        return None


def provides_mcpkit(project: Path, env: dict[str, str] | None = None) -> bool:
    """Rule 3: whether ``project``'s environment holds the mcpkit-core running here."""
    env = dict(os.environ) if env is None else env
    try:
        site = _site(distribution("mcpkit-core"))
    except PackageNotFoundError:
        return False
    if site is None:
        return False
    named = env.get("UV_PROJECT_ENVIRONMENT")
    places = [project / named] if named else [d / ".venv" for d in (project, *project.parents)]
    return any(_under(site, place) for place in places)


def mcpkit_requirements() -> list[list[str]]:
    """Rule 3: every installed ``mcpkit-*`` distribution as installed here, one
    ``[option, value]`` each, sorted by name (mcpkit-core by name when it is missing)."""
    found: dict[str, list[str]] = {}
    for dist in distributions():
        name = str(dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith("mcpkit-"):
            found.setdefault(name, _requirement(dist))
    found.setdefault("mcpkit-core", ["--with", "mcpkit-core"])
    return [found[k] for k in sorted(found)]


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
        if project is not None and provides_mcpkit(project):
            words += ["--project", str(project)]
            options = self.carried
        else:
            words += ["--no-project"]
            options = [*mcpkit_requirements()]
            options += [o for o in self.carried if o not in options]
        if self.python:
            words += ["--python", self.python]
        for option in options:
            words += option
        for package in self.with_packages:
            words += ["--with", package]
        for directory in self.with_editable:
            words += ["--with-editable", str((here / directory).absolute())]
        if self.env_file:
            words += ["--env-file", str((here / self.env_file).absolute())]
        return [*words, "mcpkit", "run", target]


_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_VERSION = r"[A-Za-z0-9.*+!_-]+"
_SPEC = rf"(?:~=|===|==|!=|<=|>=|<|>)\s*{_VERSION}"
_REQUIREMENT = re.compile(
    rf"{_NAME}\s*(?:\[\s*(?:{_NAME}(?:\s*,\s*{_NAME})*)?\s*\])?\s*"
    rf"(?:\(?\s*{_SPEC}(?:\s*,\s*{_SPEC})*\s*\)?|@\s*\S+)?\s*(?:;.+)?"
)
_PYTHON = re.compile(
    r"(?:(?:cpython|pypy|graalpy|python|cp|pp)[@-]?)?\d+(?:\.\d+){0,2}(?:t|[ab]\d+|rc\d+)?"
    rf"|(?:{_SPEC}\s*(?:,\s*{_SPEC}\s*)*)",
    re.IGNORECASE,
)


def requirement_problem(text: str) -> str | None:
    """Rule 5: why ``--with text`` is not a requirement uv takes, or None. A PEP 508
    requirement (name, extras, version specifiers or ``@ URL``, marker), a URL, or an
    existing local path."""
    if "://" in text or (text[:1] in ".~/" and Path(text).expanduser().exists()):
        return None
    if _REQUIREMENT.fullmatch(text.strip()) and "\n" not in text:
        return None
    return (
        "not a requirement: use NAME, NAME[extra], NAME>=1.2, NAME==1.2.3, "
        "'NAME @ URL' or the path of an existing directory"
    )


def python_problem(text: str) -> str | None:
    """Rule 5: why ``--python text`` names no interpreter uv can find, or None: a
    version (``3.12``, ``3.12.4``, ``pypy3.10``, ``cpython@3.13``, ``>=3.11``) whose
    major version is 3, or an existing interpreter path."""
    if os.sep in text or "/" in text:
        return None if Path(text).expanduser().exists() else "no such interpreter path"
    if not _PYTHON.fullmatch(text.strip()):
        return "not a Python version: use 3.12, 3.12.4, pypy3.10 or an interpreter's path"
    numbers = re.findall(r"\d+(?:\.\d+)*", text)
    if numbers and (numbers[0].split(".")[0] != "3" or _too_new(numbers[0])):
        return f"Python {numbers[0]} does not exist: use a released version such as 3.12"
    return None


def _too_new(version: str) -> bool:
    parts = version.split(".")
    return len(parts) > 1 and int(parts[1]) > 30
