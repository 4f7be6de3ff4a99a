"""A stdio server instrumented with the SDK, writing every finished span as a JSON line
to the file named by argv[1] (for the stdio end-to-end test)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JSONLines(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a") as f:
            for s in spans:
                assert s.context is not None
                f.write(
                    json.dumps(
                        {
                            "name": s.name,
                            "kind": s.kind.name,
                            "trace_id": f"{s.context.trace_id:032x}",
                            "span_id": f"{s.context.span_id:016x}",
                            "parent_id": f"{s.parent.span_id:016x}" if s.parent else None,
                            "attributes": dict(s.attributes or {}),
                        }
                    )
                    + "\n"
                )
        return SpanExportResult.SUCCESS


def main() -> None:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from harness import Telemetry
    from opentelemetry.sdk.metrics import MeterProvider
    from test_end_to_end import build_server

    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(JSONLines(sys.argv[1])))
    telemetry = Telemetry(tp, None, MeterProvider(), None)  # type: ignore[arg-type]
    build_server(telemetry).run("stdio")


if __name__ == "__main__":
    main()
