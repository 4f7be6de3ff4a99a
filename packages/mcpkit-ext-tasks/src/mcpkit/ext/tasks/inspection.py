"""What ``mcpkit inspect`` shows of the tasks extension: which tools run as tasks.

Registered by :meth:`~.runtime.Tasks.install` through core's
:func:`~mcpkit.server.inspection.add_inspect_source` (core never imports this
extension).

Rules:
1. One section, key :data:`~.model.EXTENSION_ID`, titled ``Task support``: a row per
   tool whose ``execution.taskSupport`` is ``required`` or ``optional``
   (:meth:`~.runtime.Tasks.support`), with its per-tool settings (``preamble``,
   ``ttl_ms``, ``poll_interval_ms``) when given; a first row
   names the eras served and the default task lifetime. A server with no such tool says
   so in one row.
2. Its ``--json`` data is ``{"eras": [...], "ttlMs": ..., "tools": {name:
   {"taskSupport", "preamble", "ttlMs", "pollIntervalMs"}}}`` (settings not given are
   null).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.ext.tasks.model import EXTENSION_ID
from mcpkit.ext.tasks.shared import TaskRuntime, ToolTaskOptions
from mcpkit.server.inspection import InspectSection

if TYPE_CHECKING:
    from mcpkit.server import Server

__all__ = ["task_support_section"]


def task_support_section(tasks: TaskRuntime, server: Server) -> InspectSection:
    """Rules 1 and 2 for ``server``, on which ``tasks`` is installed."""
    eras = [e for e, on in (("2026-07-28", tasks.modern), ("2025-11-25", tasks.legacy)) if on]
    ttl = "unlimited" if tasks.ttl_ms is None else f"{tasks.ttl_ms} ms"
    rows = [("(extension)", f"eras {', '.join(eras) or 'none'}; tasks kept {ttl}")]
    tools: dict[str, Any] = {}
    for name, tool in server.tools.items():
        support = tasks.support(tool)
        if support == "forbidden":
            continue
        options = tasks.options.get(name, ToolTaskOptions())
        settings = [
            text
            for text, given in (
                ("preamble", options.preamble),
                (f"ttl_ms={options.ttl_ms}", options.ttl_ms is not None),
                (f"poll_interval_ms={options.poll_interval_ms}", options.poll_interval_ms),
            )
            if given
        ]
        rows.append((name, ", ".join([support, *settings])))
        tools[name] = {
            "taskSupport": support,
            "preamble": options.preamble,
            "ttlMs": options.ttl_ms,
            "pollIntervalMs": options.poll_interval_ms,
        }
    if not tools:
        rows.append(("(no tool)", "no tool has execution.taskSupport optional or required"))
    data = {"eras": eras, "ttlMs": tasks.ttl_ms, "tools": tools}
    return InspectSection(EXTENSION_ID, "Task support", rows=rows, data=data)
