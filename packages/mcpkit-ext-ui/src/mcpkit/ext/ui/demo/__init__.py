"""The example MCP App: a bar chart view, one app tool, one app-only tool.

Served by ``mcpkit ui-demo`` (stdio by default, ``--transport http``) and by
``examples/ui_app/server.py``; the browser tests render it in chromium.

- ``show_chart(title, values)`` (visibility ``model`` + ``app``): returns the chart data
  as structured content and a one-line text summary (the fallback hosts without MCP Apps
  show). Its view is ``ui://ui-demo/chart``.
- ``summarize(values)`` (visibility ``app`` only): count/min/max/mean, called by the
  view's "Stats" button through the host; never listed to a client without MCP Apps.
- ``ui://ui-demo/chart``: a single-file HTML view: the bundled bridge
  (``static/bridge.js``, ``McpkitApp``) and ``chart.js`` inlined, no external origin, so
  the spec's default CSP suffices.
"""

from __future__ import annotations

from importlib.resources import files

from pydantic import BaseModel

from mcpkit.ext.ui.server import AppsExtension, app_html
from mcpkit.server.app import Server

__all__ = ["CHART_URI", "Chart", "Stats", "build_server", "chart_view"]

CHART_URI = "ui://ui-demo/chart"

BODY = """<main>
  <h1 id="title">Waiting for a chart...</h1>
  <svg id="chart" width="320" height="160" role="img" aria-label="bar chart"></svg>
  <p><button id="stats-button" disabled>Stats</button> <span id="stats"></span></p>
  <p id="status">connecting</p>
</main>"""
STYLE = """<style>
  body { font: 14px system-ui, sans-serif; margin: 12px; color: var(--color-text-primary, #111); }
  .bar { fill: #3b82f6; }
  #status { color: #666; font-size: 12px; }
</style>
"""


class Chart(BaseModel):
    """The chart a view draws: a title and bar heights."""

    title: str
    values: list[float]


class Stats(BaseModel):
    """Summary statistics of a series."""

    count: int
    min: float
    max: float
    mean: float


def chart_view() -> str:
    """The view's HTML document: the bridge, then ``chart.js`` (in this package)."""
    script = files(__name__).joinpath("chart.js").read_text("utf-8")
    return app_html(BODY, script=script, title="Chart", head=STYLE)


def _summary(chart: Chart) -> str:
    if not chart.values:
        return f"Chart {chart.title!r}: no values."
    lo, hi = min(chart.values), max(chart.values)
    return f"Chart {chart.title!r}: {len(chart.values)} values from {lo:g} to {hi:g}."


def show_chart(title: str, values: list[float]) -> Chart:
    """Draw a bar chart of `values` titled `title`."""
    return Chart(title=title, values=values)


def summarize(values: list[float]) -> Stats:
    """Count, min, max and mean of `values` (called by the chart view)."""
    if not values:
        return Stats(count=0, min=0.0, max=0.0, mean=0.0)
    mean = sum(values) / len(values)
    return Stats(count=len(values), min=min(values), max=max(values), mean=mean)


def build_server() -> Server:
    """The demo server: ``show_chart``, ``summarize`` and the chart view."""
    server = Server("mcpkit-ui-demo", instructions="Draws bar charts as MCP Apps.")
    ui = AppsExtension(server)

    ui.tool(resource_uri=CHART_URI, text=_summary)(show_chart)
    ui.tool(resource_uri=CHART_URI, visibility=["app"])(summarize)
    ui.resource(CHART_URI, html=chart_view, title="Bar chart", prefers_border=True)
    return server
