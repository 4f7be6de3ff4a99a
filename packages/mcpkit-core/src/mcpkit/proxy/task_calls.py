"""Task-augmented tool calls through the proxy: what it lists matches what it offers.

Tasks have one surface per era: 2025-11-25 has the ``tasks`` capability
(``tasks.requests.tools.call``), ``params.task`` on ``tools/call`` and each tool's
``execution.taskSupport`` (2025-11-25 ``basic/utilities/tasks`` §Capabilities,
§Tool-Level Negotiation); 2026-07-28 has the ``io.modelcontextprotocol/tasks`` extension,
where the server alone decides and answers ``resultType: "task"`` (SEP-2663). The proxy
forwards either surface verbatim to clients of the upstream's own era. Neither crosses
the era bridge: the proxy would have to translate the extension's semantics, which are
not core's (a 2026-07-28 ``"task"`` result reaching a handshake-era client is -32603,
:mod:`.forward` rule 5).

Rules:
1. The proxy offers task-augmented ``tools/call`` to a handshake-era client only when
   it advertises ``tasks.requests.tools.call`` to it: the upstream speaks the handshake
   era too and advertised it (core rule 2 mirrors it in the same era only).
2. Lists: to a handshake-era client the proxy does not offer task calls to, tools are
   listed without ``execution.taskSupport`` (``execution`` goes when nothing else is
   left in it). Such a client would otherwise see ``taskSupport: "optional"`` on a
   proxy without the capability; the spec forbids it to use it then ("clients MUST
   NOT attempt to use task augmentation ... regardless of execution.taskSupport").
   The cached upstream page is never changed, only the copy sent.
3. Calls: a handshake-era ``tools/call`` with ``params.task`` to a proxy that does not
   offer task calls is served normally, ``task`` left out upstream (2025-11-25 tasks,
   "Receivers that do not declare the task capability for a request type MUST process
   requests of that type normally, ignoring any task-augmentation metadata"). A tool
   that needs a task upstream answers with its own error (e.g. -32021 naming the tasks
   extension, SEP-2663).
4. 2026-07-28 clients are untouched: their era has no ``taskSupport`` field in core, and
   the extension's answer is the upstream's to give.
5. Across the bridge to a handshake-era client (a 2026-07-28 upstream), the extensions
   whose answers have no handshake-era form (:data:`MODERN_ONLY_EXTENSIONS`: the tasks
   extension's ``resultType: "task"``) are neither advertised to the client (in
   its ``capabilities.extensions``, so nor in their ``_meta`` version entries) nor declared
   upstream on its behalf: the upstream then answers the client's calls without a task
   (SEP-2663: never a ``CreateTaskResult`` to a request that did not declare it), and
   a task-only tool says it needs the extension (-32021), instead of a task result
   the proxy could only refuse (-32603).
"""

from __future__ import annotations

from collections.abc import Set
from typing import TYPE_CHECKING, Any, Protocol, cast

from mcpkit.core.shapes import JSON, as_object

if TYPE_CHECKING:
    from mcpkit.core.versions import Era
    from mcpkit.server.context import Context

__all__ = [
    "MODERN_ONLY_EXTENSIONS",
    "Mirrors",
    "bridged_extensions",
    "offers_task_calls",
    "task_param_dropped",
    "without_task_support",
]

MODERN_ONLY_EXTENSIONS = frozenset({"io.modelcontextprotocol/tasks"})
"""Rule 5: extensions whose results exist on 2026-07-28 only (SEP-2663 ``"task"``)."""


class Mirrors(Protocol):
    """What the checks read of the proxy: the upstream capabilities it mirrors."""

    @property
    def mirrored(self) -> Set[str]:
        """The upstream capability names the proxy mirrors."""
        ...

    def capability(self, name: str, era: Era) -> Any:
        """The mirrored capability ``name`` as offered to a client of ``era``."""
        ...


def bridged_extensions(entry: Any, downstream: str | None, upstream: str | None) -> Any:
    """Rule 5: ``entry`` (an ``extensions`` map, advertised or declared) without the
    :data:`MODERN_ONLY_EXTENSIONS` when a handshake-era ``downstream`` meets a 2026-07-28
    ``upstream``; any other value as is."""
    found = as_object(entry)
    if found is None or downstream != "legacy" or upstream != "modern":
        return entry
    return {k: v for k, v in found.items() if k not in MODERN_ONLY_EXTENSIONS}


def offers_task_calls(proxy: Mirrors, ctx: Context) -> bool:
    """Rule 1: whether the proxy advertises ``tasks.requests.tools.call`` to ``ctx``'s
    client (True for a 2026-07-28 client: rule 4)."""
    if ctx.era != "legacy":
        return True
    if "tasks" not in proxy.mirrored:
        return False
    tasks = as_object(proxy.capability("tasks", ctx.era))
    requests = as_object(tasks.get("requests")) if tasks is not None else None
    tools = as_object(requests.get("tools")) if requests is not None else None
    return tools is not None and "call" in tools


def without_task_support(proxy: Mirrors, ctx: Context, page: JSON) -> JSON:
    """Rule 2: ``page`` (a ``tools/list`` result for ``ctx``) as the client may see it."""
    tools: Any = page.get("tools")
    if not isinstance(tools, list) or offers_task_calls(proxy, ctx):
        return page
    shown: list[Any] = []
    for tool in cast("list[Any]", tools):
        found = as_object(tool)
        execution = as_object(found.get("execution")) if found is not None else None
        if found is None or execution is None or "taskSupport" not in execution:
            shown.append(tool)
            continue
        rest = {k: v for k, v in execution.items() if k != "taskSupport"}
        copy: JSON = {k: v for k, v in found.items() if k != "execution"}
        if rest:
            copy["execution"] = rest
        shown.append(copy)
    return {**page, "tools": shown}


def task_param_dropped(proxy: Mirrors, ctx: Context) -> None:
    """Rule 3: leave ``params.task`` out of ``ctx``'s ``tools/call`` when the proxy does
    not offer task calls to its client."""
    if ctx.method == "tools/call" and "task" in ctx.params and not offers_task_calls(proxy, ctx):
        ctx.params = {k: v for k, v in ctx.params.items() if k != "task"}
