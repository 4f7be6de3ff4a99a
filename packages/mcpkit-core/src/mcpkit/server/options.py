"""Options of the registration decorators: their values, checked at registration, and
the options extensions add to core's decorators.

Rules:
1. An option value outside its allowed set fails at registration, never on a request:
   ``ValueError`` naming the item (``tool 'save_note'``), the option, the allowed
   values and the closest one (:func:`choice`). Core checks what a client's schema
   checks in a definition (spec ``Tool``, ``Prompt``, ``Resource``,
   ``ResourceTemplate``, ``Icon``, ``ToolAnnotations``, ``ToolExecution``,
   ``Annotations``): the types of ``title``, ``description``, ``mimeType`` and
   ``_meta``, ``execution.taskSupport``, the annotation hints' types,
   ``audience`` and ``priority``, an icon's ``src``/``theme``/``sizes``; so the
   server never lists an item its peers cannot read (before, ``taskSupport:
   "optinal"`` was listed and broke every ``tools/list`` of the client), nor one it
   cannot encode: a definition that is not JSON (an object in ``meta``) is refused
   (before, every ``tools/list`` was answered -32603).
2. An extension adds options to core's decorators (``@server.tool(all_of_scopes=...)``)
   with :meth:`Server.add_options <mcpkit.server.app.Server.add_options>` and an
   :class:`ExtensionOptions`: its owner, the kinds it applies to (``tool``,
   ``prompt``, ``resource``), one checker per option name, ``shape`` (optional) and
   ``apply``. Checkers run before the item is built; ``shape`` changes the built
   item's definition (``execution.taskSupport``) before core checks the definition;
   ``apply`` (the extension's own bookkeeping: a scope rule, per-tool settings) runs
   only after every check has passed, just before the item is stored, so a
   registration that fails registers nothing and changes nothing. ``shape`` and
   ``apply`` receive the options of their set that were given (never the others),
   with the checkers' values.
3. An option name taken twice (by core or another extension) is a ``ValueError`` when
   the extension is installed.
4. An unknown option is a ``TypeError`` (:func:`mcpkit.server.forms.check_options`)
   naming the decorator, the closest option and every option, core's and the
   installed extensions' (each with its owner); an extension's option needs the
   extension installed on the server before the decorator runs, and the message says
   so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON
from mcpkit.server.forms import check_callable, check_options, name_of

__all__ = [
    "ExtensionOptions",
    "OptionRegistry",
    "check_definition",
    "check_eras",
    "choice",
    "closest",
]

Checker = Callable[[Any], Any]
"""``value -> value to keep``; raises ``ValueError``/``TypeError`` with the reason."""
Apply = Callable[[str, str, Any, JSON], None]
"""``(kind, key, item, options)``: ``key`` is the tool's or prompt's name, the
resource's URI or URI template; ``item`` the ``Tool``/``Prompt``/``Resource``/
``ResourceTemplate`` about to be stored."""

_ERAS = ("legacy", "modern")
_TEXTS = ("title", "description", "mime_type", "mimeType")
_TASK_SUPPORT = ("forbidden", "optional", "required")
_THEMES = ("dark", "light")
_ROLES = ("assistant", "user")
_HINTS = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint")


def closest(value: Any, allowed: Iterable[str]) -> str | None:
    """The allowed value closest to ``value`` (difflib), or None."""
    if not isinstance(value, str):
        return None
    import difflib  # a mistake only

    found = difflib.get_close_matches(value, list(allowed), n=1)
    return found[0] if found else None


def choice(value: Any, allowed: Iterable[str], where: str = "") -> str:
    """``value`` when it is one of ``allowed``, else ``ValueError`` listing them and
    naming the closest (rule 1), after ``where: `` when given."""
    options = list(allowed)
    if isinstance(value, str) and value in options:
        return value
    near = closest(value, options)
    hint = f" (did you mean {near!r}?)" if near else ""
    prefix = f"{where}: " if where else ""
    raise ValueError(f"{prefix}{value!r} is not one of {', '.join(map(repr, options))}{hint}")


@dataclass(frozen=True, slots=True)
class ExtensionOptions:
    """Options an extension adds to core's decorators (rule 2).

    ``owner``: who provides them, as a message names it (``"mcpkit-ext-auth
    (protect())"``). ``checks``: option name -> checker. ``apply``: what the extension
    does with a registered item and its given options, once every check passed;
    ``shape``: what it changes in the item's definition, before the checks.
    ``kinds``: the decorators
    that take them (``"tool"``, ``"prompt"``, ``"resource"``)."""

    owner: str
    checks: Mapping[str, Checker]
    apply: Apply
    kinds: frozenset[str] = frozenset({"tool"})
    shape: Apply | None = None


class OptionRegistry:
    """The extension options installed on one server (rules 2-4)."""

    def __init__(self) -> None:
        from mcpkit.server.prompts import PromptOptions
        from mcpkit.server.resources import ResourceOptions
        from mcpkit.server.tools import ToolOptions

        # kind-ok: unbounded-table three fixed kinds, never grown
        self.core = {
            "tool": frozenset(ToolOptions.__annotations__),
            "prompt": frozenset(PromptOptions.__annotations__),
            "resource": frozenset(ResourceOptions.__annotations__),
        }
        self.sets: list[ExtensionOptions] = []

    def add(self, options: ExtensionOptions) -> None:
        """Rule 3: install ``options``; ``ValueError`` for a name already taken."""
        for kind in options.kinds:
            taken = self.names(kind)
            for name in options.checks:
                if name in taken or name == "name":
                    owner = taken.get(name, "core")
                    raise ValueError(
                        f"{options.owner}: the {kind} option {name!r} is already {owner}'s"
                    )
        self.sets.append(options)

    def names(self, kind: str) -> dict[str, str]:
        """Every option of ``kind``'s decorator -> its owner (``"core"`` for core's)."""
        out = dict.fromkeys(sorted(self.core.get(kind, ())), "core")
        for s in self.sets:
            if kind in s.kinds:
                out.update(dict.fromkeys(s.checks, s.owner))
        return out

    def split(self, kind: str, name: str, options: Mapping[str, Any]) -> tuple[JSON, list[Any]]:
        """Core's options, and each extension set with its checked values (rule 2);
        ``ValueError`` naming the item and the option for a value a checker refuses."""
        core: JSON = {}
        given: list[JSON] = [{} for _ in self.sets]
        for key, value in options.items():
            at = next(
                (i for i, s in enumerate(self.sets) if key in s.checks and kind in s.kinds), None
            )
            if at is None:
                core[key] = value
                continue
            try:
                given[at][key] = self.sets[at].checks[key](value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{kind} {name!r}: {key}={value!r}: {exc}") from None
        chosen = [(s, values) for s, values in zip(self.sets, given, strict=True) if values]
        return core, chosen

    def register(
        self,
        kind: str,
        fn: Callable[..., Any],
        name: str | None,
        options: Mapping[str, Any],
        make: Callable[..., Any],
        key: str | None = None,
    ) -> Any:
        """Rules 1-4 and :mod:`mcpkit.server.forms` rules 2-4: check ``fn`` and the
        options, build the item (``make(name=..., **core options)``), check its
        options and definition, apply each extension's options; returns the item, not
        yet stored.
        ``key``: the item's URI (a resource), else its name."""
        check_callable(kind, fn)
        check_options(kind, options, self.names(kind))
        item_name = name_of(kind, fn, name)
        core, chosen = self.split(kind, item_name, options)
        extra: Any = core.get("extra")
        check_definition(kind, item_name, {**core, **(extra if isinstance(extra, Mapping) else {})})
        item = make(name=item_name, **core)
        item_key = key if key is not None else item_name
        for s, values in chosen:
            if s.shape is not None:
                s.shape(kind, item_key, item, values)
        check_definition(kind, item_name, item.definition)  # as the extensions left it
        try:
            dumps(item.definition)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{kind} {item_name!r}: its definition cannot be sent as JSON ({exc}); give "
                "JSON values (str, numbers, bools, None, lists, dicts) in its options"
            ) from None
        for s, values in chosen:  # rule 2: every check passed
            s.apply(kind, item_key, item, values)
        return item


def check_eras(method: str, eras: Any) -> frozenset[Any]:
    """Rule 1 for ``add_method(..., eras=...)``: a non-empty list of ``"legacy"`` and
    ``"modern"``, else ``ValueError`` naming the method and the closest era."""
    if isinstance(eras, str) or not isinstance(eras, Iterable) or not eras:
        hint = f" (did you mean [{eras!r}]?)" if eras in _ERAS else ""
        raise ValueError(f"method {method!r}: eras={eras!r} must be a non-empty list of eras{hint}")
    for era in cast("Iterable[Any]", eras):
        choice(era, _ERAS, f"method {method!r}: eras")
    return frozenset(cast("Iterable[Any]", eras))


def check_definition(kind: str, name: str, definition: Mapping[str, Any]) -> None:
    """Rule 1: ``ValueError`` for a definition field a client's schema refuses."""
    try:
        _check(definition)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{kind} {name!r}: {exc}") from None


def _check(d: Mapping[str, Any]) -> None:
    for field in _TEXTS:
        if d.get(field) is not None and not isinstance(d[field], str):
            raise ValueError(f"{field}={d[field]!r} must be a string")
    for field in ("meta", "_meta"):
        if d.get(field) is not None:
            _mapping(field, d[field])
    execution = d.get("execution")
    if execution is not None:
        _mapping("execution", execution)
        support = execution.get("taskSupport")
        if support is not None:
            choice(support, _TASK_SUPPORT, "execution taskSupport")
    annotations = d.get("annotations")
    if annotations is not None:
        _mapping("annotations", annotations)
        for hint in _HINTS:
            if annotations.get(hint) is not None and not isinstance(annotations[hint], bool):
                raise ValueError(f"annotations {hint}={annotations[hint]!r} must be a bool")
        _annotations(annotations)
    icons = d.get("icons")
    if icons is not None:
        if isinstance(icons, (str, Mapping)) or not isinstance(icons, Iterable):
            raise ValueError(f"icons={icons!r} must be a list of icon objects")
        for icon in cast(Iterable[Any], icons):
            _icon(icon)


def _mapping(field: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{field}={value!r} must be an object (a mapping)")


def _annotations(a: Mapping[str, Any]) -> None:
    """Resource annotations (spec ``Annotations``): ``audience``, ``priority``."""
    audience = a.get("audience")
    if audience is not None:
        if isinstance(audience, str) or not isinstance(audience, Iterable):
            raise ValueError(f"annotations audience={audience!r} must be a list of roles")
        for role in cast(Iterable[Any], audience):
            choice(role, _ROLES, "annotations audience")
    priority = a.get("priority")
    if priority is not None and (
        isinstance(priority, bool)
        or not isinstance(priority, (int, float))
        or not 0 <= priority <= 1
    ):
        raise ValueError(f"annotations priority={priority!r} must be a number from 0 to 1")


def _icon(icon: Any) -> None:
    if not isinstance(icon, Mapping):
        raise ValueError(f"icon {icon!r} must be an object with a string src")
    fields = cast(Mapping[str, Any], icon)
    if not isinstance(fields.get("src"), str):
        raise ValueError(f"icon {icon!r} must be an object with a string src")
    theme = fields.get("theme")
    if theme is not None:
        choice(theme, _THEMES, "icon theme")
    sizes = fields.get("sizes")
    if sizes is not None and (
        isinstance(sizes, str)
        or not isinstance(sizes, Iterable)
        or not all(isinstance(s, str) for s in cast(Iterable[Any], sizes))
    ):
        raise ValueError(f"icon sizes={sizes!r} must be a list of strings such as '48x48'")
