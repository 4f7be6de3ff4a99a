"""``docs/extensions/ui.md``, "Example app": the three ways the page serves the example
(``<!-- docs-block: ui-demo-commands -->``) run, and each serves where its comment says.

The stdio line is spawned and listed by a client; the two HTTP lines run with
port 0 instead of the page's 8765, and the URL each prints is the comment's, its port
normalised (``tools/docs_blocks.py``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.client.stdio import StdioTransport

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from docs_blocks import block, normalise  # noqa: E402

DOC = ROOT / "docs" / "extensions" / "ui.md"
SERVING = re.compile(r"serving streamable HTTP at (\S+)")
MCPKIT = [sys.executable, "-m", "mcpkit.cli.main"]


def lines() -> list[tuple[list[str], str]]:
    """``(words, comment)`` of each command line of the block."""
    found: list[tuple[list[str], str]] = []
    for line in block(DOC, "ui-demo-commands").splitlines():
        command, _, comment = line.partition("  #")
        found.append((shlex.split(command), comment.strip()))
    return found


def served_url(argv: list[str]) -> str:
    """Start ``argv``, return the URL it says it serves at, and stop it."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            said.append(line)
            if SERVING.search(line):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(60)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    found = [m.group(1) for line in said if (m := SERVING.search(line))]
    assert found, "".join(said)
    return found[0]


@pytest.mark.anyio
async def test_the_stdio_line_serves_the_app() -> None:
    """Listed as ``mcpkit ls`` lists it: a client of the spawned command."""
    (words, comment), *_ = lines()
    assert words == ["mcpkit", "ui-demo"]
    assert comment.startswith("stdio")
    transport = StdioTransport(sys.executable, [*MCPKIT[1:], *words[1:]], stderr="capture")
    with anyio.fail_after(60):
        async with Client(transport) as client:
            tools = await client.list_tools()
    assert "show_chart" in [t.name for t in tools]


def test_the_http_lines_serve_where_their_comments_say() -> None:
    _, (http, http_comment), (checkout, checkout_comment) = lines()
    assert http[:2] == ["mcpkit", "ui-demo"]
    # kind-ok: fixed-port the documented port, compared, then replaced by 0
    assert http[-2:] == ["--port", "8765"]
    url = served_url([*MCPKIT, *http[1:-1], "0"])
    assert normalise(url) == normalise(http_comment)
    assert checkout[0] == "python"
    assert checkout[-2:] == ["--http", "8765"]
    assert checkout_comment == "the same, from a checkout"
    assert normalise(served_url([sys.executable, *checkout[1:-1], "0"])) == normalise(http_comment)
