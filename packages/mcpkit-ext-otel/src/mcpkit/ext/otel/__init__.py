"""mcpkit-ext-otel: OpenTelemetry spans and metrics for MCP servers and clients.

Follows the OpenTelemetry semantic conventions for MCP (``docs/gen-ai/mcp.md``, status:
development) and carries W3C trace context in ``params._meta`` (SEP-414). Depends on
``opentelemetry-api`` only: the SDK and exporters are the application's choice.

Surfaces: the core's tracing hook (:class:`mcpkit.core.tracing.Tracer`, installed with
``Server.set_tracer`` / ``Client.set_tracer``); nothing else of mcpkit is patched.

Rules:
1. :func:`instrument` installs one :class:`~mcpkit.ext.otel.tracer.OtelTracer` on a
   server or a client; instrumenting again replaces it.
2. Spans: one per request and notification handled (SERVER) or sent (CLIENT), named
   and attributed per the conventions (:mod:`.semconv`, :mod:`.recorder`,
   :mod:`.tracer`); a task's work continues the creating ``tools/call`` trace.
3. Metrics: ``mcp.server.operation.duration``, ``mcp.client.operation.duration``,
   ``mcp.server.session.duration`` and ``mcp.client.session.duration`` (:mod:`.metrics`),
   in seconds with the conventions' buckets.
4. Tool arguments and results are recorded only with ``record_arguments=True``; the
   flags take a bool only (``"false"`` is a ``TypeError``, not truthy).
5. Without a tracer or meter provider argument the global ones are used (no-ops until
   the application installs an SDK).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import TracerProvider

from mcpkit.ext.otel.metrics import Durations, meter_for
from mcpkit.ext.otel.tracer import OtelTracer

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.server import Server

__all__ = ["OtelTracer", "instrument", "otel_tracer"]

SCOPE = "mcpkit.ext.otel"
try:
    __version__ = version("mcpkit-ext-otel")
except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
    __version__ = "0"


def otel_tracer(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    propagator: TextMapPropagator | None = None,
    record_arguments: bool = False,
    uri_in_span_name: bool = False,
    metric_resource_uri: bool = False,
) -> OtelTracer:
    """A :class:`~mcpkit.core.tracing.Tracer` emitting spans and metrics; the options
    are :func:`instrument`'s. Install it yourself with ``server.set_tracer(t)`` or
    ``client.set_tracer(t)`` (one tracer may serve several servers and clients)."""
    flags: dict[str, object] = {
        "record_arguments": record_arguments,
        "uri_in_span_name": uri_in_span_name,
        "metric_resource_uri": metric_resource_uri,
    }
    for flag, value in flags.items():  # "false" is truthy: it would record arguments
        if not isinstance(value, bool):
            raise TypeError(f"instrument(): {flag}={value!r} must be True or False")
    tracer = trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider)
    meter = meter_for(meter_provider, __version__)
    return OtelTracer(
        tracer,
        Durations(meter, "server"),
        Durations(meter, "client"),
        propagator,
        record_arguments=record_arguments,
        uri_in_span_name=uri_in_span_name,
        metric_resource_uri=metric_resource_uri,
    )


def instrument(
    target: Server | Client,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    propagator: TextMapPropagator | None = None,
    record_arguments: bool = False,
    uri_in_span_name: bool = False,
    metric_resource_uri: bool = False,
) -> OtelTracer:
    """Trace and measure every MCP message ``target`` (a
    :class:`~mcpkit.server.Server` or a :class:`~mcpkit.client.Client`) handles or sends.

    - ``tracer_provider`` / ``meter_provider``: where spans and metrics go (default:
      the global providers).
    - ``propagator``: how trace context is written to and read from ``params._meta``
      (default: W3C Trace Context and W3C Baggage, as SEP-414 specifies; pass
      ``opentelemetry.propagate.get_global_textmap()`` to use the application's).
    - ``record_arguments``: record ``gen_ai.tool.call.arguments`` and
      ``gen_ai.tool.call.result`` on ``tools/call`` spans (off: they may be sensitive).
    - ``uri_in_span_name``: name resource spans ``resources/read {uri}`` (off: high
      cardinality).
    - ``metric_resource_uri``: add the Opt-In ``mcp.resource.uri`` to the operation
      histograms (off: high cardinality).

    Returns the installed tracer. Raises ``TypeError`` when ``target`` has no tracing
    hook (not an mcpkit server or client), or when a flag is not a bool (a string
    ``"false"`` would otherwise turn recording on).
    """
    set_tracer = getattr(target, "set_tracer", None)
    if set_tracer is None:
        raise TypeError(
            f"instrument() takes an mcpkit Server or Client, not {type(target).__name__}"
        )
    installed = otel_tracer(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        propagator=propagator,
        record_arguments=record_arguments,
        uri_in_span_name=uri_in_span_name,
        metric_resource_uri=metric_resource_uri,
    )
    set_tracer(installed)
    return installed
