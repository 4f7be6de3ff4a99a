"""Summarise a benchmark run: medians, ratios and the issue-8 targets.

    python bench/report.py bench/results/<run>     # writes summary.md and summary.json

Rules:
1. Every figure is the median over repetitions. A ratio is computed per repetition
   against the reference measured in the same repetition (the raw floor of the same
   transport and era: ``ref_raw``; the official SDK's counterpart: ``ref_mcp``), and the
   median of those per-repetition ratios is reported.
2. ``×raw req/s`` and ``×mcp req/s`` are throughput ratios (> 1: faster than the
   reference); ``×raw cpu`` is server CPU per request over the floor's (< 1 is
   impossible in principle); ``×raw p50`` is median latency over the floor's.
3. ``srv µs/req`` is server CPU (utime + stime) per request: the steadiest figure on a
   shared host. ``foreign CPU %`` is host CPU used by neither client nor server during
   the run, in % of one core: large values mean a noisy neighbour. ``spread %`` is
   (max - min) / median of req/s over repetitions.
4. A target is "met" or "not met" from those medians, "not measured" when a run it needs
   is missing; thresholds are the issue's, never adjusted to the results. Beside each
   throughput target stands the ratio that server CPU per request predicts (reference
   CPU / ours): on a noisy host it is the steadier witness, but the verdict is taken on
   the figure the issue names.
5. Tasks memory (``tasks_memory.py``): per-task figures are medians over repetitions;
   verdicts are taken on the Python heap (tracemalloc), which is exact and repeatable.
   RSS is shown beside it for information only: the allocator keeps freed arenas and
   pages, so RSS differences of a few hundred bytes per task move between runs.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

JSON = dict[str, Any]
Key = tuple[str, str, int, int]  # suite, label, concurrency, payload


def median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def metric(row: JSON, name: str) -> float | None:
    """A figure of one run: ``p50``/``p99`` (ms), ``cpu`` (µs/request) or a top-level key."""
    latency: JSON = row.get("latency_ms") or {}
    if name in ("p50", "p99"):
        return latency.get(name)
    if name == "cpu":
        return row.get("server_cpu_us_per_req")
    return row.get(name)


class Runs:
    """The throughput rows of one run, indexed by scenario, condition and repetition."""

    def __init__(self, rows: list[JSON]) -> None:
        self.by: dict[Key, dict[int, JSON]] = defaultdict(dict)
        self.order: dict[str, list[str]] = defaultdict(list)
        self.info: dict[str, JSON] = {}
        for r in rows:
            if r.get("suite") not in ("http", "stdio", "auth", "otel") or "concurrency" not in r:
                continue
            if "fatal" in r or not r.get("requests_ok"):
                continue
            self.by[(r["suite"], r["label"], r["concurrency"], r["payload"])][r["rep"]] = r
            if r["label"] not in self.order[r["suite"]]:
                self.order[r["suite"]].append(r["label"])
            self.info[r["label"]] = r

    def value(self, suite: str, label: str, c: int, size: int, name: str) -> float | None:
        return median(metric(r, name) for r in self.by.get((suite, label, c, size), {}).values())

    def ratio(
        self, suite: str, label: str, ref: str | None, c: int, size: int, name: str
    ) -> float | None:
        """Rule 1: the median of per-repetition ``label / ref`` ratios of ``name``."""
        if ref is None:
            return None
        mine, theirs = (
            self.by.get((suite, label, c, size), {}),
            self.by.get((suite, ref, c, size), {}),
        )
        ratios: list[float] = []
        for rep, row in mine.items():
            a, b = metric(row, name), metric(theirs.get(rep, {}), name)
            if a is not None and b:
                ratios.append(a / b)
        return median(ratios)

    def spread(self, suite: str, label: str, c: int, size: int) -> float | None:
        rps = [r["rps"] for r in self.by.get((suite, label, c, size), {}).values()]
        mid = median(rps)
        if len(rps) < 2 or not mid:
            return None
        return 100.0 * (max(rps) - min(rps)) / mid

    def conditions(self, suite: str) -> list[tuple[int, int]]:
        return sorted({(c, p) for (s, _, c, p) in self.by if s == suite})


def throughput(runs: Runs, suite: str) -> tuple[list[JSON], list[str]]:
    rows: list[JSON] = []
    md: list[str] = []
    for c, size in runs.conditions(suite):
        md += [
            f"\n#### {suite}: concurrency {c}, payload {size} B\n",
            "| server | req/s | p50 ms | p99 ms | srv µs/req | ×raw req/s | ×raw cpu | ×raw p50 "
            "| ×mcp req/s | spread % | errors | foreign CPU % |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label in runs.order[suite]:
            reps = runs.by.get((suite, label, c, size))
            if not reps:
                continue
            info = runs.info[label]
            raw, mcp = info.get("ref_raw"), info.get("ref_mcp")
            row: JSON = {
                "suite": suite,
                "label": label,
                "sdk": info.get("sdk"),
                "era": info.get("era"),
                "concurrency": c,
                "payload": size,
                "reps": len(reps),
                "rps": runs.value(suite, label, c, size, "rps"),
                "p50_ms": runs.value(suite, label, c, size, "p50"),
                "p99_ms": runs.value(suite, label, c, size, "p99"),
                "server_cpu_us_per_req": runs.value(suite, label, c, size, "cpu"),
                "rps_x_raw": runs.ratio(suite, label, raw, c, size, "rps"),
                "cpu_x_raw": runs.ratio(suite, label, raw, c, size, "cpu"),
                "p50_x_raw": runs.ratio(suite, label, raw, c, size, "p50"),
                "rps_x_mcp": runs.ratio(suite, label, mcp, c, size, "rps"),
                "spread_pct": runs.spread(suite, label, c, size),
                "errors": sum(r.get("errors") or 0 for r in reps.values()),
                "foreign_cpu_pct": runs.value(suite, label, c, size, "foreign_cpu_pct"),
                "client_cpu_pct": runs.value(suite, label, c, size, "client_cpu_pct"),
            }
            rows.append(row)
            md.append(
                f"| {label} | {fmt(row['rps'])} | {fmt(row['p50_ms'], 2)} | {fmt(row['p99_ms'], 2)}"
                f" | {fmt(row['server_cpu_us_per_req'])} | {fmt(row['rps_x_raw'], 3)}"
                f" | {fmt(row['cpu_x_raw'], 2)} | {fmt(row['p50_x_raw'], 2)}"
                f" | {fmt(row['rps_x_mcp'], 2)} | {fmt(row['spread_pct'])} | {row['errors']}"
                f" | {fmt(row['foreign_cpu_pct'])} |"
            )
    return rows, md


def sessions(rows: list[JSON]) -> tuple[list[JSON], list[str]]:
    """Memory per idle session (first cycle: RSS with the sessions open minus RSS before,
    per session), what stays after the first DELETE round, and growth of the after-close
    RSS: over all cycles, and in the last cycle alone (the figure for "keeps growing")."""
    by: dict[str, list[JSON]] = defaultdict(list)
    for r in rows:
        if r.get("suite") == "sessions" and "fatal" not in r and r.get("cycles"):
            by[r["label"]].append(r)
    out: list[JSON] = []
    md = [
        "| server | sessions × cycles | KiB per idle session (per rep) | kept after 1st"
        " close, KiB/session | RSS after each close, MiB (last rep) | growth per cycle,"
        " KiB/session: all cycles / last cycle | sessions/s | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, reps in by.items():
        kept: list[float] = []
        growth: list[float] = []
        growth_last: list[float] = []
        for r in reps:
            n = r["sessions_per_cycle"]
            closed = [c["rss_kib_closed"] for c in r["cycles"] if c.get("rss_kib_closed")]
            if closed and r.get("rss_kib_start") and n:
                kept.append((closed[0] - r["rss_kib_start"]) / n)
            if len(closed) >= 2 and n:
                growth.append((closed[-1] - closed[0]) / n / (len(closed) - 1))
                growth_last.append((closed[-1] - closed[-2]) / n)
        per = [r.get("rss_per_session_kib") for r in reps]
        last = reps[-1]
        row: JSON = {
            "label": label,
            "reps": len(reps),
            "sessions": last["sessions_per_cycle"],
            "cycles": len(last["cycles"]),
            "kib_per_session": median(per),
            "kib_per_session_all": per,
            "kept_after_close_kib_per_session": median(kept),
            "growth_kib_per_session_cycle": median(growth),
            "growth_last_cycle_kib_per_session": median(growth_last),
            "rss_kib_closed_last_rep": [c.get("rss_kib_closed") for c in last["cycles"]],
            "sessions_per_s": median(c.get("sessions_per_s") for r in reps for c in r["cycles"]),
            "errors": sum(r.get("errors") or 0 for r in reps),
        }
        out.append(row)
        closed_mib = ", ".join(fmt((k or 0) / 1024, 1) for k in row["rss_kib_closed_last_rep"])
        md.append(
            f"| {label} | {row['sessions']} × {row['cycles']} | {fmt(row['kib_per_session'], 2)}"
            f" ({', '.join(fmt(p, 1) for p in per)})"
            f" | {fmt(row['kept_after_close_kib_per_session'], 2)} | {closed_mib}"
            f" | {fmt(row['growth_kib_per_session_cycle'], 2)}"
            f" / {fmt(row['growth_last_cycle_kib_per_session'], 2)}"
            f" | {fmt(row['sessions_per_s'])} | {row['errors']} |"
        )
    return out, md


def startup(rows: list[JSON]) -> tuple[JSON, list[str]]:
    imports: dict[str, list[float]] = defaultdict(list)
    cold: dict[str, list[JSON]] = defaultdict(list)
    for r in rows:
        if r.get("suite") == "imports":
            imports[r["label"]] += r["samples_ms"]
        elif r.get("suite") == "coldstart" and "fatal" not in r:
            cold[r["label"]].append(r)
    out: JSON = {"imports": {}, "coldstart": {}}
    bare = median(imports.get("python -c pass", [])) or 0.0
    md = [
        "| command (fresh interpreter, warm .pyc) | median ms | minus bare interpreter ms"
        " | samples |",
        "|---|---|---|---|",
    ]
    for label, samples in imports.items():
        mid = median(samples) or 0.0
        out["imports"][label] = {"median_ms": mid, "net_ms": mid - bare, "samples": len(samples)}
        md.append(f"| `{label}` | {mid:.0f} | {mid - bare:.0f} | {len(samples)} |")
    md += [
        "",
        "| stdio server | spawn → initialize result ms | spawn → first tools/call result ms"
        " | samples | HTTP modules imported |",
        "|---|---|---|---|---|",
    ]
    for label, samples in cold.items():
        init = median(s.get("spawn_to_initialize_ms") for s in samples)
        first = median(s.get("spawn_to_first_result_ms") for s in samples)
        http = sorted({m for s in samples for m in s.get("http_modules", [])})
        out["coldstart"][label] = {
            "spawn_to_initialize_ms": init,
            "spawn_to_first_result_ms": first,
            "samples": len(samples),
            "http_modules": http,
            "module_dump_seen": any("http_modules" in s for s in samples),
        }
        md.append(
            f"| {label} | {fmt(init)} | {fmt(first)} | {len(samples)}"
            f" | {', '.join(http) or 'none'} |"
        )
    return out, md


# (key in tasks_memory.py's result, what it is) for the tasks-memory table.
TASK_FIGURES = (
    ("finished_bytes_per_task", "finished tasks held in the store, per task"),
    ("running_bytes_per_task", "running tasks (on top of the finished ones), per task"),
    ("floor_running_bytes_per_task", "reference: a bare anyio task parked on an event"),
    ("peak_bytes_per_task", "peak over the run, per task held at the peak (2 N)"),
    ("left_bytes_per_task", "left after TTL expiry and sweep, per task held at the peak (2 N)"),
    ("growth_bytes_per_task", "growth after a second round of N tasks, expired, per task"),
)
ALIVE_KEYS = ("records", "jobs", "coroutines", "asyncio_tasks")


def tasks_memory(rows: list[JSON]) -> tuple[JSON, list[str]]:
    """Rule 5: the medians of ``tasks_memory.py``'s figures, per mode (heap, rss)."""
    by: dict[str, list[JSON]] = defaultdict(list)
    for r in rows:
        if r.get("suite") == "tasks" and "fatal" not in r:
            by[r["mode"]].append(r)
    out: JSON = {}
    for mode, reps in by.items():
        fig: JSON = {key: median(r.get(key) for r in reps) for key, _ in TASK_FIGURES}
        fig["n"] = reps[-1]["n"]
        fig["reps"] = len(reps)
        fig["store_after_expiry"] = median(r["alive_after_expiry"]["store"] for r in reps)
        fig["alive_after_expiry"] = median(
            sum(r["alive_after_expiry"][k] for k in ALIVE_KEYS) for r in reps
        )
        fig["alive_detail_last_rep"] = reps[-1]["alive_after_expiry"]
        out[mode] = fig
    if not out:
        return out, ["not measured"]
    heap, rss = out.get("heap", {}), out.get("rss", {})
    n = f"{(heap or rss)['n']:,}".replace(",", " ")
    md = [
        f"N = {n} tasks per phase, each created by `tools/call` and polled by `tasks/get`"
        " (2026-07-28 front-end, in-memory store, fake clock, TTL 60 s); bytes, medians over"
        f" {(heap or rss)['reps']} repetition(s). RSS is for information (rule 5).",
        "",
        "| figure | heap (tracemalloc) B | RSS B |",
        "|---|---|---|",
    ]
    for key, text in TASK_FIGURES:
        md.append(f"| {text} | {fmt(heap.get(key))} | {fmt(rss.get(key))} |")
    for mode, fig in out.items():
        detail = ", ".join(f"{k} {v}" for k, v in fig["alive_detail_last_rep"].items())
        md.append(f"\nAfter expiry ({mode} run, last repetition): {detail}.")
    return out, md


def targets(
    runs: Runs, memory: list[JSON], start: JSON, tasks: JSON
) -> tuple[list[JSON], list[str]]:
    """Rule 4: the issue-8 targets against this run's medians."""
    out: list[JSON] = []

    def add(
        text: str, value: float | None, op: str, limit: float, unit: str = "", proxy: Any = None
    ) -> None:
        if value is None:
            verdict = "not measured"
        else:
            verdict = "met" if (value >= limit if op == ">=" else value <= limit) else "not met"
        out.append(
            {
                "target": text,
                "value": value,
                "op": op,
                "limit": limit,
                "unit": unit,
                "verdict": verdict,
                "from_cpu": proxy,
            }
        )

    def http(label: str, ref: str, c: int, size: int, name: str) -> float | None:
        return runs.ratio("http", label, ref, c, size, name)

    def by_cpu(suite: str, label: str, ref: str, c: int, size: int) -> float | None:
        """The throughput ratio that server CPU per request predicts (ref CPU / ours)."""
        cpu = runs.ratio(suite, label, ref, c, size, "cpu")
        return 1.0 / cpu if cpu else None

    modes = (
        ("SSE", "mcpkit_sse", "raw_http", 0.5),
        ("JSON-response", "mcpkit_json", "raw_http", 0.6),
        ("2026-07-28", "mcpkit_default+modern", "raw_http+modern", 0.6),
    )
    add(
        "HTTP c=32 100 B, default mode: req/s vs `mcp` default (stateful SSE)",
        http("mcpkit_default", "mcp_sse", 32, 100, "rps"),
        ">=",
        3.0,
        "×",
        by_cpu("http", "mcpkit_default", "mcp_sse", 32, 100),
    )
    for mode, label, raw, limit in modes:
        add(
            f"HTTP c=32 100 B, {mode} mode: req/s vs raw",
            http(label, raw, 32, 100, "rps"),
            ">=",
            limit,
            "×",
            by_cpu("http", label, raw, 32, 100),
        )
    for mode, label, raw, _ in modes:
        add(
            f"HTTP c=1 100 B, {mode} mode: p50 latency vs raw",
            http(label, raw, 1, 100, "p50"),
            "<=",
            2.0,
            "×",
        )
    for c in (1, 32):
        for mode, label, raw, _ in modes:
            add(
                f"HTTP c={c} 100 KB, {mode} mode: req/s vs raw",
                http(label, raw, c, 102_400, "rps"),
                ">=",
                0.6,
                "×",
                by_cpu("http", label, raw, c, 102_400),
            )
    for era, suffix in (("handshake", ""), ("2026-07-28", "+modern")):
        add(
            f"stdio pipelined c=32 100 B, {era}: req/s vs `mcp`",
            runs.ratio("stdio", "mcpkit" + suffix, "mcp" + suffix, 32, 100, "rps"),
            ">=",
            5.0,
            "×",
            by_cpu("stdio", "mcpkit" + suffix, "mcp" + suffix, 32, 100),
        )
    modern = runs.value("stdio", "mcpkit+modern", 32, 100, "cpu")
    legacy = runs.value("stdio", "mcpkit", 32, 100, "cpu")
    add(
        "stdio c=32 100 B: CPU/request of the 2026-07-28 envelope vs handshake era"
        " (the issue: 'it needn't' cost more; bench threshold 1.05)",
        modern / legacy if modern and legacy else None,
        "<=",
        1.05,
        "×",
    )
    mem = next((m for m in memory if m["label"] == "mcpkit_default"), None)
    add(
        "memory per idle HTTP session, 1000 open (6 KB = 5.86 KiB)",
        mem["kib_per_session"] if mem else None,
        "<=",
        6000 / 1024,
        " KiB",
    )
    growth = mem["growth_last_cycle_kib_per_session"] if mem else None
    size = mem["kib_per_session"] if mem else None
    add(
        "memory given back: after-close RSS growth in the last of the open/close cycles,"
        " per session (≤ 10 % of an idle session, at least 0.1 KiB)",
        growth,
        "<=",
        max(0.1, 0.1 * (size or 0.0)),
        " KiB",
    )
    cold = start["coldstart"].get("mcpkit", {})
    add(
        "cold start: spawn → first stdio tools/call result",
        cold.get("spawn_to_first_result_ms"),
        "<=",
        150.0,
        " ms",
    )
    imp = start["imports"].get("import mcpkit.server", {})
    add('`python -c "import mcpkit.server"`', imp.get("median_ms"), "<=", 120.0, " ms")
    imp = start["imports"].get("from mcpkit.server import Server", {})
    add(
        '`python -c "from mcpkit.server import Server"` (the same limit: what a user writes)',
        imp.get("median_ms"),
        "<=",
        120.0,
        " ms",
    )
    http_mods = cold.get("http_modules") if cold.get("module_dump_seen") else None
    add(
        "HTTP modules imported by a stdio server (count)",
        None if http_mods is None else float(len(http_mods)),
        "<=",
        0.0,
        "",
    )
    heap: JSON = tasks.get("heap", {})
    n = f"{heap['n']:,}".replace(",", " ") if heap else "10 000"
    add(
        f"tasks extension, {n} tasks created and polled: heap per finished task held"
        " (≤ 2 KiB: its record and result, no runner left)",
        heap.get("finished_bytes_per_task"),
        "<=",
        2048.0,
        " B",
    )
    add(
        f"tasks extension, {n} tasks: heap per running task (≤ 16 KiB: four bare parked"
        " anyio tasks)",
        heap.get("running_bytes_per_task"),
        "<=",
        16384.0,
        " B",
    )
    add(
        "tasks extension, TTL expiry frees them: heap left after expiry, per task held at"
        " the peak (≤ 256 B: table capacity only)",
        heap.get("left_bytes_per_task"),
        "<=",
        256.0,
        " B",
    )
    add(
        "tasks extension, TTL expiry frees them: task objects still alive after expiry"
        " (records, jobs, tool coroutines, runner tasks: none)",
        heap.get("alive_after_expiry"),
        "<=",
        0.0,
        "",
    )
    add(
        f"tasks extension, bounded: heap growth after a second round of {n} tasks, per task"
        " (≤ 16 B: less than any Python object)",
        heap.get("growth_bytes_per_task"),
        "<=",
        16.0,
        " B",
    )
    md = [
        "| target | measured | limit | verdict | the same from server CPU/request |",
        "|---|---|---|---|---|",
    ]
    for t in out:
        value = "–" if t["value"] is None else f"{fmt(t['value'], 2)}{t['unit']}"
        limit = "" if t["limit"] is None else f"{t['op']} {fmt(t['limit'], 2)}{t['unit']}"
        proxy = "" if t.get("from_cpu") is None else f"{fmt(t['from_cpu'], 2)}×"
        md.append(f"| {t['target']} | {value} | {limit} | {t['verdict']} | {proxy} |")
    return out, md


def machine_lines(meta: JSON) -> list[str]:
    m = meta.get("machine", {})
    v = {k: x for k, x in m.get("versions", {}).items() if x}
    return [
        f"- preset `{meta.get('preset')}`: {meta.get('reps')} repetitions, {meta.get('duration')} s"
        f" recorded after {meta.get('warmup')} s warm-up per run; started {meta.get('started')}",
        f"- {m.get('nproc')} CPUs ({m.get('cpu_model')}), kernel {m.get('kernel')},"
        f" Python {m.get('python')}; server on CPU {meta.get('server_cpu')},"
        f" load generator on CPU {meta.get('client_cpu')}",
        "- versions: " + ", ".join(f"{k} {x}" for k, x in v.items()),
        f"- mcpkit at {m.get('git_rev')}{' (uncommitted changes)' if m.get('git_dirty') else ''};"
        f" mcpkit HTTP transport: {meta.get('mcpkit_http')}",
    ]


def auth_table(runs: Runs) -> tuple[list[JSON], list[str]]:
    """The ``auth`` suite: server CPU per call and req/s, each as the median of
    per-repetition ratios against ``auth_none`` (the same server unprotected). Target
    (issue 12): ``cpu ×none`` at most 1.15 with the validated-token cache."""
    return versus_table(runs, "auth", lambda _label: "auth_none")


def otel_table(runs: Runs) -> tuple[list[JSON], list[str]]:
    """The ``otel`` suite: the echo server with no adapter, the adapter with a no-op
    exporter and with the in-memory SDK exporter, per transport; ratios against the same
    transport's ``otel_none_*``. Targets (issue 15), HTTP c=1: the adapter with a no-op
    exporter at most 1.15× (and the bare seam ≤ 1.03× the issue-8 median)."""
    return versus_table(runs, "otel", lambda label: "otel_none_" + label.rsplit("_", 1)[-1])


def events_table(rows: list[JSON]) -> tuple[JSON, list[str]]:
    """The ``events`` suite (issue 18): per mode, the medians over repetitions of events
    per second and server CPU per event; ``push``/``webhook`` minus ``append`` is the
    delivery's own CPU per event."""
    by: dict[str, list[JSON]] = defaultdict(list)
    for r in rows:
        if r.get("suite") == "events" and "fatal" not in r:
            by[r["mode"]].append(r)
    out: JSON = {}
    md = [
        "| mode | events | events/s | server µs/event | delivery µs/event (− append) | reps |",
        "|---|---|---|---|---|---|",
    ]
    base = median(r.get("server_cpu_us_per_event") for r in by.get("append", []))
    for mode in ("append", "push", "webhook"):
        reps = by.get(mode)
        if not reps:
            continue
        cpu = median(r.get("server_cpu_us_per_event") for r in reps)
        fig: JSON = {
            "events": reps[-1]["events"],
            "events_per_s": median(r.get("events_per_s") for r in reps),
            "server_cpu_us_per_event": cpu,
            "delivery_cpu_us_per_event": (
                None if mode == "append" or cpu is None or base is None else cpu - base
            ),
            "reps": len(reps),
        }
        out[mode] = fig
        md.append(
            f"| {mode} | {fig['events']} | {fig['events_per_s']} | {cpu} "
            f"| {fig['delivery_cpu_us_per_event'] or '-'} | {fig['reps']} |"
        )
    return out, md


def versus_table(
    runs: Runs, suite: str, reference: Callable[[str], str]
) -> tuple[list[JSON], list[str]]:
    """Server CPU per call and req/s of ``suite``'s servers, each as the median of
    per-repetition ratios against ``reference(label)``."""
    rows: list[JSON] = []
    md: list[str] = []
    for c, size in runs.conditions(suite):
        md += [
            f"\n#### {suite}: concurrency {c}, payload {size} B\n",
            "| server | req/s | p50 ms | srv µs/req | ×none cpu | ×none req/s | spread % "
            "| errors | foreign CPU % |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for label in runs.order[suite]:
            reps = runs.by.get((suite, label, c, size))
            if not reps:
                continue
            ref = reference(label)
            row: JSON = {
                "label": label,
                "concurrency": c,
                "payload": size,
                "reps": len(reps),
                "rps": runs.value(suite, label, c, size, "rps"),
                "p50_ms": runs.value(suite, label, c, size, "p50"),
                "server_cpu_us_per_req": runs.value(suite, label, c, size, "cpu"),
                "cpu_x_none": runs.ratio(suite, label, ref, c, size, "cpu"),
                "rps_x_none": runs.ratio(suite, label, ref, c, size, "rps"),
                "spread_pct": runs.spread(suite, label, c, size),
                "errors": sum(r.get("errors") or 0 for r in reps.values()),
                "foreign_cpu_pct": runs.value(suite, label, c, size, "foreign_cpu_pct"),
            }
            rows.append(row)
            md.append(
                f"| {label} | {fmt(row['rps'])} | {fmt(row['p50_ms'], 2)}"
                f" | {fmt(row['server_cpu_us_per_req'])} | {fmt(row['cpu_x_none'], 3)}"
                f" | {fmt(row['rps_x_none'], 3)} | {fmt(row['spread_pct'])} | {row['errors']}"
                f" | {fmt(row['foreign_cpu_pct'])} |"
            )
    return rows, md


def write(out_dir: Path) -> str:
    rows = [json.loads(line) for line in (out_dir / "runs.jsonl").read_text().splitlines() if line]
    meta_path = out_dir / "meta.json"
    meta: JSON = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    runs = Runs(rows)
    http_rows, http_md = throughput(runs, "http")
    stdio_rows, stdio_md = throughput(runs, "stdio")
    mem_rows, mem_md = sessions(rows)
    start, start_md = startup(rows)
    task_figures, tasks_md = tasks_memory(rows)
    auth_rows, auth_md = auth_table(runs)
    otel_rows, otel_md = otel_table(runs)
    events_rows, events_md = events_table(rows)
    goal_rows, goal_md = targets(runs, mem_rows, start, task_figures)
    fatal = [
        f"{r.get('suite')} {r.get('label')} r{r.get('rep')}: {r['fatal']}"
        for r in rows
        if "fatal" in r
    ]
    summary = {
        "meta": meta,
        "targets": goal_rows,
        "http": http_rows,
        "stdio": stdio_rows,
        "sessions": mem_rows,
        "startup": start,
        "tasks": task_figures,
        "auth": auth_rows,
        "otel": otel_rows,
        "events": events_rows,
        "fatal": fatal,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    sections: list[tuple[str, list[str]]] = [
        ("Machine and run", machine_lines(meta)),
        ("Targets (issue 8)", goal_md),
        ("Streamable HTTP", http_md),
        ("stdio (pipelined)", stdio_md),
        ("Memory per session (stateful HTTP)", mem_md),
        ("Cold start and imports", start_md),
        ("Tasks extension memory", tasks_md),
        ("Auth extension: tools/call with a validated JWT (issue 12)", auth_md),
        ("OpenTelemetry: tools/call traced (issue 15)", otel_md),
        ("Events extension: push and webhook delivery (issue 18)", events_md),
    ]
    if fatal:
        sections.append(("Runs that failed", [f"- {f}" for f in fatal]))
    text = "\n".join(f"\n## {title}\n\n" + "\n".join(lines) for title, lines in sections)
    (out_dir / "summary.md").write_text("# mcpkit benchmark\n" + text + "\n")
    return text


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python bench/report.py RESULTS_DIR", file=sys.stderr)
        return 2
    print(write(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
