"""Registration forms: the decorators of :class:`~mcpkit.server.app.Server` check how
they are used (``app`` rule 10).

Rules:
1. ``@server.tool`` and ``@server.prompt`` work bare (the function is registered and
   returned) and called (``()``, ``("name")``, ``(name=..., title=...)``).
2. Anything else raises ``TypeError`` whose message shows the right form: a second
   positional argument, the name given twice, a non-callable, a class,
   ``@server.resource`` without its URI (used bare, it receives the function), and
   ``@server.completion`` without exactly one of ``prompt=``/``resource=``. Before, a
   bare ``@server.tool`` returned the inner decorator in place of the function and
   registered nothing.
3. A misspelt option (``@server.tool(titel=...)``) raises ``TypeError`` naming it, the
   closest known option and every option, when the function is registered (it used to
   surface as ``Tool.__init__() got an unexpected keyword argument``).
4. A callable without a ``__name__`` (an instance with ``__call__``, a
   ``functools.partial``) needs its name given; without one it raises ``TypeError``
   saying so (it used to be an ``AttributeError``).
5. An extension's decorator built on these helpers (``where="Tasks.tool"``) is named
   in their messages instead of ``server.<kind>``, and its own options are listed
   (before, ``@tasks.tool(task_suport=...)`` said ``server.tool()`` and listed only
   core's options).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

__all__ = [
    "RESOURCE_FORM",
    "check_callable",
    "check_options",
    "decorate",
    "name_of",
    "resource_uri",
]

F = TypeVar("F", bound=Callable[..., Any])
RESOURCE_FORM = '@server.resource("scheme://path", name=..., mime_type=...)'


def check_callable(kind: str, fn: Any, form: str | None = None, where: str | None = None) -> None:
    """Rule 2: ``fn`` must be a function (or a callable instance), not a class."""
    where = where or f"server.{kind}"
    form = form or f"@{where} on a function"
    if isinstance(fn, type):
        raise TypeError(
            f"{where}: {fn.__name__} is a class; register a function (or a method "
            f"of an instance) instead: {form}"
        )
    if not callable(fn):
        raise TypeError(f"{where}: expected a function, got {type(fn).__name__} {fn!r}; {form}")


def check_options(
    kind: str, options: Mapping[str, Any], known: Iterable[str], where: str | None = None
) -> None:
    """Rule 3: every key of ``options`` is one of ``known``, else ``TypeError``.
    ``known`` may map each option to its owner (``"core"`` or an extension,
    :meth:`OptionRegistry.names <mcpkit.server.options.OptionRegistry.names>`);
    ``where`` names the decorator (default ``server.<kind>``, rule 5)."""
    owners: dict[str, str] = (
        dict(cast("Mapping[str, str]", known))
        if isinstance(known, Mapping)
        else dict.fromkeys(known, "core")
    )
    allowed = sorted(owners)
    for key in options:
        if key not in owners:
            import difflib  # a misspelt option only

            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            names = ", ".join(k if owners[k] == "core" else f"{k} ({owners[k]})" for k in allowed)
            raise TypeError(
                f"{where or f'server.{kind}'}(): unknown option {key!r}{hint}; the options are "
                f"name, {names}; an extension's option needs the extension installed on the "
                "server before the decorator runs"
            )


def name_of(kind: str, fn: Callable[..., Any], name: str | None) -> str:
    """Rule 4: ``name``, else the function's ``__name__``, else ``TypeError``."""
    if name:
        return name
    found = getattr(fn, "__name__", None)
    if not isinstance(found, str):
        uri, sep = (", uri", ", ") if kind == "resource" else ("", "")
        raise TypeError(
            f"server.{kind}: {type(fn).__name__} {fn!r} has no __name__; give the name: "
            f"server.add_{kind}(fn{uri}, name=...) or @server.{kind}({uri[2:]}{sep}name=...)"
        )
    return found


def decorate(
    kind: str,
    target: Any,
    extra: tuple[Any, ...],
    name: str | None,
    register: Callable[[Callable[..., Any], str | None], object],
    where: str | None = None,
) -> Any:
    """Rules 1, 2, 5: the bare and called forms of ``@server.tool``/``@server.prompt``
    (``where``: an extension's decorator built on them, e.g. ``"Tasks.tool"``)."""
    where = where or f"server.{kind}"
    form = f'@{where}, @{where}() or @{where}("name", title=...)'
    if extra:
        raise TypeError(
            f"{where}() takes the name as its only positional argument; give the "
            f"other options as keywords: {form}"
        )
    if target is None or isinstance(target, str):
        if target is not None and name is not None:
            raise TypeError(f"{where}(): the name is given twice ({target!r}, name={name!r})")
        chosen = target if target is not None else name

        def decorator(fn: F) -> F:
            check_callable(kind, fn, form, where)
            register(fn, chosen)
            return fn

        return decorator
    check_callable(kind, target, form, where)
    register(target, name)
    return target


def resource_uri(args: tuple[Any, ...], uri: str | None) -> str:
    """Rule 2: the URI of ``server.resource(*args, uri=uri)``, or ``TypeError``."""
    if args and uri is None and isinstance(args[0], str):
        uri, args = args[0], args[1:]
    if args or not isinstance(uri, str):
        got = args[0] if args else uri
        if callable(got):
            raise TypeError(f"@server.resource needs the resource's URI; use {RESOURCE_FORM}")
        raise TypeError(
            f"server.resource() takes one URI string and keyword options, got "
            f"{type(got).__name__} {got!r}; use {RESOURCE_FORM}"
        )
    return uri
