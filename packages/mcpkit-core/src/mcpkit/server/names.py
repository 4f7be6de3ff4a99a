"""Rules keyed by a name or URI, checked against what a server registers (issue 26).

A scope rule for ``sav_note`` (a typo for ``save_note``) protects nothing and leaves
``save_note`` open; a completion handler for a prompt that is not registered never runs.
Core and every extension declare such rules here, and the server checks them when it
starts serving and when its HTTP app is built.

Rules:
1. A :class:`NamedRule` says what it names (``kind``: ``"tool"``, ``"prompt"``,
   ``"resource"``, ``"resource template"``, ``"method"``, or an extension's own kind
   such as ``"event type"``; ``name``: the name or URI), whether it ``protects``
   something (a scope rule) or not (a completion handler, a view, a cache hint), whether
   it is ``late_bound`` (the user's explicit statement that the item is added at run
   time), where it came from (``source``, as the user wrote it, and ``where``, the
   ``file:line`` of the declaration: :func:`declared_at`), and the ``fix`` to name.
2. :func:`declare_rules` registers a provider, called at check time, so a rule always
   reflects the declaring registry as it is then (an extension's rule store stays the
   one source of truth). :func:`declare_names` registers an extension's own kind and
   the names it holds; :func:`declare_dynamic` marks kinds whose names only run time
   knows (a proxy's tools come from its upstream).
3. What is registered: tools and prompts of the server and, prefixed, of the servers
   mounted into it (at any depth); static resource URIs of all of them, and a URI a
   registered template matches; resource templates by their template string; methods
   served on either era; an extension's names. A kind marked dynamic on the server
   (or on a mount, for names under its prefix) cannot be checked: its rules are
   treated as naming nothing.
4. :func:`check_names` runs when serving starts, once the server's lifespans are
   entered (:meth:`Server.lifespan <mcpkit.server.Server.lifespan>`: stdio, the HTTP
   endpoint's lifespan, each in-memory connection), so a tool a lifespan registers
   counts; and earlier, before anything is bound, when the HTTP app is built
   (:func:`mcpkit.server.http.http_app`) and in ``mcpkit run``
   (``before_lifespans=True``), unless the server has a lifespan the user wrote (one
   defined outside ``mcpkit``: it may register tools), for which the check waits. A
   protecting rule that names nothing
   registered raises :class:`NameRuleError` (a ``ValueError``) whose message is one
   line: the rule, where it was declared, the closest registered name (``difflib``)
   and the fix. Exempt: a late-bound rule, and a URI-template rule (it may cover
   resources added later; it is warned about when it covers no registered resource).
5. Any other rule naming nothing registered logs one WARNING with the same line, on the
   rule's logger (default ``mcpkit.server``), once per server and rule however often
   the server starts. Late-bound rules are not warned about.
6. :func:`late_bound_rules` lists the late-bound rules (``mcpkit inspect`` shows them).
7. Mount namespaces: a tool or prompt registered after ``mount`` that hides another
   (:func:`mcpkit.server.mount.shadowed`) is warned about the same way, once.
8. A server mounted into another is checked when the outer one starts (it is not
   started itself): its own rules against its own registrations, with the same
   refusals and warnings.
9. Once a server serves (its lifespans entered), a rule declared later is checked when
   it is declared: :func:`check_declared` (called by the declaring code: ``mount()``
   for the mounted server's rules, an extension's rule store after it adds a rule)
   raises and warns as rule 4 and 5 would at start-up.
10. Task support offered: a tool declaring ``execution.taskSupport`` ``"required"``
    while the server advertises no tasks (neither ``capabilities.tasks`` on the
    handshake era nor the ``io.modelcontextprotocol/tasks`` extension) refuses
    start-up with :class:`TaskSupportError`; ``"optional"`` warns once (the call runs
    synchronously, so listing it is a promise the server does not keep).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcpkit.server.attached import attached, peek
from mcpkit.server.errors import ConfigurationError
from mcpkit.server.mounted import mounted, shadowed

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase

__all__ = [
    "NameRuleError",
    "NamedRule",
    "TaskSupportError",
    "check_declared",
    "check_names",
    "core_rules",
    "declare_dynamic",
    "declare_names",
    "declare_rules",
    "declared_at",
    "late_bound_rules",
    "named_rules",
    "problems",
    "refuses",
]

RuleSource = Callable[[], Iterable["NamedRule"]]
"""Rule 2: returns the rules as they are at check time."""
_SHOWN_CANDIDATES = 5


class NameRuleError(ConfigurationError, ValueError):
    """A protecting rule names nothing registered (rule 4); the message is one line."""


class TaskSupportError(ConfigurationError, ValueError):
    """A tool requires tasks the server does not offer (rule 10); one line."""


@dataclass(frozen=True, slots=True)
class NamedRule:
    """One rule keyed by a name or URI (rule 1).

    - ``kind``: what ``name`` names (``"tool"``, ``"prompt"``, ``"resource"`` (a URI or a
      URI template), ``"resource template"``, ``"method"``, or an extension's kind);
    - ``source``: the declaration as the user wrote it (``auth.require(tool='x', ...)``);
    - ``protects``: a rule that refuses callers (rule 4) or not (rule 5);
    - ``late_bound``: the item is added at run time; never refused nor warned about;
    - ``fix``: what to do beyond correcting the name (default: rule 4's advice);
    - ``where``: ``file:line`` of the declaration, or None;
    - ``logger``: the logger that warns (rule 5).
    """

    kind: str
    name: str
    source: str
    protects: bool = False
    late_bound: bool = False
    fix: str = ""
    where: str | None = None
    logger: str = "mcpkit.server"

    def describe(self) -> str:
        """``source (file:line)``."""
        return f"{self.source} ({self.where})" if self.where else self.source


@dataclass(slots=True)
class _Registry:
    sources: list[RuleSource] = field(default_factory=list[RuleSource])
    # kind-ok: unbounded-table kinds the server's code declares
    names: dict[str, Callable[[], Iterable[str]]] = field(
        default_factory=dict[str, Callable[[], Iterable[str]]]
    )
    # kind-ok: unbounded-table kinds the server's code declares dynamic
    dynamic: set[str] = field(default_factory=set[str])
    # kind-ok: unbounded-table one entry per rule the server's code declares
    warned: set[str] = field(default_factory=set[str])
    serving: int = 0  # rule 9: how many times its lifespans are entered now


def _registry(server: ServerBase) -> _Registry:
    return attached(server, __name__, _Registry)  # owned by the server (attached rule 3)


def declare_rules(server: ServerBase, source: RuleSource) -> None:
    """Rule 2: ``source()`` yields rules of ``server`` each time they are checked."""
    _registry(server).sources.append(source)


def declare_names(server: ServerBase, kind: str, names: Callable[[], Iterable[str]]) -> None:
    """Rule 2: an extension's own ``kind`` (``"event type"``) holds ``names()``."""
    _registry(server).names[kind] = names


def declare_dynamic(server: ServerBase, *kinds: str) -> None:
    """Rule 3: names of ``kinds`` on ``server`` are known only at run time (a proxy)."""
    _registry(server).dynamic.update(kinds)


def declared_at() -> str | None:
    """``file:line`` of the innermost caller outside the ``mcpkit`` package (rule 1)."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            module = str(frame.f_globals.get("__name__", ""))
            if module != "mcpkit" and not module.startswith("mcpkit."):
                return f"{frame.f_code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back
        return None
    finally:
        del frame


def named_rules(server: ServerBase) -> list[NamedRule]:
    """Every rule declared on ``server`` (rule 2), in declaration order."""
    found: _Registry | None = peek(server, __name__)
    declared = [rule for source in found.sources for rule in source()] if found else []
    return [*core_rules(server), *declared]


def late_bound_rules(server: ServerBase) -> list[NamedRule]:
    """Rule 6: the rules marked late-bound."""
    return [rule for rule in named_rules(server) if rule.late_bound]


def problems(server: ServerBase) -> list[tuple[NamedRule, str]]:
    """Each rule of ``server`` naming nothing registered, with its one-line message
    (rules 3-5); late-bound rules are left out. A server mounted into it (at any depth)
    is checked too, its rules against what it registers itself (rule 8)."""
    out = _own_problems(server)
    for child, _prefix in _servers(server)[1:]:
        out += _own_problems(child)
    return out


def _own_problems(server: ServerBase) -> list[tuple[NamedRule, str]]:
    out: list[tuple[NamedRule, str]] = []
    known: dict[str, tuple[set[str], str | None]] = {}  # each kind computed once per check
    for rule in named_rules(server):
        if rule.late_bound:
            continue
        if rule.kind not in known:
            known[rule.kind] = _registered(server, rule.kind)
        message = _check(server, rule, known[rule.kind])
        if message is not None:
            out.append((rule, message))
    return out


def check_names(server: ServerBase, *, before_lifespans: bool = False) -> None:
    """Rules 4, 5, 10: raise :class:`NameRuleError` for the first protecting rule naming
    nothing (unless it is a URI template), :class:`TaskSupportError` for a tool requiring
    tasks not offered; warn once about the others. ``before_lifespans``: the server is
    not serving yet; a server with lifespans is checked once they are entered (rule 4)."""
    if before_lifespans and _user_lifespans(server):
        return  # they may register what the rules name: checked once entered (rule 4)
    registry = _registry(server)
    warnings: list[tuple[str, str]] = []
    for rule, message in problems(server):
        if refuses(rule):
            raise NameRuleError(message)
        warnings.append((rule.logger, message))
    for required, message in _unoffered_tasks(server):  # rule 10
        if required:
            raise TaskSupportError(message)
        warnings.append(("mcpkit.server", message))
    warnings += [("mcpkit.server", message) for message in shadowed(server)]  # rule 7
    for logger, message in warnings:
        if message not in registry.warned:
            registry.warned.add(message)
            logging.getLogger(logger).warning("%s", message)


def refuses(rule: NamedRule) -> bool:
    """Rule 4: whether start-up refuses ``rule`` when it names nothing registered (it
    protects and is not a URI template); otherwise it warns (rule 5)."""
    return rule.protects and not _is_template(rule)


def _user_lifespans(server: ServerBase) -> bool:
    """Rule 4: whether ``server`` or a server mounted into it has a lifespan the user
    wrote (defined outside the ``mcpkit`` package: it may register tools); the
    background lifespans of core and extensions register nothing a rule names."""
    for each, _ in _servers(server):
        for factory in getattr(each, "_lifespans", ()):
            module = str(getattr(factory, "__module__", None) or "")
            if module != "mcpkit" and not module.startswith("mcpkit."):
                return True
    return False


def serving(server: ServerBase, delta: int) -> None:
    """Rule 9: ``server``'s lifespans were entered (``+1``) or left (``-1``)."""
    _registry(server).serving += delta


def check_declared(server: ServerBase, declared: ServerBase | None = None) -> None:
    """Rule 9: after a rule is declared on ``server``, check it now if ``server``
    serves (raises :class:`NameRuleError` for a protecting rule naming nothing);
    before serving, nothing (start-up checks it). ``declared``: the server whose rules
    to check (``mount()`` checks the server it is about to mount), default ``server``."""
    found: _Registry | None = peek(server, __name__)
    if found is not None and found.serving > 0:
        check_names(declared or server)


_TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # SEP-2663, the 2026-07-28 extension


def _unoffered_tasks(server: ServerBase) -> list[tuple[bool, str]]:
    """Rule 10: ``(required, message)`` per tool that lists ``taskSupport`` other than
    ``"forbidden"`` while its server offers no tasks (mounted servers too, each for
    itself)."""
    return [found for each, _ in _servers(server) for found in _own_unoffered_tasks(each)]


def _own_unoffered_tasks(server: ServerBase) -> list[tuple[bool, str]]:
    """Rule 10 for ``server``'s own tools against its own capabilities (a mounted
    server's tools run its own handlers, tasks included: rule 8)."""
    declared = [
        (name, tool.definition.get("execution", {}).get("taskSupport"))
        for name, tool in server.tools.items()
    ]
    declared = [(name, value) for name, value in declared if value in ("optional", "required")]
    if not declared:
        return []
    legacy = server.capabilities("legacy")
    modern: dict[str, object] = server.capabilities("modern").get("extensions") or {}
    if "tasks" in legacy or _TASKS_EXTENSION in modern:
        return []
    return [
        (
            value == "required",
            f"tool {name!r} declares execution.taskSupport={value!r}, but this server offers"
            " no tasks (no capabilities.tasks, no io.modelcontextprotocol/tasks extension),"
            " so calls run synchronously; install the tasks extension"
            " (mcpkit.ext.tasks.install) or leave taskSupport out",
        )
        for name, value in declared
    ]


# -- what is registered (rule 3) ------------------------------------------------------
def _is_template(rule: NamedRule) -> bool:
    return rule.kind == "resource" and "{" in rule.name


def _check(server: ServerBase, rule: NamedRule, known: tuple[set[str], str | None]) -> str | None:
    """The message for ``rule`` when it names nothing registered (``known``: what
    :func:`_registered` says of its kind), else None."""
    names, dynamic = known
    if _is_template(rule):
        if _template_covers(server, rule.name):
            return None
        names = _all_resources(server)
        dynamic = None
    elif rule.name in names or (rule.kind == "resource" and _templated(server, rule.name)):
        return None
    if dynamic is not None and rule.name.startswith(dynamic):
        unknown = (
            f"this server's {rule.kind}s come from run time (a proxy), so it cannot be checked"
        )
        return _message(rule, unknown, names)
    return _message(rule, f"no {rule.kind} of that name is registered", names)


def _message(rule: NamedRule, reason: str, names: Iterable[str]) -> str:
    import difflib  # deferred: defining a server stays cheap to import

    candidates = sorted(names)
    close = difflib.get_close_matches(rule.name, candidates, n=1, cutoff=0.6)
    if close:
        hint = f"closest registered {rule.kind}: {close[0]!r}"
    elif candidates:
        shown = ", ".join(repr(c) for c in candidates[:_SHOWN_CANDIDATES])
        more = ", ..." if len(candidates) > _SHOWN_CANDIDATES else ""
        hint = f"registered {rule.kind}s: {shown}{more}"
    else:
        hint = f"no {rule.kind} is registered"
    verb = "protects" if rule.protects else "names"
    fix = rule.fix or (
        f"fix the name, or mark the rule late_bound=True if the {rule.kind} is added at run time"
    )
    return f"{rule.describe()} {verb} {rule.kind} {rule.name!r}, but {reason} ({hint}); {fix}"


def _registered(server: ServerBase, kind: str) -> tuple[set[str], str | None]:
    """Rule 3: the names of ``kind`` and the prefix under which names are unknown
    (``""``: all of them; None: none)."""
    registry = peek(server, __name__)
    if registry is not None and kind in registry.names:
        return set(registry.names[kind]()), ("" if kind in registry.dynamic else None)
    if kind == "method":
        dynamic = "" if registry is not None and "method" in registry.dynamic else None
        return {m for era in server.methods.values() for m in era}, dynamic
    if kind == "resource":
        return _all_resources(server), _dynamic_prefix(server, "resource")
    if kind == "resource template":
        return {t.matcher.template for s in _servers(server) for t in s[0].templates}, None
    if kind in ("tool", "prompt"):
        names: set[str] = set()
        for each, prefix in _servers(server):
            names.update(prefix + n for n in (each.tools if kind == "tool" else each.prompts))
        return names, _dynamic_prefix(server, kind)
    return set(), None


def _servers(server: ServerBase, prefix: str = "") -> list[tuple[ServerBase, str]]:
    """``server`` and every server mounted into it, with the prefix of its names."""
    out = [(server, prefix)]
    for child, child_prefix in mounted(server):
        out.extend(_servers(child, prefix + child_prefix))
    return out


def _dynamic_prefix(server: ServerBase, kind: str) -> str | None:
    """The shortest prefix under which ``kind`` names are known only at run time."""
    found: list[str] = []
    for each, prefix in _servers(server):
        registry = peek(each, __name__)
        if registry is not None and kind in registry.dynamic:
            found.append("" if kind == "resource" else prefix)
    return min(found, key=len) if found else None


def _all_resources(server: ServerBase) -> set[str]:
    return {uri for each, _ in _servers(server) for uri in each.resources}


def _templated(server: ServerBase, uri: str) -> bool:
    """Whether a registered template (of any mounted server) matches ``uri``."""
    return any(t.matcher.match(uri) is not None for s, _ in _servers(server) for t in s.templates)


def _template_covers(server: ServerBase, template: str) -> bool:
    """Rule 4: a URI-template rule covers a registered resource: the same template, a
    static URI it matches, or a URI of a registered template it matches."""
    from mcpkit.server.uritemplates import TemplateMatcher

    try:
        matcher = TemplateMatcher(template)
    except ValueError:
        return False
    for each, _ in _servers(server):
        if any(matcher.match(uri) is not None for uri in each.resources):
            return True
        for t in each.templates:
            probe = t.matcher.expand(dict.fromkeys(t.matcher.variable_names, "p"))
            if t.matcher.template == template or matcher.match(probe) is not None:
                return True
    registry = peek(server, __name__)
    return registry is not None and "resource" in registry.dynamic


def core_rules(server: ServerBase) -> Iterator[NamedRule]:
    """Core's own rules (always part of :func:`named_rules`): completion handlers
    (``@server.completion(prompt=...)``, ``resource=...``) and ``cache_hints`` keys;
    none protects."""
    for (ref, name), _completer in server.completers.items():
        if ref == "ref/prompt":
            yield NamedRule("prompt", name, f"@server.completion(prompt={name!r})")
        elif name not in _all_resources(server):
            yield NamedRule("resource template", name, f"@server.completion(resource={name!r})")
    from mcpkit.server.handlers import DEFAULT_CACHE_HINTS

    for method in server.cache_hints:
        if method not in DEFAULT_CACHE_HINTS:
            yield NamedRule("method", method, f"Server(cache_hints={{{method!r}: ...}})")
