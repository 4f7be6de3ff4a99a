"""Apps tool visibility: the one decision behind both what a caller is listed and what it
may call (issue 25 §6).

Spec: ``apps-2026-01-26.mdx`` §Visibility ("Host MUST NOT include tools in the agent's
tool list when their visibility does not include "model""; "Host MUST reject
``tools/call`` requests from apps for tools that don't include "app""), SEP-1865.

Rules:
1. ``_meta.ui.visibility`` defaults to ``["model", "app"]`` when absent (also when the
   tool has no ``_meta.ui``). A value that is present but not a list of strings fails
   closed: the tool is visible to nobody. Unknown entries are ignored.
2. :func:`may_use` is the decision: ``may_use(tool, audiences)`` is true when the tool's
   visibility holds one of ``audiences`` (``"model"``: the agent; ``"app"``: a view of the
   same server). Every list and every call check of mcpkit-ext-ui goes through it:
   - the server's list filter (:func:`mcpkit.ext.ui.server.listing.app_list_filter`),
     which core applies to ``tools/list`` and ``tools/call`` alike;
   - the host's agent list and agent call (:class:`~mcpkit.ext.ui.host.ServerRegistry`,
     :meth:`~mcpkit.ext.ui.host.AppHost.call_tool`);
   - the view's list and call (:meth:`~mcpkit.ext.ui.host.AppHost.app_tools`, the view's
     ``tools/call``).
   :func:`listed` is ``may_use`` applied to a list, so a listed tool is callable and a
   refused one is never listed.
3. Tools may be wire dicts or typed objects with a ``meta`` attribute (mcpkit's
   :class:`~mcpkit.core.types.Tool`); both are read the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeVar

from mcpkit.core.shapes import as_list, as_object

__all__ = ["AGENT", "APP", "Audience", "listed", "may_use", "tool_meta", "tool_visibility"]

Audience = Literal["model", "app"]
"""Who asks: ``"model"`` (the agent) or ``"app"`` (a view)."""
AGENT: Final = "model"
APP: Final = "app"
_DEFAULT: Final = frozenset({AGENT, APP})
T = TypeVar("T")


def tool_meta(tool: Any) -> Mapping[str, Any]:
    """The tool's ``_meta`` object (empty when missing or malformed; rule 3)."""
    wire_tool = as_object(tool)
    meta = wire_tool.get("_meta") if wire_tool is not None else getattr(tool, "meta", None)
    return as_object(meta) or {}


def tool_visibility(tool: Any) -> frozenset[str]:
    """``_meta.ui.visibility`` as a set of ``"model"``/``"app"`` (rule 1)."""
    ui = as_object(tool_meta(tool).get("ui")) or {}
    if "visibility" not in ui:
        return _DEFAULT
    value = as_list(ui["visibility"])
    if value is None or not all(isinstance(v, str) for v in value):
        return frozenset()
    return frozenset(str(v) for v in value) & _DEFAULT


def may_use(tool: Any, audiences: Audience | Iterable[Audience]) -> bool:
    """Rule 2: whether ``tool`` is listed to, and callable by, a caller that is any of
    ``audiences`` (one audience, or several: a client that is both agent and app host)."""
    wanted = {audiences} if isinstance(audiences, str) else set(audiences)
    return not tool_visibility(tool).isdisjoint(wanted)


def listed(tools: Iterable[T], audiences: Audience | Iterable[Audience]) -> list[T]:
    """``tools`` that :func:`may_use` admits for ``audiences``, order kept (rule 2)."""
    wanted: tuple[Audience, ...] = (audiences,) if isinstance(audiences, str) else tuple(audiences)
    return [t for t in tools if may_use(t, wanted)]
