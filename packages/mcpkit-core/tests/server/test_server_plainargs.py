"""Plain signatures are bound without pydantic, with pydantic's schema and verdicts
(``mcpkit.server.plainargs``; ``mcpkit.server.typed`` rule 5).

The reference for every assertion is the pydantic model that ``typed`` builds for the
same signature (``Binding.model``): the fast path must derive the identical schema (key
order included) and, for any arguments, return the identical keyword arguments or leave
the decision to that model.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from mcpkit.server.plainargs import NOT_PLAIN, RESERVED_NAMES, plain_args
from mcpkit.server.typed import ArgumentError, _strip_titles, bind  # pyright: ignore[reportPrivateUsage]

JSON = dict[str, Any]


# fmt: off
NO_LIST: Any = None
"""A ``None`` default on a non-optional annotation (pydantic allows it, unvalidated)."""


def f_str(text: str) -> None: ...
def f_scalars(a: int, b: float, c: bool, d: str) -> None: ...
def f_defaults(a: int = 3, b: float = 1.5, c: bool = False, d: str = "x", e: float = 2) -> None: ...
def f_none_defaults(a: int = NO_LIST, b: list[str] = NO_LIST) -> None: ...
def f_optional(a: int | None, b: Optional[str] = None, c: float | None = 0.5) -> None: ...  # noqa: UP045
def f_union_none_first(a: typing.Union[None, bool]) -> None: ...  # noqa: UP007, RUF036
def f_lists(a: list[int], b: list[float] | None = None, c: list[Any] = NO_LIST) -> None: ...
def f_bare_list(a: list = NO_LIST, d: typing.List[bool] = NO_LIST) -> None: ...  # type: ignore[type-arg]  # noqa: UP006
def f_any(a, b: Any = None, c: Any = 3) -> None: ...  # pyright: ignore[reportMissingParameterType]
def f_empty() -> None: ...
def f_mixed(query: str, limit: int = 10, tags: list[str] | None = None, exact: bool = False) -> None: ...  # noqa: E501


PLAIN = [
    f_str, f_scalars, f_defaults, f_none_defaults, f_optional, f_union_none_first, f_lists,
    f_bare_list, f_any, f_empty, f_mixed,
]
# fmt: on


def pydantic_schema(fn: Any) -> JSON:
    binding = bind(fn, name="t")
    assert binding.model is not None
    schema = _strip_titles(binding.model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


@pytest.mark.parametrize("fn", PLAIN, ids=lambda f: f.__name__)
def test_plain_signature_schema_is_exactly_pydantics_including_key_order(fn: Any) -> None:
    binding = bind(fn, name="t")
    assert binding.plain is not None
    assert json.dumps(binding.input_schema) == json.dumps(pydantic_schema(fn))


def f_annotated(a: typing.Annotated[int, "doc"]) -> None: ...
def f_literal(a: typing.Literal["x", "y"]) -> None: ...
def f_two_types(a: int | str) -> None: ...
def f_list_default(a: list[int] = [1]) -> None: ...  # noqa: B006
def f_nested_list(a: list[list[int]]) -> None: ...
def f_optional_any(a: Optional[Any] = None) -> None: ...  # noqa: UP045
def f_model(a: BaseModel) -> None: ...
def f_underscore(_a: int) -> None: ...
def f_reserved(json: str) -> None: ...
def f_model_prefix(model_name: str) -> None: ...
def f_inf_default(a: float = float("inf")) -> None: ...
def f_dict(a: dict[str, int]) -> None: ...


@pytest.mark.parametrize(
    "fn",
    [f_annotated, f_literal, f_two_types, f_list_default, f_nested_list, f_optional_any, f_model,
     f_underscore, f_reserved, f_model_prefix, f_inf_default, f_dict],
    ids=lambda f: f.__name__,
)  # fmt: skip
@pytest.mark.filterwarnings("ignore:Field name .* shadows an attribute:UserWarning")
def test_anything_else_is_bound_by_pydantic_as_before(fn: Any) -> None:
    binding = bind(fn, name="t")
    assert binding.plain is None
    assert binding.input_schema == pydantic_schema(fn)


def test_reserved_names_cover_every_public_basemodel_attribute() -> None:
    public = {n for n in dir(BaseModel) if not n.startswith(("_", "model_"))}
    assert public <= RESERVED_NAMES


def reference(fn: Any, arguments: JSON) -> JSON | str:
    """What the pydantic model alone makes of ``arguments``: kwargs or the error text."""
    model = bind(fn, name="t").model
    assert model is not None
    try:
        return dict(model.model_validate(arguments).__dict__)
    except ValidationError:
        with pytest.raises(ArgumentError) as err:
            bind(fn, name="t").validate(arguments)
        return str(err.value)


def outcome(fn: Any, arguments: JSON) -> JSON | str:
    try:
        return bind(fn, name="t").validate(arguments)
    except ArgumentError as exc:
        return str(exc)


def typed_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(typed_equal(a[k], b[k]) for k in a)  # pyright: ignore
    if isinstance(a, list):
        return len(a) == len(b) and all(typed_equal(x, y) for x, y in zip(a, b, strict=True))  # pyright: ignore
    return a == b


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
)
argument_names = st.sampled_from(
    ["a", "b", "c", "d", "e", "text", "query", "limit", "tags", "exact", "zz"]
)


@settings(max_examples=400, deadline=None)
@given(
    fn=st.sampled_from(PLAIN), arguments=st.dictionaries(argument_names, json_values, max_size=5)
)
def test_plain_validation_gives_pydantics_kwargs_or_pydantics_error(
    fn: Any, arguments: JSON
) -> None:
    assert typed_equal(outcome(fn, arguments), reference(fn, arguments))


@pytest.mark.parametrize(
    ("arguments", "plain"),
    [
        ({"query": "q"}, True),
        ({"query": "q", "limit": 5, "tags": ["a"], "exact": True, "other": 1}, True),
        ({"query": "q", "tags": None}, True),
        ({"query": "q", "limit": "5"}, False),  # a coercion: pydantic's call
        ({"query": "q", "limit": True}, False),  # a bool is not an int here
        ({"query": "q", "tags": ["a", 1]}, False),
        ({"limit": 5}, False),  # missing: pydantic's error message
    ],
)
def test_only_exactly_typed_arguments_take_the_fast_path(arguments: JSON, plain: bool) -> None:
    binding = bind(f_mixed, name="t")
    assert binding.plain is not None
    assert (binding.plain.validate(arguments) is not NOT_PLAIN) is plain


def test_lists_are_copied_and_defaults_filled_like_pydantic() -> None:
    tags = ["a", "b"]
    kwargs = bind(f_mixed, name="t").validate({"query": "q", "tags": tags})
    assert kwargs == {"query": "q", "limit": 10, "tags": ["a", "b"], "exact": False}
    assert kwargs["tags"] is not tags


def test_a_coercion_still_goes_through_pydantic() -> None:
    assert bind(f_mixed, name="t").validate({"query": "q", "limit": "7"})["limit"] == 7
    with pytest.raises(ArgumentError, match="limit"):
        bind(f_mixed, name="t").validate({"query": "q", "limit": "seven"})


def test_plain_args_reports_none_for_a_signature_it_does_not_cover() -> None:
    assert plain_args({"a": (int, ...)}) is not None
    assert plain_args({"a": (typing.Annotated[int, "x"], ...)}) is None
    assert plain_args({"a": ({"unhashable": 1}, ...)}) is None  # pyright: ignore[reportArgumentType]


def test_a_server_of_plain_tools_imports_neither_pydantic_nor_jsonschema() -> None:
    code = """
import sys
from mcpkit.server import Server
server = Server("s")
@server.tool()
async def search(query: str, limit: int = 10, tags: list[str] | None = None) -> str:
    return query
import mcpkit.server.stdio, mcpkit.server.connection
heavy = {"pydantic", "pydantic_core", "jsonschema"}
heavy = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
print(",".join(heavy))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
