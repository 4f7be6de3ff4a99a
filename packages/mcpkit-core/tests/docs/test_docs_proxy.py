"""``docs/proxy.md``: its examples run and print what the page says; its list of
conformance scenarios that cannot pass through the era bridge is the list CI uses.

Every ```python block compiles. A complete program (it ends by running
``anyio.run(main)``) runs in a fresh interpreter against a real ``mcpkit demo`` on a free
loopback port (the documented URL, ``DOCUMENTED_URL``, is replaced by its URL) and
must exit 0; when a ```text block follows it (only its ``docs-block`` line between),
that is exactly what it must print. The ``mcpkit proxy`` command lines shown parse with
the real CLI parser, and the one whose upstream is on this machine (the bundled demo over
stdio) runs: ``mcpkit ls`` lists the demo's tools through it. The
transcript of a proxy pinned to an era its upstream does not speak is produced by that
command, with ``tests/proxy/one_era_server.py legacy`` as the handshake-only server.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
from demo_process import DemoProcess, demo_process

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import marked

from mcpkit.cli.main import build_parser
from mcpkit.client import Client
from mcpkit.client.stdio import StdioTransport

ROOT = Path(__file__).resolve().parents[4]
PAGE = ROOT / "docs" / "proxy.md"
BRIDGE_LIST = ROOT / "conformance" / "proxy-bridge-by-design.json"
# kind-ok: fixed-port the documented URL, replaced by a free port before it runs
DOCUMENTED_URL = "http://127.0.0.1:8765/mcp"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
PROGRAM_END = "anyio.run(main)"
GAP = re.compile(r"\s*(<!-- docs-block: [\w-]+ -->)?\s*")
OUTPUTS = (
    "proxy-output-kitchen",
    "proxy-output-mount-refused",
    "proxy-output-mounted",
    "proxy-output-modern",
    "proxy-output-bridge",
    "proxy-output-era",
)
COMMANDS = ("proxy-cli-url", "proxy-cli-http", "proxy-cli-legacy")


def fenced() -> list[tuple[str, str, int, int]]:
    """``(language, code, start, end)`` of every fenced block of the page, in order."""
    text = PAGE.read_text("utf-8")
    return [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]


def programs() -> list[tuple[int, str, str | None]]:
    """``(index, code, expected stdout or None)`` of every complete program."""
    text = PAGE.read_text("utf-8")
    blocks = fenced()
    found: list[tuple[int, str, str | None]] = []
    for index, (language, code, _, end) in enumerate(blocks):
        if language != "python" or PROGRAM_END not in code:
            continue
        expected = None
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        gap = text[end : following[2]] if following else ""
        if following and following[0] == "text" and GAP.fullmatch(gap):
            expected = following[1]
        found.append((index, code, expected))
    return found


PYTHON = [(i, code) for i, (lang, code, _, _) in enumerate(fenced()) if lang == "python"]
PROGRAMS = programs()


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoProcess]:
    with demo_process() as running:
        yield running


def test_the_page_shows_a_program_per_kind_of_target() -> None:
    codes = [code for _, code, _ in PROGRAMS]
    assert len(codes) >= 3
    assert any("proxy(kitchen" in c for c in codes)  # an in-process Server
    assert any(f'proxy("{DOCUMENTED_URL}"' in c for c in codes)  # a URL
    assert any("proxy([sys.executable" in c for c in codes)  # a command (stdio)
    assert all(expected is not None for _, _, expected in PROGRAMS)


@pytest.mark.parametrize(("index", "code"), PYTHON, ids=[f"python-{i}" for i, _ in PYTHON])
def test_every_python_block_compiles(index: int, code: str) -> None:
    compile(code, f"docs/proxy.md#block-{index}", "exec")


@pytest.mark.parametrize(
    ("index", "code", "expected"), PROGRAMS, ids=[f"program-{i}" for i, _, _ in PROGRAMS]
)
def test_complete_program_prints_what_the_page_says(
    demo: DemoProcess, index: int, code: str, expected: str | None
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code.replace(DOCUMENTED_URL, demo.url)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"docs/proxy.md block {index} failed:\n{done.stderr[-3000:]}"
    assert done.stdout == expected, done.stderr[-3000:]


def documented_bridge_failures() -> set[tuple[str, str]]:
    """``(run, scenario)`` rows of the table under "Conformance through the bridge"."""
    text = PAGE.read_text("utf-8")
    section = text[text.index("### Conformance through the bridge") :]
    section = section[: section.index("\n## ")]
    rows: set[tuple[str, str]] = set()
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("run", "---"):
            rows.add((cells[0], cells[1]))
    return rows


def test_the_bridge_failures_listed_are_those_ci_expects() -> None:
    """The page lists, up front, exactly the scenarios `nox -s conformance-proxy` lets
    fail through the bridge, each with a reason."""
    listed: dict[str, dict[str, str]] = json.loads(BRIDGE_LIST.read_text("utf-8"))["bridged"]
    expected = {(run, name) for run, names in listed.items() for name in names}
    assert documented_bridge_failures() == expected
    assert all(why.strip() for names in listed.values() for why in names.values())


HANDSHAKE_ONLY = "python handshake_only_server.py"
ONE_ERA = Path(__file__).resolve().parents[1] / "proxy" / "one_era_server.py"


def test_the_wrong_era_transcript_is_what_mcpkit_proxy_prints() -> None:
    """Issue 26: the page's ``--upstream-era modern`` transcript, run against a
    handshake-only server, prints exactly the line shown and exits 2."""
    (block,) = [b for b in marked(PAGE) if b.name == "proxy-cli-wrong-era"]
    command, shown = block.body.strip().splitlines()
    words = command.removeprefix("$ ").replace(HANDSHAKE_ONLY, "SERVER").split()
    assert words[:2] == ["mcpkit", "proxy"]
    argv = [sys.executable, "-m", "mcpkit.cli.main", *words[1:-1], sys.executable, str(ONE_ERA)]
    done = subprocess.run(
        [*argv, "legacy"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == shown


def test_every_output_block_is_what_a_program_prints() -> None:
    """Each ```text block of the page is the expected output of the program above it."""
    shown = [b for b in marked(PAGE) if b.lang == "text"]
    assert [b.name for b in shown] == list(OUTPUTS)
    assert [b.body for b in shown] == [expected for _, _, expected in PROGRAMS]


def commands() -> list[list[str]]:
    shown = [b for b in marked(PAGE) if b.lang == "console" and b.name != "proxy-cli-wrong-era"]
    assert [b.name for b in shown] == list(COMMANDS)
    lines = [b.body.strip() for b in shown]
    assert all(line.startswith("$ mcpkit proxy ") for line in lines), lines
    return [shlex.split(line.removeprefix("$ mcpkit ")) for line in lines]


def test_every_proxy_command_line_parses() -> None:
    for words in commands():
        parsed = build_parser().parse_args(words)
        assert parsed.command == "proxy"


@pytest.mark.anyio
async def test_the_proxy_of_the_bundled_demo_runs() -> None:
    """``mcpkit proxy --upstream-era legacy -- python -m mcpkit.cli.main demo ...``
    serves the demo over stdio: a client of it lists the demo's tools."""
    (words,) = [w for w in commands() if "--" in w]
    cut = words.index("--")
    upstream = [sys.executable if w == "python" else w for w in words[cut + 1 :]]
    args = ["-m", "mcpkit.cli.main", *words[: cut + 1], *upstream]
    transport = StdioTransport(sys.executable, args, stderr="capture")
    with anyio.fail_after(60):
        async with Client(transport) as client:
            tools = await client.list_tools()
    assert "echo" in [t.name for t in tools]
