"""The shape of the ``mcpkit.core.types`` package: lazy exports, cheap import, small
documented modules, and models whose fields are exactly the schema's properties."""

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

import mcpkit.core.types as types_pkg
from mcpkit.core.types import MCPModel

PACKAGE_DIR = Path(types_pkg.__file__).parent
SPEC_DIR = Path(__file__).parent / "spec"
EXPORTS: dict[str, str] = types_pkg._EXPORTS  # pyright: ignore[reportPrivateUsage]
MODULES = sorted(set(EXPORTS.values()))


def run_python(code: str) -> Any:
    """Run ``code`` in a fresh interpreter; it prints one JSON value, returned here."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


# --- lazy exports -----------------------------------------------------------------------


def test_importing_the_package_loads_no_submodule_and_no_pydantic() -> None:
    loaded = run_python(
        "import json, sys, mcpkit.core.types;"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.startswith(('pydantic', 'mcpkit.core.types')))))"
    )
    assert loaded == ["mcpkit.core.types"]


def test_constants_are_importable_without_pydantic() -> None:
    loaded = run_python(
        "import json, sys;"
        "from mcpkit.core.types.constants import META_PROTOCOL_VERSION, MODERN;"
        "print(json.dumps(any(m.startswith('pydantic') for m in sys.modules)))"
    )
    assert loaded is False


def test_one_name_loads_only_the_modules_it_needs() -> None:
    loaded = run_python(
        "import json, sys;"
        "from mcpkit.core.types import TextContent;"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mcpkit.core.types.'))))"
    )
    assert loaded == [
        "mcpkit.core.types._base",
        "mcpkit.core.types.common",
        "mcpkit.core.types.constants",
        "mcpkit.core.types.content",
    ]


def test_models_are_not_built_at_import() -> None:
    """defer_build: the validator is compiled on first use, not when the module loads."""
    kinds = run_python(
        "import json;"
        "from mcpkit.core.types.tool_call import CallToolResult;"
        "before = type(CallToolResult.__pydantic_validator__).__name__;"
        "CallToolResult.model_validate({'content': []});"
        "after = type(CallToolResult.__pydantic_validator__).__name__;"
        "print(json.dumps([before, after]))"
    )
    assert kinds == ["MockValSer", "SchemaValidator"]


@pytest.mark.parametrize("name", types_pkg.__all__)
def test_every_public_name_resolves_to_its_defining_module(name: str) -> None:
    module = importlib.import_module(f"mcpkit.core.types.{EXPORTS[name]}")
    assert getattr(types_pkg, name) is getattr(module, name)


def test_exports_are_exactly_the_submodules_public_names() -> None:
    expected: dict[str, str] = {}
    for module_name in MODULES:
        module = importlib.import_module(f"mcpkit.core.types.{module_name}")
        for name in module.__all__:
            assert name not in expected, f"{name} is exported by two modules"
            expected[name] = module_name
    assert expected == EXPORTS
    assert sorted(types_pkg.__all__) == sorted(expected)
    on_disk = {p.stem for p in PACKAGE_DIR.glob("*.py")} - {"__init__"}
    assert set(MODULES) == on_disk, "every module exports something, through __init__"


def test_type_checking_imports_mirror_the_exports() -> None:
    tree = ast.parse((PACKAGE_DIR / "__init__.py").read_text("utf-8"))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    imported: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module
        for alias in node.names:
            imported[alias.asname or alias.name] = node.module.removeprefix("mcpkit.core.types.")
    assert imported == EXPORTS


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchModel'"):
        _ = types_pkg.NoSuchModel  # pyright: ignore[reportAttributeAccessIssue]


# --- module hygiene -------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(PACKAGE_DIR.glob("*.py")), ids=lambda p: p.name)
def test_module_is_small_and_opens_with_its_sources_and_rules(path: Path) -> None:
    source = path.read_text("utf-8")
    assert len(source.splitlines()) < 800
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring, f"{path.name} has no module docstring"
    assert "Sources" in docstring, f"{path.name}: the docstring names no spec sections"
    assert "Rules:" in docstring, f"{path.name}: the docstring states no rules"


def exported_models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for name in types_pkg.__all__:
        value = getattr(types_pkg, name)
        if isinstance(value, type) and issubclass(value, MCPModel) and value is not MCPModel:
            found[value.__name__] = value
    return [found[name] for name in sorted(found)]


@pytest.mark.parametrize("model", exported_models(), ids=lambda m: m.__name__)
def test_public_model_has_its_own_docstring(model: type[BaseModel]) -> None:
    assert model.__dict__.get("__doc__"), f"{model.__name__} has no docstring"


# Fields whose wire name is not the camelCase of the Python name.
SPECIAL_ALIASES = {"meta": "_meta", "json_schema": "$schema"}


def wire_name(name: str, model: type[BaseModel]) -> str:
    model.model_rebuild()  # a deferred model gets its generated aliases when built (pydantic 2.11)
    field = model.model_fields[name]
    return field.serialization_alias or field.alias or name


@pytest.mark.parametrize("model", exported_models(), ids=lambda m: m.__name__)
def test_wire_names_are_camel_case_of_python_names(model: type[BaseModel]) -> None:
    for name in model.model_fields:
        wire = wire_name(name, model)
        if wire.startswith("io.modelcontextprotocol/"):
            continue
        assert wire == SPECIAL_ALIASES.get(name, to_camel(name)), f"{model.__name__}.{name}"


@pytest.mark.parametrize("model", exported_models(), ids=lambda m: m.__name__)
def test_fixed_wire_names_are_read_as_well_as_written(model: type[BaseModel]) -> None:
    """A field renamed with ``wire_key`` validates from the same key it serialises to."""
    for name, field in model.model_fields.items():
        if field.serialization_alias is not None:
            assert field.validation_alias == field.serialization_alias, f"{model.__name__}.{name}"


# --- models against the schemas --------------------------------------------------------------

SCHEMAS = {
    version: json.loads((SPEC_DIR / version / "schema.json").read_text("utf-8"))["$defs"]
    for version in ("2025-11-25", "2026-07-28")
}

# Models named differently from their schema type, or defined inline in another type:
# model -> "$defs" paths (tried in both schemas; a path missing in one is skipped).
SCHEMA_LOCATIONS = {
    "Completion": ["CompleteResult/properties/completion"],
    "CompleteArgument": ["CompleteRequestParams/properties/argument"],
    "CompleteContext": ["CompleteRequestParams/properties/context"],
    "RootsCapability": ["ClientCapabilities/properties/roots"],
    "SamplingCapability": ["ClientCapabilities/properties/sampling"],
    "ElicitationCapability": ["ClientCapabilities/properties/elicitation"],
    "PromptsCapability": ["ServerCapabilities/properties/prompts"],
    "ResourcesCapability": ["ServerCapabilities/properties/resources"],
    "ToolsCapability": ["ServerCapabilities/properties/tools"],
    "ElicitRequestedSchema": ["ElicitRequestFormParams/properties/requestedSchema"],
    "EnumOption": ["TitledSingleSelectEnumSchema/properties/oneOf/items"],
    "TitledEnumItems": ["TitledMultiSelectEnumSchema/properties/items"],
    "UntitledEnumItems": ["UntitledMultiSelectEnumSchema/properties/items"],
    "ElicitationCompleteNotificationParams": ["ElicitationCompleteNotification/properties/params"],
    "RequestMeta": ["RequestMetaObject"],
    "ResultMeta": ["ResultMetaObject"],
    "NotificationMeta": ["NotificationMetaObject"],
    "SubscriptionsListenResultMeta": ["SubscriptionsListenResultMetaObject"],
    "ErrorObject": ["Error"],
    "HeaderMismatchErrorObject": ["Error"],
    "MissingRequiredClientCapabilityErrorObject": ["Error"],
    "UnsupportedProtocolVersionErrorObject": ["Error"],
    "URLElicitationRequiredErrorObject": ["Error"],
    "MissingRequiredClientCapabilityData": [
        "MissingRequiredClientCapabilityError/properties/error/allOf/1/properties/data"
    ],
    "UnsupportedProtocolVersionData": [
        "UnsupportedProtocolVersionError/properties/error/allOf/1/properties/data"
    ],
    "URLElicitationRequiredData": [
        "URLElicitationRequiredError/properties/error/allOf/1/properties/data"
    ],
}

# Schema properties we deliberately do not declare (they are kept as unknown fields).
NOT_DECLARED = {
    "jsonrpc": "JSON-RPC framing, owned by mcpkit.core.jsonrpc",
    "id": "JSON-RPC framing (on request types), owned by mcpkit.core.jsonrpc",
    "task": "2025-11-25 task augmentation; tasks are the io.modelcontextprotocol/tasks extension",
}

# Declared fields that no schema lists for that type, with the reason.
NOT_IN_SCHEMA = {
    ("CreateMessageResult", "resultType"): "Result base; MRTR input responses carry none",
    ("ListRootsResult", "resultType"): "Result base; MRTR input responses carry none",
    ("ElicitResult", "resultType"): "Result base; MRTR input responses carry none",
    ("InitializeResult", "resultType"): "Result base; initialize exists only before resultType",
    ("ElicitationCompleteNotificationParams", "_meta"): "every notification's params allow _meta",
}


def schema_properties(model_name: str) -> set[str] | None:
    paths = SCHEMA_LOCATIONS.get(model_name, [model_name])
    found: set[str] | None = None
    for defs in SCHEMAS.values():
        for path in paths:
            node = resolve(defs, path)
            if isinstance(node, dict) and "properties" in node:
                properties = cast(dict[str, Any], node["properties"])
                found = (found or set[str]()) | set(properties)
    return found


def resolve(defs: dict[str, Any], path: str) -> Any:
    """The node at ``path`` (``/``-separated keys and list indexes) below ``$defs``, or None."""
    node: Any = defs
    for part in path.split("/"):
        if isinstance(node, list):
            node = cast(list[Any], node)[int(part)]
        elif isinstance(node, dict):
            node = cast(dict[str, Any], node).get(part)
        else:
            return None
    return node


@pytest.mark.parametrize("model", exported_models(), ids=lambda m: m.__name__)
def test_model_fields_are_the_schema_properties(model: type[BaseModel]) -> None:
    """Union over 2025-11-25 and 2026-07-28: every schema property is a declared field and
    every declared field is a schema property, apart from the listed exceptions."""
    properties = schema_properties(model.__name__)
    assert properties is not None, f"no schema type found for {model.__name__}"
    declared = {wire_name(name, model) for name in model.model_fields}
    undeclared = properties - declared - NOT_DECLARED.keys()
    assert not undeclared, f"{model.__name__} lacks schema properties {sorted(undeclared)}"
    invented = {
        alias for alias in declared - properties if (model.__name__, alias) not in NOT_IN_SCHEMA
    }
    assert not invented, f"{model.__name__} declares non-schema fields {sorted(invented)}"
