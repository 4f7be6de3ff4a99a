"""The distribution installs alone, in the experimental namespace."""

from __future__ import annotations

from importlib.metadata import requires


def test_extension_id_is_the_seps() -> None:
    from mcpkit.experimental.events import EXTENSION_ID

    assert EXTENSION_ID == "io.modelcontextprotocol/events"


def test_depends_on_core_and_standardwebhooks_only() -> None:
    reqs = requires("mcpkit-exp-events") or []
    declared = [r.split(";")[0].strip() for r in reqs if "extra ==" not in r]
    assert sorted(r.split(">")[0] for r in declared) == ["mcpkit-core", "standardwebhooks"]
