"""The command lines, install lines, diagrams and samples of the core pages are true
(issue 26: sample output typed by hand drifts).

Each non-Python block of the README and ``docs/`` is named by a ``<!-- docs-block: NAME
-->`` line (``tools/docs_blocks.py``; the ``unchecked-docs-block`` kind check refuses a
block no test names). This module checks those of the core pages that no page test runs
already, by what they are:

- a command line that serves until stopped, or takes minutes (the benchmark, the soak,
  the long fuzz profile, the whole test suite): it is parsed, not run. An ``mcpkit``
  command goes through the real CLI parser; a ``python SCRIPT`` must exist and define
  every option used; ``uv run --group G`` names a dependency group of the workspace;
  ``nox -s NAME`` a session; a ``pytest PATH`` an existing path; ``NAME=value`` a variable
  the command reads;
- a command line that is quick (writing the secret file): it runs, in a temporary folder;
- lines typed into a server (the README's stdio session): they are sent to the real demo;
- an install line: each distribution is a workspace member (with the extras named) or a
  locked third-party package, and a dependency list in its comment is the member's own;
- the architecture diagram: each module it names imports.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mcpkit.cli.main import build_parser
from mcpkit.server.replication import load_secret

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tools"))
from docs_blocks import block  # noqa: E402

MEMBERS = {
    tomllib.loads(p.read_text())["project"]["name"]: tomllib.loads(p.read_text())["project"]
    for p in [*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("experimental/*/pyproject.toml")]
}
LOCKED = {
    m.group(1).lower()
    for m in re.finditer(r'^name = "([^"]+)"', (ROOT / "uv.lock").read_text(), re.M)
}
GROUPS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"])
NOX_SOURCES = "\n".join(
    p.read_text() for p in [ROOT / "noxfile.py", *(ROOT / "noxsessions").glob("*.py")]
)


def lines_of(body: str) -> list[str]:
    """One logical line per command: continuations joined, comments and ``$ `` dropped."""
    joined = body.replace("\\\n", " ")
    out: list[str] = []
    for line in joined.splitlines():
        line = line.split("  #", 1)[0].strip().removeprefix("$ ")
        if line:
            out.append(line)
    return out


def name_of(requirement: str) -> str:
    return re.split(r"[\[<>=~! ;]", requirement, maxsplit=1)[0].lower()


def check_mcpkit(words: list[str]) -> None:
    build_parser().parse_args(words)


@functools.cache
def help_of(script: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def check_python(words: list[str], env: dict[str, str]) -> None:
    script = ROOT / words[0]
    assert script.is_file(), words[0]
    for word in words[1:]:
        flag = word.strip("[]")
        if flag.startswith("-"):
            assert re.search(rf"(^|[\s,]){re.escape(flag)}\b", help_of(words[0])), flag
    for name in env:
        assert name in script.read_text(), f"{words[0]} does not read {name}"


def check_command(line: str) -> None:
    """A command line that is parsed, not run (module docstring)."""
    words = shlex.split(line)
    env: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if words[:2] == ["uv", "run"]:
        words = words[2:]
        while words and words[0] == "--group":
            assert words[1] in GROUPS, f"no dependency group {words[1]}"
            words = words[2:]
    tool, args = words[0], words[1:]
    if tool == "mcpkit":
        check_mcpkit(args)
    elif tool == "python":
        check_python(args, env)
    elif tool == "nox":
        assert (ROOT / "noxfile.py").is_file()
        if args[:1] == ["-s"]:
            assert f"def {args[1]}(" in NOX_SOURCES or f'name="{args[1]}"' in NOX_SOURCES
        for word in args[args.index("--") + 1 :] if "--" in args else []:
            assert re.search(rf"\s{re.escape(word)}\b", help_of("bench/run.py")), word
    elif tool == "pytest":
        target = ROOT / args[0]
        assert target.exists(), args[0]
        sources = "\n".join(p.read_text() for p in target.rglob("*.py"))
        for name, value in env.items():
            assert name in sources, f"{args[0]} does not read {name}"
            assert f'"{value}"' in sources, f"{name}={value} is not a value {args[0]} knows"
    else:
        raise AssertionError(f"a command this test does not know how to check: {line}")


@pytest.mark.parametrize(
    ("page", "name"),
    [
        ("README.md", "readme-quick-start"),
        ("docs/client.md", "client-cli-commands"),
        ("docs/deployment.md", "deployment-run"),
        ("docs/deployment.md", "deployment-replica"),
        ("docs/performance.md", "performance-bench-commands"),
        ("docs/performance.md", "performance-fast-stack"),
        ("docs/performance.md", "performance-target5"),
        ("docs/reliability.md", "reliability-fuzz"),
        ("docs/reliability.md", "reliability-soak"),
        ("docs/reliability.md", "reliability-soak-latest"),
    ],
)
def test_documented_command_lines_parse(page: str, name: str) -> None:
    lines = lines_of(block(page, name))
    assert lines
    for line in lines:
        check_command(line)


def test_the_quick_start_demo_serves_where_the_readme_says() -> None:
    """``uv run mcpkit demo``: its comment names the demo's default address."""
    text = block("README.md", "readme-quick-start")
    # kind-ok: fixed-port the documented default, compared, never bound
    assert "Streamable HTTP at http://127.0.0.1:8765/mcp" in text
    # kind-ok: fixed-port parsed only, to read the defaults; nothing is served
    args = build_parser().parse_args(["demo"])
    assert (args.transport, args.host, args.port, args.path) == ("http", "127.0.0.1", 8765, "/mcp")


def test_the_readme_stdio_lines_answer_as_typed() -> None:
    """The lines the README says to type into ``mcpkit demo --transport stdio``."""
    typed = block("README.md", "readme-stdio-lines")
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", "demo", "--transport", "stdio"],
        input=typed,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    assert sorted(replies) == [1, 2, 3]
    assert all("result" in r for r in replies.values()), replies
    assert "echo" in [t["name"] for t in replies[2]["result"]["tools"]]
    assert replies[3]["result"]["content"][0]["text"] == "hello"


def test_the_secret_file_commands_make_a_secret_the_server_takes(tmp_path: Path) -> None:
    documented = "/run/secrets/mcpkit"
    script = block("docs/deployment.md", "deployment-secret-file")
    assert documented in script
    secret = tmp_path / "mcpkit"
    done = subprocess.run(
        ["bash", "-e", "-c", script.replace(documented, str(secret))],
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert secret.stat().st_mode & 0o777 == 0o600
    loaded = load_secret(secret_file=secret)
    assert loaded is not None
    assert len(loaded) == 32


INSTALLS = {
    "auth-install": {},
    "events-install": {"mcpkit-exp-events": {"mcpkit-core", "standardwebhooks", "aiohttp", "yarl"}},
    "otel-install": {"mcpkit-ext-otel": {"mcpkit-core", "opentelemetry-api"}},
    "tasks-install": {},
    "ui-install": {},
}


@pytest.mark.parametrize("name", sorted(INSTALLS))
def test_install_lines_name_real_distributions(name: str) -> None:
    page = f"docs/extensions/{name.removesuffix('-install')}.md"
    for line in lines_of(block(page, name)):
        words = shlex.split(line)
        assert words[:2] == ["pip", "install"], line
        for requirement in words[2:]:
            dist = name_of(requirement)
            extras = re.findall(r"\[([\w,-]+)\]", requirement)
            if dist in MEMBERS:
                offered = MEMBERS[dist].get("optional-dependencies", {})
                for extra in ",".join(extras).split(",") if extras else []:
                    assert extra in offered, f"{dist} has no extra [{extra}]"
            else:
                assert dist in LOCKED, f"{dist} is neither a workspace member nor locked"
    for dist, deps in INSTALLS[name].items():
        assert {name_of(d) for d in MEMBERS[dist]["dependencies"]} == deps


def test_the_architecture_diagram_names_real_modules() -> None:
    named = re.findall(r"\bmcpkit(?:\.\w+)+", block("docs/architecture.md", "architecture-layers"))
    assert len(named) >= 7
    for module in named:
        importlib.import_module(module)


# -- lines the prose quotes ----------------------------------------------------------------

INLINE = re.compile(r"`(mcpkit: [^`]+)`")


def printed_templates() -> list[re.Pattern[str]]:
    """Every string literal of core's source that starts with ``mcpkit: ``, as a
    pattern: an f-string's replacement fields match any text."""
    found: list[re.Pattern[str]] = []
    for path in (ROOT / "packages" / "mcpkit-core" / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.JoinedStr):
                parts = [
                    re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values
                ]
                pattern = "".join(parts)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                pattern = re.escape(node.value)
            else:
                continue
            if pattern.startswith(re.escape("mcpkit: ")):
                found.append(re.compile(pattern))
    return found


def test_every_line_the_prose_quotes_is_one_the_code_prints() -> None:
    """An inline ```mcpkit: ...``` sample matches a line core's source prints (an
    upper-case placeholder such as ``PORT`` stands for any value)."""
    templates = printed_templates()
    quoted = [
        (page.name, sample)
        for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
        for sample in INLINE.findall(page.read_text("utf-8"))
    ]
    assert len(quoted) >= 2
    for name, sample in quoted:
        assert any(t.fullmatch(sample) for t in templates), (name, sample)
