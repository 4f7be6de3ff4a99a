"""The distribution installs alone and names the extension as the spec does."""

from __future__ import annotations

from importlib.metadata import requires


def test_extension_id_is_the_specs() -> None:
    from mcpkit.ext.ui import EXTENSION_ID

    assert EXTENSION_ID == "io.modelcontextprotocol/ui"


def test_depends_on_core_only() -> None:
    declared = [r.split(";")[0].strip() for r in requires("mcpkit-ext-ui") or []]
    assert [r for r in declared if not r.startswith("mcpkit-core")] == []
