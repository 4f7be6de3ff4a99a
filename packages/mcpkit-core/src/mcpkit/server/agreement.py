"""A registration's parts agree: what a decorator declares and the function it decorates.

Each check raises ``TypeError`` naming the item, the mismatch and the fix, when the
item is registered (``@server.resource``, ``add_resource``, ``@server.prompt``,
``add_prompt``, ``@server.tool``, ``add_tool``, and everything built on them: the
extensions' decorators, ``ui.resource``); a completion naming nothing is a warning when
the server starts serving (rule 5). Before, each of
these was accepted and failed only when a client used the item (-32602 or an internal
error), far from its cause.

Rules (a "parameter" is one of the function's parameters other than the injected
``Context`` and ``*args``/``**kwargs``; it is "required" when it has no default):
1. A resource template's variables and its function's parameters match both ways:
   every variable is a parameter (a value for a variable that is not one would be
   dropped), and every required parameter is a variable. A variable of a query
   expression (``{?q}``, ``{&q}``) may be left out of a URI, so its parameter needs a
   default.
2. A static resource's function is called without arguments: it has no required
   parameter.
3. A prompt's explicit ``arguments=`` list and its signature match: each entry has a
   distinct ``name`` that is a named parameter (validation drops the arguments that are
   not, so ``**kwargs`` never receives one), every
   required parameter is declared, and declared ``required: true`` (a parameter
   without a default must be declared required, or ``prompts/get`` could call it
   without it).
4. A tool's explicit ``input_schema=`` and its signature match: each top-level
   ``properties`` name is a parameter (unless the function takes ``**kwargs``), and
   every required parameter is in the schema's ``required``.
5. A completion handler is called with ``(argument, value, context)``: it has at most
   three required parameters. Its reference names a registered prompt (``prompt=``)
   or a registered resource or template URI (``resource=``) of the same server;
   checked at start-up as a name-keyed rule (:mod:`mcpkit.server.names`), where each
   one naming nothing is a WARNING and the server serves on: a completion protects
   nothing, and its prompt may be added later (at run time, by a lifespan).
6. A function an extension calls with a fixed set of positional arguments (a UI view's
   ``html=`` with none, a tool's ``text=`` renderer with the result) accepts exactly
   those: :func:`check_call_shape`, for extensions registering through core.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mcpkit.server.typed import Binding
    from mcpkit.server.uritemplates import TemplateMatcher

__all__ = [
    "check_call_shape",
    "check_completer",
    "check_prompt_arguments",
    "check_static_resource",
    "check_template",
    "check_tool_schema",
]


def _required(binding: Binding) -> list[str]:
    return [n for n, (_, default) in binding.fields.items() if default is ...]


def _takes_kwargs(binding: Binding) -> bool:
    try:
        params = inspect.signature(binding.fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    return any(p.kind is p.VAR_KEYWORD for p in params)


def _closest(name: str, among: Iterable[str]) -> str:
    import difflib  # a mismatch only (start-up time)

    close = difflib.get_close_matches(name, list(among), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fn(binding: Binding) -> str:
    return f"{getattr(binding.fn, '__name__', type(binding.fn).__name__)}()"


def check_template(template: TemplateMatcher, binding: Binding) -> None:
    """Rule 1; ``TypeError`` naming the template, the function and the fix."""
    where = f"server.resource({template.template!r}) on {_fn(binding)}"
    params = binding.field_names
    for var in template.variable_names:
        if var not in params:
            others = [p for p in params if p not in template.variable_names]
            rename = f" or rename the parameter {others[0]!r} to {var!r}" if others else ""
            raise TypeError(
                f"{where}: the URI template's variable {{{var}}} is not a parameter of the "
                f"function{_closest(var, params)}; add a parameter {var!r}{rename}"
            )
    for param in _required(binding):
        if param not in template.variable_names:
            raise TypeError(
                f"{where}: the parameter {param!r} has no default and the URI template has "
                f"no variable {{{param}}}{_closest(param, template.variable_names)}; name a "
                f"template variable {{{param}}} or give {param!r} a default"
            )
        if param in template.query_names:
            raise TypeError(
                f"{where}: the parameter {param!r} has no default, but a URI may leave out "
                f"the query variable {param!r}; give {param!r} a default"
            )


def check_static_resource(uri: str, binding: Binding) -> None:
    """Rule 2; ``TypeError`` naming the URI, the parameter and the fix."""
    required = _required(binding)
    if required:
        raise TypeError(
            f"server.resource({uri!r}) on {_fn(binding)}: the URI has no template variable, "
            f"so the function is called without arguments, but the parameter "
            f"{required[0]!r} has no default; give it a default or put {{{required[0]}}} "
            f"in the URI to make a resource template"
        )


def check_prompt_arguments(name: str, arguments: Sequence[Any], binding: Binding) -> None:
    """Rule 3; ``TypeError`` naming the prompt, the argument and the fix."""
    where = f"server.prompt({name!r}) on {_fn(binding)}"
    params = binding.field_names
    declared: dict[str, bool] = {}
    for i, entry in enumerate(arguments):
        arg = cast("Mapping[str, Any]", entry) if isinstance(entry, Mapping) else None
        arg_name = arg.get("name") if arg is not None else None
        if not isinstance(arg_name, str) or not arg_name:
            raise TypeError(
                f"{where}: arguments[{i}] has no name; each entry is "
                f'{{"name": ..., "description"?: ..., "required"?: bool}}'
            )
        if arg_name in declared:
            raise TypeError(f"{where}: the argument {arg_name!r} is declared twice in arguments=")
        if arg_name not in params:  # **kwargs never receives it (typed rule 2)
            raise TypeError(
                f"{where}: the declared argument {arg_name!r} is not a parameter of the "
                f"function{_closest(arg_name, params)}; rename it, or add a parameter "
                f"{arg_name!r}"
            )
        assert arg is not None
        declared[arg_name] = bool(arg.get("required", False))
    for param in _required(binding):
        if param not in declared:
            raise TypeError(
                f"{where}: the parameter {param!r} has no default and is not in "
                f"arguments=; declare it ({{'name': {param!r}, 'required': True}}) or give "
                f"it a default"
            )
        if not declared[param]:
            raise TypeError(
                f"{where}: the argument {param!r} is declared optional but its parameter "
                f"has no default; declare it 'required': True or give it a default"
            )


def check_tool_schema(name: str, schema: Mapping[str, Any], binding: Binding) -> None:
    """Rule 4; ``TypeError`` naming the tool, the property or parameter and the fix."""
    where = f"server.tool({name!r}) on {_fn(binding)}"
    params = binding.field_names
    props = schema.get("properties")
    if isinstance(props, Mapping) and not _takes_kwargs(binding):
        for prop in cast("Mapping[str, Any]", props):
            if prop not in params:
                raise TypeError(
                    f"{where}: input_schema has the property {prop!r}, which is not a "
                    f"parameter of the function{_closest(prop, params)}; add a parameter "
                    f"{prop!r} (or **kwargs) or rename the property"
                )
    listed = schema.get("required")
    required_props = set(cast("list[Any]", listed)) if isinstance(listed, list) else set[Any]()
    for param in _required(binding):
        if param not in required_props:
            raise TypeError(
                f"{where}: the parameter {param!r} has no default but input_schema does "
                f"not list it in 'required'; add it to input_schema['required'] (and "
                f"'properties') or give it a default"
            )


def check_completer(binding: Binding) -> None:
    """Rule 5, the handler's signature; ``TypeError`` naming it and the fix."""
    extra = _required(binding)[3:]
    if extra:
        raise TypeError(
            f"server.completion on {_fn(binding)}: a completion handler is called with "
            f"(argument, value, context), but it also requires {extra[0]!r}; give "
            f"{extra[0]!r} a default or remove it"
        )


def check_call_shape(where: str, fn: Callable[..., Any], arguments: Sequence[str]) -> None:
    """Rule 6: ``fn`` can be called with one positional argument per name in
    ``arguments``, else ``TypeError`` naming ``where``, the call and the fix. A callable
    without a readable signature (some builtins) is accepted."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*arguments)
    except TypeError as exc:
        name = getattr(fn, "__name__", type(fn).__name__)
        call = f"{name}({', '.join(arguments)})"
        raise TypeError(
            f"{where}: {name} is called as {call}, but {exc}; make it take exactly "
            f"({', '.join(arguments)}) (give any other parameter a default)"
        ) from None
