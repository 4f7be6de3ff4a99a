"""What extensions add to ``mcpkit inspect``: sections of their own, and warnings.

``mcpkit inspect`` (:mod:`mcpkit.cli.offline`) shows what core registers: tools,
prompts, resources, templates, extensions. What an extension adds to a server (scope
rules, task support, app views) only the extension can describe; core never imports an
extension, so each one registers a source here when it is installed::

    from mcpkit.server.inspection import InspectSection, add_inspect_source


    def scope_rules(server: Server) -> InspectSection:
        return InspectSection("io.example/quota", "Quotas", rows=[("tool search", "10/min")])


    add_inspect_source(server, scope_rules)

Rules:
1. :func:`add_inspect_source` registers ``source(server)`` for ``server``; it returns an
   :class:`InspectSection`, several, or None (nothing to show). Sources are kept per
   server, weakly (the server's lifetime; :mod:`mcpkit.server.protections` keeps its
   compositions alike), each once, and are called only by :func:`inspect_sections`,
   never while serving.
2. A section has a ``key`` (the extension's id or another stable name: the key of its
   ``data`` under ``sections`` in ``mcpkit inspect --json``), a ``title`` (the text
   heading), ``rows`` of ``(left, right)`` text pairs, ``count`` (the number the
   heading shows, default the number of rows: a row that is not an entry, such as
   who protects the server, is not counted), ``warnings`` (one line each, e.g.
   an app tool whose view no resource serves) and ``data`` (any JSON value; default: the
   rows as ``[left, right]`` lists).
3. A source that raises is shown as a section of its own with one warning naming the
   source and the error; the other sections are still shown (inspect describes a
   server, it does not fail because one extension's description does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpkit.server.attached import attached, peek

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["InspectSection", "InspectSource", "add_inspect_source", "inspect_sections"]


@dataclass(frozen=True, slots=True)
class InspectSection:
    """Rule 2: one section of ``mcpkit inspect``'s output."""

    key: str
    title: str
    rows: Sequence[tuple[str, str]] = ()
    warnings: Sequence[str] = ()
    data: Any = None
    count: int | None = None

    def as_json(self) -> Any:
        """``data``, or the rows as ``[left, right]`` lists when it is None."""
        return self.data if self.data is not None else [list(row) for row in self.rows]


InspectSource = Callable[["Server"], "InspectSection | Iterable[InspectSection] | None"]


def add_inspect_source(server: Server, source: InspectSource) -> None:
    """Rule 1: describe ``server`` with ``source(server)`` in ``mcpkit inspect``."""
    sources: list[InspectSource] = attached(
        server, __name__, list[InspectSource]
    )  # attached rule 3
    if not any(s is source or s == source for s in sources):
        sources.append(source)


def _name(source: InspectSource) -> str:
    owner = getattr(source, "__self__", None)
    qualname = getattr(source, "__qualname__", None) or type(source).__qualname__
    module = getattr(source, "__module__", None) or type(owner).__module__
    return f"{module}.{qualname}"


def inspect_sections(server: Server) -> list[InspectSection]:
    """Rules 1 and 3: every registered source's sections, in registration order."""
    out: list[InspectSection] = []
    known: list[InspectSource] = peek(server, __name__) or []
    for source in list(known):
        try:
            found = source(server)
        except Exception as exc:  # rule 3
            name = _name(source)
            warning = f"{name} failed to describe the server: {type(exc).__name__}: {exc}"
            out.append(InspectSection(name, name, warnings=(warning,)))
            continue
        if found is None:
            continue
        out += [found] if isinstance(found, InspectSection) else list(found)
    return out
