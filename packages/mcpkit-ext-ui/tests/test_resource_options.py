"""``AppsExtension.resource`` options checked at registration (issue 26 review fault 9):
``csp={...}`` crashed with AttributeError on ``to_wire``, ``prefers_border="yes"`` was
sent as ``"yes"``, and an extension option (``all_of_scopes``) got Python's bare
"unexpected keyword". Each error names the resource, the option, the allowed values and
the closest one; nothing is registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_helpers import UI

from mcpkit.client import Client
from mcpkit.ext.ui import AppsExtension, ResourceCsp
from mcpkit.server.app import Server
from mcpkit.server.options import ExtensionOptions

JSON = dict[str, Any]
URI = "ui://notes/view"
STARTUP_TABLE = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" row quotes the csp key message."""
WHERE = r"^ui\.resource\('ui://notes/view'\): "


def _ui() -> tuple[Server, AppsExtension]:
    server = Server("s")
    return server, AppsExtension(server)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"csp": {"conectDomains": ["https://api.example"]}},
            ValueError,
            r"option csp key: 'conectDomains' is not one of connectDomains, resourceDomains, "
            r"frameDomains, baseUriDomains \(did you mean 'connectDomains'\?\)",
        ),
        (
            {"csp": {"connectDomains": "https://api.example"}},
            ValueError,
            r"option csp\.connectDomains must be a list of origins, not the string",
        ),
        (
            {"csp": ["https://api.example"]},
            TypeError,
            r"option csp must be a ResourceCsp\(\.\.\.\)",
        ),
        (
            {"prefers_border": "yes"},
            TypeError,
            r"option prefers_border: 'yes' is not one of True, False, None \(did you mean 'True'",
        ),
        (
            {"permissions": {"camara": True}},
            ValueError,
            r"option permissions key: 'camara' is not one of camera, .* \(did you mean 'camera'",
        ),
        (
            {"permissions": {"camera": "no"}},
            TypeError,
            r"option permissions camera: 'no' is not one of True, False \(did you mean 'False'",
        ),
        ({"domain": "a b"}, ValueError, r"option ui\.domain 'a b' must be a non-empty string"),
        ({"title": 3}, TypeError, r"option title must be a string, not 3"),
    ],
)
def test_a_bad_option_value_names_the_resource_option_and_closest(
    options: JSON, error: type[Exception], message: str
) -> None:
    server, ui = _ui()
    with pytest.raises(error, match=WHERE + message) as bad:
        ui.resource(URI, html="<p>hi</p>", **options)
    if "conectDomains" in str(options):
        assert f"`ValueError: {bad.value}`" in STARTUP_TABLE
    assert not server.resources


def test_an_unknown_option_names_the_apps_decorator_and_its_options() -> None:
    server, ui = _ui()
    with pytest.raises(
        TypeError,
        match=r"^AppsExtension\.resource\(\): unknown option 'all_of_scopes'; the options are "
        r"name, .*csp \(AppsExtension\.resource\).*extension installed",
    ):
        ui.resource(URI, html="<p>", all_of_scopes=["notes:read"])
    with pytest.raises(TypeError, match=r"unknown option 'prefer_border' \(did you mean "):
        ui.resource(URI, html="<p>", prefer_border=True)
    with pytest.raises(TypeError, match=r"unknown option 'mime_type'"):
        ui.resource(URI, html="<p>", mime_type="text/plain")
    assert not server.resources


@pytest.mark.anyio
async def test_good_options_reach_the_wire_and_extension_options_reach_the_extension() -> None:
    server, ui = _ui()
    seen: list[tuple[str, str, JSON]] = []
    server.add_options(
        ExtensionOptions(
            "example-ext",
            {"needs": list},
            lambda kind, key, item, values: seen.append((kind, key, values)),
            frozenset({"resource"}),
        )
    )
    ui.resource(
        URI,
        html="<p>hi</p>",
        csp={"connectDomains": ["https://api.example"], "frame_domains": ["https://f.example"]},
        permissions={"clipboardWrite": True},
        prefers_border=False,
        needs=["notes:read"],
        meta={"k": 1},
    )
    ui.resource(
        "ui://notes/other", html="<p>", csp=ResourceCsp(connect_domains=["https://b.example"])
    )
    assert seen == [("resource", URI, {"needs": ["notes:read"]})]
    async with Client(server, extensions=UI) as client:
        listed = {str(r.uri): r for r in await client.list_resources()}
    meta = listed[URI].meta or {}
    assert meta["k"] == 1
    assert meta["ui"] == {
        "csp": {"connectDomains": ["https://api.example"], "frameDomains": ["https://f.example"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": False,
    }
    assert (listed["ui://notes/other"].meta or {})["ui"]["csp"] == {
        "connectDomains": ["https://b.example"]
    }
