"""Typed ``_meta.ui`` (meta.py rules 1-5) and the capability reader (capability.py
rule 1), against apps-2026-01-26.mdx §UI Resource Format and §Resource Discovery."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.ui import (
    EXTENSION_ID,
    AppsExtension,
    ResourceCsp,
    ResourcePermissions,
    UiResourceMeta,
    UiToolMeta,
    ui_capability,
)
from mcpkit.server.app import Server


def test_csp_accepts_origins_with_wildcards_and_ports_and_drops_a_trailing_slash() -> None:
    csp = ResourceCsp(
        connect_domains=["https://api.example.com", "wss://rt.example.com:8443/"],
        # kind-ok: fixed-port a CSP domain, never connected
        resource_domains=["https://*.cloudflare.com", "http://127.0.0.1:8000"],
    )
    assert csp.to_wire() == {
        "connectDomains": ["https://api.example.com", "wss://rt.example.com:8443"],
        # kind-ok: fixed-port a CSP domain, never connected
        "resourceDomains": ["https://*.cloudflare.com", "http://127.0.0.1:8000"],
    }


@pytest.mark.parametrize(
    "bad",
    [
        "api.example.com",  # no scheme
        "https://api.example.com/path",  # a path
        "https://api.example.com?q=1",  # a query
        "https://user@api.example.com",  # credentials
        "ftp://files.example.com",  # not a web scheme
        "https://a.*.example.com",  # wildcard not first
        "https://example.com:99999",  # port out of range
        "javascript:alert(1)",
        "",
    ],
)
def test_csp_refuses_what_is_not_an_origin(bad: str) -> None:
    with pytest.raises(ValueError, match=r"csp\.frameDomains"):
        ResourceCsp(frame_domains=[bad])


def test_csp_refuses_a_bare_string_for_a_list() -> None:
    with pytest.raises(ValueError, match="list of origins"):
        ResourceCsp(connect_domains="https://api.example.com")


def test_resource_meta_wire_omits_what_is_unset() -> None:
    assert UiResourceMeta().to_wire() == {}
    assert UiResourceMeta(csp=ResourceCsp(), permissions=ResourcePermissions()).to_wire() == {}
    full = UiResourceMeta(
        csp=ResourceCsp(base_uri_domains=["https://cdn.example.com"]),
        permissions=ResourcePermissions(camera=True, microphone=True, geolocation=True),
        domain="www-example-com.oaiusercontent.com",
        prefers_border=False,
    )
    assert full.to_wire() == {
        "csp": {"baseUriDomains": ["https://cdn.example.com"]},
        "permissions": {"camera": {}, "microphone": {}, "geolocation": {}},
        "domain": "www-example-com.oaiusercontent.com",
        "prefersBorder": False,
    }


@pytest.mark.parametrize("domain", ["", "has space.example.com"])
def test_domain_must_be_a_non_empty_word(domain: str) -> None:
    with pytest.raises(ValueError, match=r"ui\.domain"):
        UiResourceMeta(domain=domain)


@pytest.mark.parametrize(
    "uri", ["https://example.com/view", "ui://", "ui:/view", "ui://a b", "ui://items/{id}"]
)
def test_tool_and_resource_uris_must_be_static_ui_uris(uri: str) -> None:
    with pytest.raises(ValueError, match="UI resource URI"):
        UiToolMeta(resource_uri=uri)
    ui = AppsExtension(Server("s"))
    with pytest.raises(ValueError, match="UI resource URI"):
        ui.resource(uri, html="<!DOCTYPE html>")


@pytest.mark.parametrize("visibility", [[], ["agent"], "model", ["app", "app"]])
def test_visibility_is_a_non_empty_subset_of_model_and_app(visibility: Any) -> None:
    with pytest.raises(ValueError, match="visibility"):
        UiToolMeta(visibility=visibility)


def test_tool_meta_writes_visibility_explicitly_and_the_flat_key_only_with_a_view() -> None:
    assert UiToolMeta().to_meta() == {"ui": {"visibility": ["model", "app"]}}
    assert UiToolMeta("ui://v", ["app"]).to_meta() == {
        "ui": {"resourceUri": "ui://v", "visibility": ["app"]},
        "ui/resourceUri": "ui://v",
    }
    assert not UiToolMeta(visibility=["app"]).model_visible


def test_resource_needs_exactly_one_source(tmp_path: Any) -> None:
    ui = AppsExtension(Server("s"))
    with pytest.raises(TypeError, match="exactly one"):
        ui.resource("ui://v")
    with pytest.raises(TypeError, match="exactly one"):
        ui.resource("ui://v", html="x", path=tmp_path / "x.html")
    with pytest.raises(ValueError, match="not a file"):
        ui.resource("ui://v", path=tmp_path / "missing.html")


def test_app_tool_keeps_other_meta_and_the_ui_keys_win() -> None:
    server = Server("s")
    ui = AppsExtension(server)

    @ui.tool("t", resource_uri="ui://v", meta={"com.example/x": 1, "ui": "overwritten"})
    def t() -> str:  # pyright: ignore[reportUnusedFunction]
        return "x"

    assert server.tools["t"].definition["_meta"] == {
        "com.example/x": 1,
        "ui": {"resourceUri": "ui://v", "visibility": ["model", "app"]},
        "ui/resourceUri": "ui://v",
    }


def test_installing_twice_adds_one_filter_and_one_lifespan() -> None:
    server = Server("s")
    AppsExtension(server)
    filters = len(server.visibility.filters)
    AppsExtension(server)
    assert len(server.visibility.filters) == filters == 1
    assert EXTENSION_ID in server.extensions


@pytest.mark.parametrize(
    ("capabilities", "mime_types"),
    [
        (None, None),
        ({}, None),
        ({"extensions": {}}, None),
        ({"extensions": {EXTENSION_ID: {}}}, ()),  # mimeTypes is REQUIRED: none declared
        ({"extensions": {EXTENSION_ID: True}}, ()),
        ({"extensions": {EXTENSION_ID: {"mimeTypes": "text/html;profile=mcp-app"}}}, ()),
        (
            {"extensions": {EXTENSION_ID: {"mimeTypes": ["text/html;profile=mcp-app", 3]}}},
            ("text/html;profile=mcp-app",),
        ),
    ],
)
def test_ui_capability_reads_mime_types_leniently(
    capabilities: Any, mime_types: tuple[str, ...] | None
) -> None:
    cap = ui_capability(capabilities)
    if mime_types is None:
        assert cap is None
    else:
        assert cap is not None
        assert cap.mime_types == mime_types
        assert cap.renders() == ("text/html;profile=mcp-app" in mime_types)


def test_ui_capability_keeps_unknown_settings() -> None:
    cap = ui_capability({"extensions": {EXTENSION_ID: {"mimeTypes": [], "features": ["x"]}}})
    assert cap is not None
    assert dict(cap.extra) == {"features": ["x"]}


def test_tool_decorator_forms_match_server_tool() -> None:
    server = Server("s")
    ui = AppsExtension(server)

    @ui.tool
    def bare() -> str:
        return "x"

    @ui.tool(name="named", visibility=["app"])
    def other() -> str:
        return "x"

    assert bare() == "x"  # the function is returned unchanged
    assert other() == "x"
    assert set(server.tools) == {"bare", "named"}
    assert server.tools["bare"].definition["_meta"] == {"ui": {"visibility": ["model", "app"]}}
    with pytest.raises(TypeError, match="titel"):

        @ui.tool(titel="misspelt")  # type: ignore[call-overload]
        def misspelt() -> str:  # pyright: ignore[reportUnusedFunction]
            return "x"
