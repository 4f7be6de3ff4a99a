"""The official Python SDK's server (``mcp`` 2.3.0), as a peer for mcpkit client tests.

Run: ``python sdk_server.py stdio`` or ``python sdk_server.py http PORT`` (127.0.0.1 only;
PORT 0: any free port). Over HTTP it prints ``serving streamable HTTP at <url>`` on stdout
once it listens (with the real port).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("sdk-peer", instructions="the official SDK server")


class Person(BaseModel):
    name: str = "Ada"
    age: int = 36


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress for each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    await ctx.info(f"counted {steps}")
    return f"counted {steps}"


@server.tool()
async def ask(ctx: Context) -> str:
    """Elicit a person."""
    answer = await ctx.elicit("Who are you?", schema=Person)
    return f"{answer.action}:{answer.data.name if answer.data else ''}"


@server.resource("sdk://hello")
def hello() -> str:
    return "hello from the SDK"


@server.prompt()
def greet(name: str) -> str:
    return f"Greetings, {name}"


def serve_http(port: int) -> None:
    """The SDK's streamable HTTP app under uvicorn on a socket bound here, so that port 0
    works and the real port is announced."""
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    print(f"serving streamable HTTP at http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        serve_http(int(sys.argv[2]))
