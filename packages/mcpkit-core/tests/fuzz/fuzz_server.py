"""The server the fuzz suite attacks: every feature a frame can reach, none that blocks.

Tools answer at once (``nap`` sleeps at most 50 ms, so duplicate ids overlap); nothing
asks the client for input, so no frame can make the server wait on the fuzzer.
``python fuzz_server.py`` serves it over stdio (``stdio`` tests); ``build()`` gives
the object (in-memory and HTTP tests).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from pydantic import BaseModel

from mcpkit.server import Server, ToolError


class Sum(BaseModel):
    total: int


def build() -> Server:
    server = Server("fuzz-target", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def nap(ms: int) -> str:
        """Sleep up to 50 ms, then answer."""
        await anyio.sleep(max(0, min(ms, 50)) / 1000)
        return "rested"

    @server.tool()
    def structured(a: int) -> Sum:
        """Structured output with an outputSchema."""
        return Sum(total=a)

    @server.tool()
    def fails(text: str) -> str:
        """Always a tool error."""
        raise ToolError(f"refused {text!r}")

    @server.prompt()
    def greet(name: str) -> str:
        """A greeting."""
        return f"Hello {name}"

    @server.completion(prompt="greet")
    def complete_name(argument: str, value: str) -> list[str]:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]

    @server.resource("fuzz://static")
    def static() -> str:
        """A fixed text."""
        return "static"

    @server.resource("fuzz://item/{n}")
    def item(n: str) -> str:
        """An item by number."""
        return f"item {n}"

    return server


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    build().run("stdio")
