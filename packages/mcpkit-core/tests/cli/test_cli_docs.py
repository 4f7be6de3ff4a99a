"""Every command in docs/cli.md, run for real (against a real ``mcpkit demo`` for the URL
examples, and the page's ``notes.py``), and the output the page shows checked.

A command marked ``# serves until Ctrl-C`` is parsed, not run. A ``text`` block right
after a command is its expected output: each of its lines must appear in stdout; the
``install`` sample is compared whole (after :func:`docs_blocks.normalise` and the page's
stated paths put in place of this machine's). Every
``sh`` and ``text`` block of the page is one of ``NAMES`` (their ``docs-block`` names).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import CONNECT, DemoProcess, demo_process, mcpkit

from mcpkit.cli.main import build_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import block, marked, normalise

ROOT = Path(__file__).resolve().parents[4]
DOC = ROOT / "docs" / "cli.md"
# kind-ok: fixed-port the documented URL, replaced by a free port before it runs
DOC_URL = "http://127.0.0.1:8765/mcp"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
CLIENT_COMMANDS = ("ls", "call", "read", "prompt")
NAMES = (
    "cli-run",
    "cli-demo",
    "cli-ls",
    "cli-call",
    "cli-call-output",
    "cli-call-json",
    "cli-call-stdio",
    "cli-call-stdio-output",
    "cli-read",
    "cli-prompt",
    "cli-prompt-output",
    "cli-inspect",
    "cli-inspect-output",
    "cli-install-mcp-json",
    "cli-install-print",
    "cli-install-with",
    "cli-install-with-output",
    "cli-replicas",
)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text())]


def examples() -> list[tuple[str, str | None]]:
    """(command line, expected output or None) for each ``sh`` block of the page."""
    found: list[tuple[str, str | None]] = []
    items = blocks()
    for i, (lang, body) in enumerate(items):
        if lang != "sh":
            continue
        after = items[i + 1] if i + 1 < len(items) else ("", "")
        expected = after[1] if after[0] == "text" else None
        for line in body.strip().splitlines():
            found.append((line.strip(), expected))
    return found


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoProcess]:
    with demo_process() as process:
        yield process


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("docs-cli")
    source = next(body for lang, body in blocks() if lang == "python")
    (directory / "notes.py").write_text(source)
    return directory


def test_every_shell_and_output_block_is_one_this_module_runs() -> None:
    shown = marked(DOC)
    assert [b.name for b in shown] == list(NAMES)
    assert {b.lang for b in shown} == {"sh", "text"}


def test_the_page_has_an_example_for_every_subcommand() -> None:
    used = {shlex.split(line)[1] for line, _ in examples()}
    assert used == {"run", "demo", "ls", "call", "read", "prompt", "inspect", "install"}


@pytest.mark.parametrize(("line", "expected"), examples(), ids=lambda v: str(v)[:50])
def test_documented_command(
    line: str, expected: str | None, demo: DemoProcess, notes: Path, tmp_path: Path
) -> None:
    command, _, comment = line.partition("  #")
    words = shlex.split(command)
    assert words[0] == "mcpkit"
    if "serves until Ctrl-C" in comment:
        build_parser().parse_args(words[1:])
        return
    here = f"{shlex.quote(sys.executable)} -m mcpkit.cli.main"
    args = [w.replace(DOC_URL, demo.url).replace("mcpkit run", f"{here} run") for w in words[1:]]
    if args[0] in CLIENT_COMMANDS:
        args += CONNECT
    out = mcpkit(*args, cwd=notes, env={"HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()
    if (expected or "").strip() == block(DOC, "cli-install-with-output").strip():
        return  # compared whole, with this machine's paths, by the test below
    for expected_line in (expected or "").splitlines():
        assert expected_line in out.stdout.splitlines(), (expected_line, out.stdout)


def test_the_install_sample_is_the_whole_real_output(notes: Path, tmp_path: Path) -> None:
    """The page's ``--with`` sample, compared exactly: each line appearing somewhere let
    an order that cannot happen through (review fault 15)."""
    import shutil

    uv = shutil.which("uv")
    assert uv is not None, "the workspace is run with uv"
    command = shlex.split(block(DOC, "cli-install-with").strip())
    out = mcpkit(*command[1:], cwd=notes, env={"HOME": str(tmp_path), "UV": uv})
    assert out.returncode == 0, out.stderr
    shown = (
        out.stdout.replace(str(Path(uv).absolute()), "/home/me/.local/bin/uv")
        .replace(str(ROOT), "/home/me/mcpkit")
        .replace(str(notes), "/home/me/notes")
    )
    # the page shows mcpkit-core alone: the other mcpkit distributions this environment
    # happens to have (all of them in the workspace, none in `nox -s core`) are dropped
    config = json.loads(shown)
    args: list[str] = config["mcpServers"]["notes"]["args"]
    kept: list[str] = []
    for i, arg in enumerate(args):
        pair = arg if arg.startswith("--with") else (args[i - 1] if i else "")
        value = args[i + 1] if arg.startswith("--with") and i + 1 < len(args) else arg
        if (
            pair.startswith("--with")
            and "/home/me/mcpkit/" in value
            and not value.endswith("/mcpkit-core")
        ):
            continue
        kept.append(arg)
    config["mcpServers"]["notes"]["args"] = kept
    shown = json.dumps(config, indent=2) + "\n"
    assert normalise(shown) == normalise(block(DOC, "cli-install-with-output"))
