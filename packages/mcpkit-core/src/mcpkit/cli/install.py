"""``mcpkit install HOST target``: add a server to an MCP host's configuration.

Hosts and where their configuration lives (each holds ``{"mcpServers": {NAME: entry}}``):

- ``claude-desktop``: ``claude_desktop_config.json`` in ``~/Library/Application
  Support/Claude/`` (macOS), ``%APPDATA%\\Claude\\`` (Windows), ``$XDG_CONFIG_HOME/Claude/``
  (default ``~/.config/Claude/``, Linux).
- ``cursor``: ``~/.cursor/mcp.json`` (global).
- ``claude-code``: ``.mcp.json`` in the current directory (Claude Code's project scope,
  entries with ``"type": "stdio"``); ``--print`` shows the equivalent
  ``claude mcp add --scope project`` command instead.
- ``mcp-json``: no file of its own; prints the ``mcpServers`` object (``--config PATH``
  writes it there).

Rules:
1. The target is loaded first (like ``mcpkit run``), so a broken target is reported
   before anything is written; the entry's name is ``--name`` or the server's name.
2. The entry runs the current interpreter (``sys.executable``, an absolute path) with
   ``-m mcpkit.cli.main run`` and the absolute path of a file target; a module target
   keeps its name and gets ``PYTHONPATH`` set to the current directory. ``--env``
   adds variables.
3. Writing merges: the file's other keys and other servers stay as they were. An
   existing entry of the same name is replaced only with ``--force``; without it the
   command refuses (status 2) and changes nothing. A file that is not a JSON object,
   or whose ``mcpServers`` is not one, is refused, never overwritten.
4. The file is written whole to a temporary file in the same directory and renamed
   over the old one (never half-written); missing directories are created.
5. ``--print`` writes nothing: it prints what would be written (or the command line).
6. An interpreter that will not exist when the host starts the server (uv's cache, e.g.
   ``uv run --with PKG``'s ``builds-v0/.tmpXXXX``, or the temporary directory:
   :mod:`mcpkit.cli.interpreter` rule 1) is never written. With ``--with PKG``
   (repeatable), ``--with-editable DIR`` (repeatable), ``--python VERSION`` or
   ``--env-file PATH``, or such an interpreter, the entry is a ``uv run ... mcpkit run
   TARGET`` command instead (:mod:`mcpkit.cli.interpreter` rules 2-4); without uv that
   is refused (status 2) with the fix, and nothing is written.
7. ``--with``, ``--with-editable`` and ``--python`` values are checked before anything
   is written (:mod:`mcpkit.cli.interpreter` rule 5); a bad one is refused (status 2)
   naming the flag, the value and what it takes.
8. ``claude-code`` writes the project-scope ``.mcp.json``, a file meant for version
   control: an ``--env`` variable whose name says it holds a secret (``KEY``,
   ``TOKEN``, ``SECRET``, ``PASS``, ...) makes the command warn on stderr, naming it
   and pointing to ``--env-file`` (the value is never printed in the warning).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcpkit.cli.interpreter import (
    UvRun,
    ephemeral_additions,
    ephemeral_reason,
    find_uv,
    python_problem,
    requirement_problem,
)
from mcpkit.cli.plugins import CliError
from mcpkit.client._json import as_object
from mcpkit.core.shapes import JSON

__all__ = ["HOSTS", "add_arguments", "config_path", "run", "secret_names", "server_entry"]

HOSTS = ("claude-desktop", "cursor", "claude-code", "mcp-json")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``mcpkit install`` (registered lazily by :mod:`mcpkit.cli.main`)."""
    p.description = (
        "Write (or print) an MCP host's configuration entry that runs this server with "
        "the current Python interpreter, or through `uv run` (--with, --with-editable, "
        "--python, --env-file, or when this interpreter is uv's temporary one)."
    )
    p.add_argument("host", choices=HOSTS)
    p.add_argument("target", help="module[:attr] or path/to/file.py[:attr]")
    p.add_argument("--name", help="entry name (default: the server's name)")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment variable for the server (repeatable)",
    )
    uv = p.add_argument_group(
        "run through uv (the entry becomes `uv run ... mcpkit run TARGET`; needs uv)"
    )
    uv.add_argument(
        "--with",
        action="append",
        default=[],
        dest="with_packages",
        metavar="PKG",
        help="a package the server needs (repeatable; any uv requirement)",
    )
    uv.add_argument(
        "--with-editable",
        action="append",
        default=[],
        metavar="DIR",
        help="a local project installed editable (repeatable)",
    )
    uv.add_argument("--python", metavar="VERSION", help="the Python uv runs the server with")
    uv.add_argument("--env-file", metavar="PATH", help="a .env file uv loads for the server")
    p.add_argument("--config", type=Path, help="configuration file to write instead")
    p.add_argument("--force", action="store_true", help="replace an entry of the same name")
    p.add_argument("--print", action="store_true", dest="print_only", help="print, write nothing")
    p.set_defaults(handler=run)


def config_path(host: str) -> Path | None:
    """The host's configuration file on this platform (None for ``mcp-json``)."""
    home = Path.home()
    if host == "claude-desktop":
        if sys.platform == "darwin":
            return (
                home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
            )
        if sys.platform == "win32":
            base = Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))
            return base / "Claude" / "claude_desktop_config.json"
        base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        return base / "Claude" / "claude_desktop_config.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "claude-code":
        return Path.cwd() / ".mcp.json"
    return None


def server_entry(
    target: str, env: dict[str, str], *, claude_code: bool = False, uv: UvRun | None = None
) -> JSON:
    """Rule 2's ``mcpServers`` entry for ``target`` (rule 6's ``uv run`` one with ``uv``)."""
    module_name, sep, attr = target.partition(":")
    env = dict(env)
    if module_name.endswith(".py") or "/" in module_name:
        target = str(Path(module_name).resolve()) + (sep + attr if sep else "")
    else:
        env.setdefault("PYTHONPATH", str(Path.cwd()))
    entry: JSON = {"type": "stdio"} if claude_code else {}
    if uv is not None:
        command, *args = uv.argv(target)
        entry["command"], entry["args"] = command, args
    else:
        entry["command"] = sys.executable
        entry["args"] = ["-m", "mcpkit.cli.main", "run", target]
    if env:
        entry["env"] = env
    return entry


def _uv_run(args: argparse.Namespace) -> UvRun | None:
    """Rule 6: the ``uv run`` form when asked for or needed; :class:`CliError` when it is
    needed and uv is not found."""
    asked = [
        flag
        for flag, value in (
            ("--with", args.with_packages),
            ("--with-editable", args.with_editable),
            ("--python", args.python),
            ("--env-file", args.env_file),
        )
        if value
    ]
    why = ephemeral_reason()
    if not asked and why is None:
        return None
    uv = find_uv()
    if uv is None:
        if asked:
            raise CliError(
                f"{', '.join(asked)} {'needs' if len(asked) == 1 else 'need'} uv, which is "
                "not on PATH: install it "
                "(https://docs.astral.sh/uv/), or leave them out and run mcpkit install "
                "from an environment that has the packages"
            )
        raise CliError(
            f"this Python ({sys.executable}) will be gone when the host starts the server: "
            f"{why}; install uv (https://docs.astral.sh/uv/) so the entry can be a `uv run` "
            "command, or run mcpkit install from a lasting environment "
            "(python -m venv .venv && .venv/bin/pip install mcpkit-core ...)"
        )
    if args.env_file and not Path(args.env_file).is_file():
        raise CliError(f"--env-file {args.env_file}: no such file")
    _check_values(args)
    carried = ephemeral_additions() if why is not None else []
    if why is not None:
        added = " ".join(" ".join(option) for option in carried) or "nothing of its own"
        sys.stderr.write(
            f"mcpkit install: this Python will be gone when the host starts the server "
            f"({why}); writing a `uv run` command with what its environment added: {added}\n"
        )
    return UvRun(
        uv,
        with_packages=list(args.with_packages),
        with_editable=list(args.with_editable),
        python=args.python,
        env_file=args.env_file,
        carried=carried,
    )


def _check_values(args: argparse.Namespace) -> None:
    """Rule 7: ``--with``, ``--with-editable`` and ``--python`` hold what uv can use."""
    for package in args.with_packages:
        if problem := requirement_problem(package):
            raise CliError(f"--with {package!r}: {problem}")
    for directory in args.with_editable:
        if not Path(directory).expanduser().is_dir():
            raise CliError(
                f"--with-editable {directory!r}: no such directory (it names a local "
                "project, the directory holding its pyproject.toml)"
            )
    if args.python and (problem := python_problem(args.python)):
        raise CliError(f"--python {args.python!r}: {problem}")


_SECRET_MARKERS = (
    "key", "token", "secret", "pass", "pwd", "credential", "auth", "bearer", "jwt",
    "cookie", "session", "private", "signature", "cert", "dsn",
)  # fmt: skip


def secret_names(env: dict[str, str]) -> list[str]:
    """Rule 8: the variables of ``env`` whose name says they hold a secret."""
    return [
        key
        for key, value in env.items()
        if value and any(m in key.lower().replace("-", "_") for m in _SECRET_MARKERS)
    ]


def _warn_secrets(env: dict[str, str], where: str) -> None:
    """Rule 8: a project-scope configuration is meant to be committed."""
    if names := secret_names(env):
        sys.stderr.write(
            f"mcpkit install: warning: --env {', '.join(names)} "
            f"{'puts a secret' if len(names) == 1 else 'put secrets'} in plain text into "
            f"{where}, which is meant for version control (project scope); put "
            f"{'it' if len(names) == 1 else 'them'} in a .env file kept out of version "
            "control and pass --env-file PATH instead\n"
        )


def _env_pairs(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--env {item!r} is not KEY=VALUE")
        out[key] = value
    return out


def _load_config(path: Path) -> JSON:
    if not path.exists():
        return {"mcpServers": {}}
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise CliError(f"{path} is not readable JSON ({exc}); not touching it") from None
    config = as_object(data)
    if config is None:
        raise CliError(f"{path} does not hold a JSON object; not touching it")
    if as_object(config.setdefault("mcpServers", {})) is None:
        raise CliError(f"{path}: 'mcpServers' is not an object; not touching it")
    return config


def _write_atomic(path: Path, data: JSON) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def run(args: argparse.Namespace) -> int:
    """``mcpkit install`` (rules 1-5); user errors raise :class:`CliError` (status 2)."""
    from mcpkit.cli.run import UserCodeError, load_server

    env = _env_pairs(args.env)
    uv = _uv_run(args)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            server = load_server(args.target)
    except UserCodeError as exc:
        sys.stderr.write(f"mcpkit install: {exc}\n")
        return 1
    name = args.name or str(server.info.get("name") or "mcpkit-server")
    entry = server_entry(args.target, env, claude_code=args.host == "claude-code", uv=uv)
    path: Path | None = args.config or config_path(args.host)
    if args.host == "claude-code":
        _warn_secrets(env, str(path) if not args.print_only else "the project's .mcp.json")
    if args.print_only or path is None:
        if args.host == "claude-code" and args.config is None:
            words = ["claude", "mcp", "add", "--scope", "project"]
            for key, value in entry.get("env", {}).items():
                words += ["--env", f"{key}={value}"]
            print(shlex.join([*words, name, "--", entry["command"], *entry["args"]]))
        else:
            print(json.dumps({"mcpServers": {name: entry}}, indent=2, ensure_ascii=False))
        return 0
    data = _load_config(path)
    servers = as_object(data["mcpServers"])  # checked by _load_config
    assert servers is not None
    if name in servers and not args.force:
        raise CliError(
            f"{path} already has a server named {name!r}; --force replaces it, "
            "--name picks another name"
        )
    replaced = name in servers
    servers[name] = entry
    _write_atomic(path, data)
    verb = "replaced" if replaced else "added"
    sys.stderr.write(f"mcpkit install: {verb} {name!r} in {path}\n")
    if args.host in ("claude-desktop", "cursor"):
        sys.stderr.write(f"mcpkit install: restart {args.host} to load it\n")
    return 0
