"""The worked example: generate the library service's bindings, serve it over real gRPC on
loopback, expose it as an MCP server forwarding to that gRPC server, and drive it with
mcpkit's client.

Run: ``uv run --package mcpkit-exp-protogen --group test python examples/protogen/demo.py``
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent


def generate(out: Path) -> None:
    """``mcpkit protogen library.proto -o OUT --grpc``, and make OUT importable."""
    from mcpkit.experimental.protogen.command import generate as protogen

    proto = HERE / "protos" / "library" / "v1" / "library.proto"
    if protogen([str(proto)], out, [str(HERE / "protos")], grpc=True) != 0:
        raise SystemExit("protoc failed (its message is above)")
    for path in (str(out), str(HERE)):
        if path not in sys.path:
            sys.path.insert(0, path)


async def serve_and_drive() -> dict[str, Any]:
    """Start the gRPC server (127.0.0.1, port 0), the MCP server forwarding to it, and
    call a tool, read a resource and get a prompt; returns what came back."""
    import grpc
    import grpc.aio
    from library.v1 import library_mcp, library_pb2_grpc
    from servicer import Completer, Library

    from mcpkit.client import Client
    from mcpkit.server import Server

    grpc_server = grpc.aio.server()
    library_pb2_grpc.add_LibraryServicer_to_server(Library(), grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            server = Server("library")
            library_mcp.forward_library(server, channel, completer=Completer())
            async with Client(server) as client:
                found = await client.call_tool("library_search_books", {"query": "dune"})
                book = await client.read_resource("library://books/b2")
                prompt = await client.get_prompt("library_recommend", {"genre": "fiction"})
                missing = await client.call_tool("library_borrow", {"book_id": "nope"})
                return {
                    "search": found.structured_content,
                    "summary": found.content[0].text,  # type: ignore[union-attr] - a text block
                    "book": json.loads(book.contents[0].text),  # type: ignore[union-attr] - text contents
                    "prompt": prompt.messages[0].content.text,  # type: ignore[union-attr] - a text block
                    "missing": missing.structured_content,
                }
    finally:
        await grpc_server.stop(None)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        result = anyio.run(serve_and_drive)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
