"""App tool options (issue 26, apps.py rule 4): a misspelt option names
``AppsExtension.tool()`` and suggests its own options; a bad visibility or view URI names
the tool and the closest allowed value; nothing is registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit.ext.ui import AppsExtension
from mcpkit.server.app import Server

JSON = dict[str, Any]

STARTUP_TABLE = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" rows quote these messages."""


def chart() -> str:
    return "x"


def test_a_misspelt_option_names_the_apps_decorator_and_suggests_its_own_option() -> None:
    server = Server("s")
    ui = AppsExtension(server)
    options: JSON = {"visiblity": ["app"]}
    with pytest.raises(
        TypeError,
        match=r"^AppsExtension\.tool\(\): unknown option 'visiblity' \(did you mean "
        r"'visibility'\?\); the options are name, .*resource_uri \(AppsExtension\.tool\)",
    ):
        ui.tool(**options)(chart)
    with pytest.raises(TypeError, match=r"^AppsExtension\.tool\(\) takes the name as its only"):
        ui.tool("a", "b")
    with pytest.raises(TypeError, match=r"^AppsExtension\.add_tool\(\): unknown option 'titel'"):
        ui.add_tool(chart, titel="Chart")
    assert not server.tools


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"visibility": ["modle"]}, r"'modle' is not one of 'app', 'model' \(did you mean 'model'"),
        ({"visibility": "app"}, r"must be a non-empty list .*did you mean \['app'\]"),
        ({"resource_uri": "http://x/view"}, r"must start with 'ui://'"),
    ],
)
def test_a_bad_ui_option_value_names_the_tool(options: JSON, message: str) -> None:
    server = Server("s")
    ui = AppsExtension(server)
    with pytest.raises(ValueError, match=rf"^tool 'chart': .*{message}") as bad:
        ui.tool(**options)(chart)
    if options.get("visibility") == ["modle"]:
        assert f"`ValueError: {bad.value}`" in STARTUP_TABLE
    assert not server.tools
