"""Server CPU per ``tools/call`` of a protogen-generated tool against a hand-written mcpkit
tool doing the same work (issue 32): target at most 1.1x.

    uv run --package mcpkit-exp-protogen --group test python bench/protogen_cpu.py \\
        [--calls 300] [--reps 9]

Rules:
1. The example's ``library.v1`` bindings are generated first (``mcpkit protogen`` into a
   temporary directory). Both servers serve ``library_search_books`` from the same async
   servicer object (``examples/protogen/servicer.py``): ``generated`` registers it with
   ``register_library``; ``hand`` is one ``@server.tool`` with the same input and output
   schemas doing what the generated tool does: ``ParseDict`` -> the servicer's
   ``SearchBooks`` (within the annotation's 10 s timeout) -> ``MessageToDict`` -> the
   summary text and ``structuredContent``.
2. Every call is a complete 2026-07-28 ``tools/call`` POST handed to the server's ASGI
   app (no client, no socket): the CPU measured is the server's.
3. Each repetition runs ``--calls`` calls on each server, in alternating order (an
   interleaved pair); the figure is ``time.process_time`` per call, and the ratio the
   median of the per-repetition ratios, so a loaded host slows both sides alike.
Not a test: numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from asgi_post import post

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "protogen"
ARGS = {"query": "dune", "limit": 2}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "library_search_books",
            "arguments": ARGS,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
).encode()
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"library_search_books"),
    (b"content-length", str(len(BODY)).encode()),
]


async def call(app: Any) -> bytes:
    """Rule 2: one POST; returns the response body."""
    sent = await post(app, BODY, HEADERS)
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def servers() -> dict[str, Any]:
    """Rule 1."""
    import anyio
    from google.protobuf import json_format
    from library.v1 import library_mcp
    from library.v1 import library_pb2 as pb
    from servicer import Library

    from mcpkit.experimental.protogen import message_schema
    from mcpkit.server import Server

    servicer = Library()
    generated = Server("bench")
    library_mcp.register_library(generated, servicer, completer=None)

    hand = Server("bench")

    async def search(**arguments: Any) -> dict[str, Any]:
        request = json_format.ParseDict(arguments, pb.SearchRequest())
        with anyio.fail_after(10):  # the annotation's timeout: "10s"
            response = await servicer.SearchBooks(request, None)
        data = json_format.MessageToDict(
            response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        text = f"Found {data['total']} books for {data['query']}"
        return {"content": [{"type": "text", "text": text}], "structuredContent": data}

    hand.add_tool(
        search,
        name="library_search_books",
        description="Find books whose title contains the query.",
        input_schema=message_schema(pb.SearchRequest.DESCRIPTOR),
        output_schema=message_schema(pb.SearchResponse.DESCRIPTOR),
        structured_output=True,
    )
    return {"generated": generated, "hand": hand}


async def measure(calls: int, reps: int) -> dict[str, list[float]]:
    """Rule 3."""
    results: dict[str, list[float]] = {"generated": [], "hand": []}
    apps = {label: server.http_app() for label, server in servers().items()}
    lifespans = [app.router.lifespan_context(app) for app in apps.values()]
    for ctx in lifespans:
        await ctx.__aenter__()
    try:
        bodies = {label: await call(app) for label, app in apps.items()}
        for label, body in bodies.items():
            assert b"Found 2 books for dune" in body, (label, body[:300])
        for _ in range(50):
            for app in apps.values():
                await call(app)
        for rep in range(reps):
            order = ["generated", "hand"] if rep % 2 == 0 else ["hand", "generated"]
            for label in order:
                t0 = time.process_time()
                for _ in range(calls):
                    await call(apps[label])
                results[label].append(1e6 * (time.process_time() - t0) / calls)
    finally:
        for ctx in reversed(lifespans):
            await ctx.__aexit__(None, None, None)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args(argv)
    from mcpkit.cli.main import main as mcpkit

    with tempfile.TemporaryDirectory() as tmp:
        proto = EXAMPLE / "protos" / "library" / "v1" / "library.proto"
        try:
            mcpkit(["protogen", str(proto), "-I", str(EXAMPLE / "protos"), "-o", tmp])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
        sys.path[:0] = [tmp, str(EXAMPLE)]
        results = asyncio.run(measure(args.calls, args.reps))
    gen, hand = results["generated"], results["hand"]
    ratio = statistics.median(a / b for a, b in zip(gen, hand, strict=True))
    print("| tool | µs/call (median) |")
    print("|---|---|")
    print(f"| hand-written | {statistics.median(hand):.0f} |")
    print(f"| generated | {statistics.median(gen):.0f} |")
    print(f"ratio generated / hand-written (median of {args.reps} interleaved pairs): {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
