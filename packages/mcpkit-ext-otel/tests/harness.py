"""Test harness: the OpenTelemetry SDK's in-memory span exporter and metric reader, an
OTLP/HTTP receiver on loopback, and a uvicorn server on loopback.

Rules:
1. Every test gets its own tracer and meter providers (never the global ones), so
   tests running beside each other in one process do not see each other's spans.
2. The OTLP receiver binds 127.0.0.1 on a free port, keeps every decoded
   ``ExportTraceServiceRequest`` and answers 200 with an empty export response.
3. Servers started here bind 127.0.0.1 and are up before the block runs (bounded: 10 s).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class Telemetry:
    """Rule 1: one test's providers and what they collected."""

    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    meter_provider: MeterProvider
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> ReadableSpan:
        """The one finished span named ``name`` (fails when there are none or several)."""
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, (name, [s.name for s in self.spans()])
        return found[0]

    def points(self, metric: str) -> list[HistogramDataPoint]:
        """Every histogram data point of ``metric`` collected so far."""
        data = self.reader.get_metrics_data()
        out: list[HistogramDataPoint] = []
        if data is None:
            return out
        for rm in data.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == metric:
                        out += [p for p in m.data.data_points if isinstance(p, HistogramDataPoint)]
        return out


def make_telemetry() -> Telemetry:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return Telemetry(tp, exporter, MeterProvider(metric_readers=[reader]), reader)


@dataclass
class Receiver:
    """Rule 2: what the loopback OTLP/HTTP receiver got."""

    url: str
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)

    def spans(self) -> Sequence[Any]:
        return [
            span
            for req in self.requests
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]


@contextlib.contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """Rule 2: an OTLP/HTTP traces endpoint (``POST /v1/traces``, protobuf) on loopback."""
    lock = threading.Lock()
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            with lock:
                receiver.requests.append(req)
                receiver.content_types.append(self.headers.get("content-type", ""))
                receiver.authorizations.append(self.headers.get("authorization"))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1/traces"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def free_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def serve_http(app: Any) -> AsyncIterator[str]:
    """Rule 3: serve ``app`` with uvicorn on loopback; yields ``http://127.0.0.1:PORT``."""
    sock = free_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield base
        finally:
            server.should_exit = True
            server.force_exit = True
