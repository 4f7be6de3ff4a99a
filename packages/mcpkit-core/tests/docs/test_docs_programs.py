"""The client and transport guides' examples are real programs: each complete one runs.

``docs/client.md`` and ``docs/transports.md`` show complete programs (they end by running
``anyio.run(main)``) and fragments (a hook, a mount, options). Every block must compile;
every complete program runs in a fresh interpreter and must exit 0, with its HTTP
examples pointed at a real ``mcpkit demo`` on a free loopback port instead of the
documented URL (``DOCUMENTED_URL``). Every block of the client guide is a complete
program (its introduction says so); the transports guide's fragments that do not serve
forever run too, after the guide's first example (a name they use but never define
fails).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
from demo_process import DemoProcess, demo_process

ROOT = Path(__file__).resolve().parents[4]
GUIDES = ("docs/client.md", "docs/transports.md")
# kind-ok: fixed-port the documented URL, replaced by a free port before it runs
DOCUMENTED_URL = "http://127.0.0.1:8765/mcp"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
SERVES_FOREVER = re.compile(r"^\s*(server\.run\(|run_http\(|uvicorn\.run\()", re.MULTILINE)


def python_blocks() -> list[tuple[str, int, str]]:
    found: list[tuple[str, int, str]] = []
    for name in GUIDES:
        for index, code in enumerate(FENCE.findall((ROOT / name).read_text("utf-8"))):
            found.append((name, index, code))
    return found


BLOCKS = python_blocks()
PROGRAMS = [(f, i, c) for f, i, c in BLOCKS if "anyio.run(main)" in c]
DEFINITIONS = [
    (f, i, c) for f, i, c in BLOCKS if "anyio.run(main)" not in c and not SERVES_FOREVER.search(c)
]


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoProcess]:
    with demo_process() as running:
        yield running


def test_every_client_guide_block_is_a_complete_program() -> None:
    """The guide says so in its introduction: each block runs on its own."""
    fragments = [i for f, i, c in BLOCKS if f == "docs/client.md" and "anyio.run(main)" not in c]
    assert not fragments, f"docs/client.md blocks {fragments} are not complete programs"


def test_the_client_guide_shows_a_complete_program_per_transport() -> None:
    client_programs = [c for f, _, c in PROGRAMS if f == "docs/client.md"]
    assert any("Client(server" in c for c in client_programs)  # in memory
    assert any("StdioTransport(" in c for c in client_programs)  # stdio
    assert any("HttpTransport(" in c for c in client_programs)  # streamable HTTP


@pytest.mark.parametrize(("file", "index", "code"), BLOCKS, ids=lambda v: str(v)[:40])
def test_every_python_block_compiles(file: str, index: int, code: str) -> None:
    compile(code, f"{file}#python-{index}", "exec")


@pytest.mark.parametrize(
    ("file", "index", "code"), PROGRAMS, ids=[f"{f}#python-{i}" for f, i, _ in PROGRAMS]
)
def test_complete_program_runs(demo: DemoProcess, file: str, index: int, code: str) -> None:
    program = code.replace(DOCUMENTED_URL, demo.url)
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{file} block {index} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{file} block {index} printed nothing"


@pytest.mark.parametrize(
    ("file", "index", "code"), DEFINITIONS, ids=[f"{f}#python-{i}" for f, i, _ in DEFINITIONS]
)
def test_defining_fragment_runs(file: str, index: int, code: str) -> None:
    from mcpkit.server import Server

    # Fragments continue the guide's first example, which defines `server`.
    namespace: dict[str, object] = {"__name__": f"docs_fragment_{index}", "server": Server("d")}
    exec(compile(code, f"{file}#python-{index}", "exec"), namespace)
