"""CPU per ``tools/call`` through the MCP Apps host (``mcpkit.ext.ui.host.AppHost``),
against the same call made by the client directly, in one process: what the host's
rules (visibility checked on every view call, message checks, the host-to-view queue)
add to a call (issue 16).

    uv run --group bench python bench/ui_host_cpu.py [--calls 300] [--reps 7]

Rules:
1. One in-memory client session to the example app's server
   (``mcpkit.ext.ui.demo:build_server``), both eras: ``direct`` is ``client.call_tool``
   of the app-only ``summarize`` tool; ``view`` is the same call sent by a view to
   ``AppHost.handle`` (visibility re-read, then forwarded); ``open`` is a whole view:
   a new ``AppHost``, ``load()`` (the ``ui://`` resource), the view's handshake and the
   agent's ``call_tool`` of ``show_chart`` (the view gets ``tool-input`` and
   ``tool-result``, drained here), against ``direct_open``: the same tool called and
   the same resource read directly. ``direct_raw`` is the same ``tools/call`` sent with
   ``client.request`` (what the host forwards: no typed result, no output-schema
   check); ``view_raw`` is ``view`` again, measured against it.
2. Each repetition runs ``--calls`` calls per form, interleaved; the figure is
   ``time.process_time`` per call, and a ratio is the median of per-repetition ratios,
   so a busy host slows both sides of each ratio alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ARGS = {"values": [3, 1, 4, 1, 5]}
CHART = {"title": "Rain", "values": [3, 1, 4, 1, 5]}


async def measure(mode: str, calls: int, reps: int) -> dict[str, list[float]]:
    from mcpkit.client import Client
    from mcpkit.ext.ui.demo import CHART_URI, build_server
    from mcpkit.ext.ui.host import AppHost, client_extension

    async with Client(build_server(), mode=mode, extensions=[client_extension()]) as client:
        init = {"appInfo": {"name": "b", "version": "1"}, "appCapabilities": {}}
        init["protocolVersion"] = "2026-01-26"

        async def opened() -> AppHost:
            host = AppHost(client, tool_name="show_chart")
            resource = await host.load()
            await host.handle(
                {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": init}
            )
            await host.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
            assert resource.html
            return host

        host = await opened()
        n = 0

        async def direct() -> None:
            await client.call_tool("summarize", ARGS)

        async def direct_raw() -> None:
            params = {"name": "summarize", "arguments": ARGS}
            result = await client.request("tools/call", params, use_cache=False)
            assert "content" in result

        async def view() -> None:
            nonlocal n
            n += 1
            params = {"name": "summarize", "arguments": ARGS}
            reply = await host.handle(
                {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            )
            assert reply is not None
            assert "result" in reply, reply

        async def direct_open() -> None:
            await client.read_resource(CHART_URI)
            await client.call_tool("show_chart", CHART)

        async def open_view() -> None:
            view_host = await opened()
            await view_host.call_tool(CHART)
            outgoing = aiter(view_host.outgoing)
            await anext(outgoing)  # tool-input
            await anext(outgoing)  # tool-result

        forms: dict[str, Any] = {
            "direct": direct,
            "direct_raw": direct_raw,
            "view": view,
            "view_raw": view,
            "direct_open": direct_open,
            "open": open_view,
        }
        results: dict[str, list[float]] = {name: [] for name in forms}
        for fn in forms.values():
            for _ in range(30):
                await fn()
        for _ in range(reps):
            for name, fn in forms.items():
                t0 = time.process_time()
                for _ in range(calls):
                    await fn()
                results[name].append(1e6 * (time.process_time() - t0) / calls)
        return results


def table(title: str, results: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Print the table; returns its rows (form, µs per call, ratio, reference)."""
    print(f"\n{title}\n")
    print("| form | µs/call (median) | × its direct call | µs added |")
    print("|---|---|---|---|")
    refs = {"direct": "direct", "view": "direct", "direct_open": "direct_open"}
    refs |= {"direct_raw": "direct_raw", "view_raw": "direct_raw"}
    refs["open"] = "direct_open"
    rows: list[dict[str, Any]] = []
    for name, values in results.items():
        ref = results[refs[name]]
        ratio = statistics.median(v / r for v, r in zip(values, ref, strict=True))
        med, base = statistics.median(values), statistics.median(ref)
        print(f"| {name} | {med:.0f} | {ratio:.2f} | {med - base:.0f} |")
        rows.append({"form": name, "us_per_call": round(med, 1), "ratio": round(ratio, 3)})
        rows[-1]["reference"] = refs[name]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for mode in ("legacy", "modern"):
        got = table(f"in memory, {mode}", anyio.run(measure, mode, args.calls, args.reps))
        rows += [{**row, "era": "handshake" if mode == "legacy" else "modern"} for row in got]
    if args.json:
        args.json.write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
