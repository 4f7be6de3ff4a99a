"""Defining a server stays cheap to import (the ``from mcpkit.server import Server``
budget of ``docs/performance.md``): what issue 13 added to the server API loads only when
used. The error path's engine exceptions, the error id's ``secrets``, the misspelt-option
hint's ``difflib`` and the typed forms of ``ctx.elicit(msg, Model)`` are imported on first
use, not by defining tools, prompts and resources."""

from __future__ import annotations

import subprocess
import sys

DEFINE = """
import sys
from mcpkit.server import Context, Server
server = Server("s")
@server.tool
def echo(text: str) -> str:
    return text
@server.tool(title="Ask")
async def ask(ctx: Context) -> str:
    return "x"
@server.prompt
def hello(name: str) -> str:
    return name
@server.resource("notes://{title}")
def note(title: str) -> str:
    return title
late = ("asyncio", "difflib", "secrets", "mcpkit.core.engine", "mcpkit.core.forms")
print(",".join(sorted(m for m in late if m in sys.modules)))
"""


def test_defining_a_server_imports_no_error_path_or_form_machinery() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEFINE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_lazy_names_still_resolve() -> None:
    from mcpkit.core.forms import Elicited
    from mcpkit.server import context

    assert context.Elicited is Elicited
