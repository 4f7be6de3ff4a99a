"""Every Python example in ``docs/extensions/otel.md`` runs and gives the span tree the
page shows.

Each ```python block starts with ``# docs-example: NAME``; a block without a marker, or
with a name this test does not run, fails. The examples set the global tracer provider,
so they run in a fresh interpreter: the server example is served over Streamable HTTP on
loopback, the client example's ``main`` calls it (its URL pointed at that port), and the
OTLP/HTTP exporter, configured by the page's environment variables (``otel-environment``;
the endpoint pointed at the receiver), sends the spans to a receiver on loopback. The
trace is the page's tree (``otel-trace-tree``), and the options the page lists
(``otel-instrument-signature``) are ``instrument``'s signature."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

from harness import otlp_receiver
from opentelemetry.exporter.otlp.proto.http import trace_exporter
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk import environment_variables

from mcpkit.ext.otel import instrument

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import pytest
from docs_blocks import block

pytestmark = pytest.mark.lowest

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


def documented_environment() -> dict[str, str]:
    """``NAME=value`` lines of the page's OTLP block (comments dropped)."""
    found: dict[str, str] = {}
    for line in block(DOC, "otel-environment").splitlines():
        name, _, value = line.split("  #")[0].strip().partition("=")
        found[name] = value
    return found


def documented_tree() -> list[tuple[int, str, str]]:
    """``(depth, span name, kind)`` of each line of the page's tree."""
    rows: list[tuple[int, str, str]] = []
    for line in block(DOC, "otel-trace-tree").splitlines():
        m = re.match(r"^([\s│└├─]*)(.+?) \[(\w+)\]\s+trace t1\b", line)
        assert m, line
        rows.append((len(m.group(1)) // 4, m.group(2), m.group(3)))
    return rows


def test_the_environment_block_names_real_variables_and_the_real_default() -> None:
    env = documented_environment()
    standard = {v for k, v in vars(environment_variables).items() if k.startswith("OTEL_")}
    assert set(env) <= standard, set(env) - standard
    default = trace_exporter.DEFAULT_ENDPOINT + trace_exporter.DEFAULT_TRACES_EXPORT_PATH
    assert f"# default {default}" in block(DOC, "otel-environment")


def test_the_options_block_is_instruments_signature() -> None:
    shown = " ".join(block(DOC, "otel-instrument-signature").split())
    params: list[str] = []
    for p in inspect.signature(instrument).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in params:
            params.append("*")
        params.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    assert shown == f"instrument({', '.join(params)})"


def test_server_and_client_examples_give_the_documented_tree() -> None:
    code = examples()
    with otlp_receiver() as receiver:
        page_env = documented_environment()
        page_env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = receiver.url
        env = {**os.environ, **page_env}
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
    chain: list[ProtoSpan] = []
    for depth, name, kind in documented_tree():
        span = by[(name, getattr(ProtoSpan, f"SPAN_KIND_{kind}"))]
        if depth:
            assert span.parent_span_id == chain[depth - 1].span_id, name
        chain[depth:] = [span]
        assert span.trace_id == by[("plan trip", ProtoSpan.SPAN_KIND_INTERNAL)].trace_id
    headers = urllib.parse.unquote(documented_environment()["OTEL_EXPORTER_OTLP_HEADERS"])
    assert set(receiver.authorizations) == {headers.partition("=")[2]}
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
    assert names["service.name"] == documented_environment()["OTEL_SERVICE_NAME"]
