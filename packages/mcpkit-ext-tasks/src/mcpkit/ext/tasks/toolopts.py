"""The tasks extension's options on core's ``@server.tool`` (and :meth:`Tasks.tool
<mcpkit.ext.tasks.runtime.Tasks.tool>`), through core's extension options
(:mod:`mcpkit.server.options`).

Rules:
1. ``task_support`` is one of ``"forbidden"``, ``"optional"``, ``"required"``
   (spec 2025-11-25 ``ToolExecution.taskSupport``; SEP-2663); it becomes the tool's
   ``execution.taskSupport``, over any ``execution=`` given. Anything else fails at
   registration with a ``ValueError`` naming the tool, the option, the allowed values
   and the closest one (before, ``"optinal"`` was listed and broke every client's
   ``tools/list``).
2. ``preamble`` is a bool; ``ttl_ms`` and ``poll_interval_ms`` are None or a positive
   number of milliseconds (an int). They are kept per tool name
   (``Tasks.options``) and override the extension's defaults.
3. The options are added once per server; with two ``Tasks`` installed on one server
   (one per era) each keeps the per-tool settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.ext.tasks.shared import TaskRuntime, ToolTaskOptions
from mcpkit.server.options import ExtensionOptions, choice

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["TASK_SUPPORT", "add_tool_options", "tool_options"]

TASK_SUPPORT = ("forbidden", "optional", "required")


def _support(value: Any) -> str:
    return choice(value, TASK_SUPPORT)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("must be True or False")
    return value


def _ms(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be None or a positive int (milliseconds)")
    return value


def add_tool_options(server: Server, runtime: TaskRuntime) -> None:
    """Rules 1-3: add the options to ``server.tool`` (once) for ``runtime``."""
    for added in server.options.sets:
        if isinstance(added.apply, _Apply):
            added.apply.runtimes.append(runtime)
            return
    server.add_options(tool_options([runtime]))


def tool_options(runtimes: list[TaskRuntime]) -> ExtensionOptions:
    """Rules 1-2: the options that keep per-tool settings in each of ``runtimes``."""
    checks = {"task_support": _support, "preamble": _flag, "ttl_ms": _ms, "poll_interval_ms": _ms}
    return ExtensionOptions(
        "mcpkit-ext-tasks (Tasks.install)", checks, _Apply(runtimes), shape=_shape
    )


def _shape(kind: str, key: str, item: Any, values: dict[str, Any]) -> None:
    """Rule 1: ``task_support`` as the tool's ``execution.taskSupport``."""
    if "task_support" in values:
        definition: dict[str, Any] = item.definition
        execution: dict[str, Any] = dict(definition.get("execution") or {})
        execution["taskSupport"] = values["task_support"]
        definition["execution"] = execution


class _Apply:
    """Rules 2-3: the per-tool settings a tool's task options keep (the server holds
    it, no global); applied once the registration passed every check."""

    def __init__(self, runtimes: list[TaskRuntime]) -> None:
        self.runtimes = runtimes

    def __call__(self, kind: str, key: str, item: Any, values: dict[str, Any]) -> None:
        settings = ToolTaskOptions(
            values.get("preamble", False), values.get("ttl_ms"), values.get("poll_interval_ms")
        )
        for runtime in self.runtimes:
            runtime.options[key] = settings
