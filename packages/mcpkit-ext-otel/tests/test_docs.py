"""Every Python example in ``docs/extensions/otel.md`` runs and gives the span tree the
page shows.

Each ```python block starts with ``# docs-example: NAME``; a block without a marker, or
with a name this test does not run, fails. The examples set the global tracer provider,
so they run in a fresh interpreter: the server example is served over Streamable HTTP on
loopback, the client example's ``main`` calls it (its URL pointed at that port), and the
OTLP/HTTP exporter, configured by ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as the page says,
sends the spans to a receiver on loopback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from harness import otlp_receiver
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "otel.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")
RUN = textwrap.dedent(
    """
    import sys, socket, anyio, uvicorn
    server_code, client_code = sys.argv[1], sys.argv[2]
    ns = {"__name__": "docs_server"}
    exec(compile(server_code, "<docs-example server>", "exec"), ns)
    sock = socket.socket(); sock.bind(("127.0.0.1", 0)); port = sock.getsockname()[1]
    client_ns = {"__name__": "docs_client"}
    client_code = client_code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    exec(compile(client_code, "<docs-example client>", "exec"), client_ns)

    async def main():
        web = uvicorn.Server(uvicorn.Config(ns["server"].http_app(), log_level="warning"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(web.serve, [sock])
            with anyio.fail_after(10):
                while not web.started:
                    await anyio.sleep(0.01)
            await client_ns["main"]()
            web.should_exit = True

    anyio.run(main)
    assert ns["provider"].force_flush(10_000)
    ns["provider"].shutdown()
    """
)


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        if lang == "python":
            m = MARKER.match(code)
            assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
            found[m.group(1)] = code
    return found


def test_every_example_is_run_here() -> None:
    assert set(examples()) == {"server", "client"}


def test_server_and_client_examples_give_the_documented_tree() -> None:
    code = examples()
    with otlp_receiver() as receiver:
        env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.url,
            "OTEL_SERVICE_NAME": "weather-mcp",
        }
        done = subprocess.run(
            [sys.executable, "-c", RUN, code["server"], code["client"]],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        spans = receiver.spans()
    assert done.stdout.strip() == "sunny in Oslo"
    by = {(s.name, s.kind): s for s in spans}
    agent = by[("plan trip", ProtoSpan.SPAN_KIND_INTERNAL)]
    client = by[("tools/call get_weather", ProtoSpan.SPAN_KIND_CLIENT)]
    server = by[("tools/call get_weather", ProtoSpan.SPAN_KIND_SERVER)]
    lookup = by[("lookup", ProtoSpan.SPAN_KIND_INTERNAL)]
    assert {s.trace_id for s in (agent, client, server, lookup)} == {agent.trace_id}
    assert client.parent_span_id == agent.span_id
    assert server.parent_span_id == client.span_id
    assert lookup.parent_span_id == server.span_id
    assert ("server/discover", ProtoSpan.SPAN_KIND_SERVER) in by  # adaptive: 2026-07-28
    resource = receiver.requests[0].resource_spans[0].resource
    names = {kv.key: kv.value.string_value for kv in resource.attributes}
    assert names["service.name"] == "weather-mcp"
