"""The view's CSP and ``allow`` attribute: the spec's restrictive default, declared
domains added only where declared, and hostile metadata never loosening the policy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from ui_host_helpers import (
    build_app_server,
)

from mcpkit.client import Client
from mcpkit.ext.ui.host import (
    DEFAULT_CSP,
    AppHost,
    AppResourceError,
    HostLimits,
    build_allow,
    build_csp,
    check_origin,
    client_extension,
    sanitize_csp,
)
from mcpkit.ext.ui.host.csp import sanitize_permissions

JSON = dict[str, Any]
SPEC_DEFAULT = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)


def directives(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in policy.split(";"):
        name, *values = part.split()
        assert name not in out, f"directive {name} twice"
        out[name] = values
    return out


def test_default_is_the_specs_restrictive_policy_plus_the_sandbox_rules() -> None:
    assert DEFAULT_CSP.startswith(SPEC_DEFAULT)
    d = directives(DEFAULT_CSP)
    assert d["frame-src"] == ["'none'"]
    assert d["object-src"] == ["'none'"]
    assert d["base-uri"] == ["'self'"]
    assert "font-src" not in d  # falls back to default-src 'none'


def test_declared_domains_land_only_in_their_directives() -> None:
    domains = sanitize_csp(
        {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://cdn.example.com", "https://*.static.example.com"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://base.example.com"],
        }
    )
    assert domains.rejected == ()
    d = directives(build_csp(domains))
    res = ["https://cdn.example.com", "https://*.static.example.com"]
    assert d["script-src"] == ["'self'", "'unsafe-inline'", *res]
    assert d["style-src"] == ["'self'", "'unsafe-inline'", *res]
    assert d["img-src"] == ["'self'", "data:", *res]
    assert d["media-src"] == ["'self'", "data:", *res]
    assert d["font-src"] == res
    assert d["connect-src"] == ["https://api.example.com", "wss://live.example.com"]
    assert d["frame-src"] == ["https://www.youtube.com"]
    assert d["base-uri"] == ["https://base.example.com"]
    assert d["default-src"] == ["'none'"]
    assert d["object-src"] == ["'none'"]


def test_loopback_http_origins_are_accepted_and_normalized() -> None:
    # kind-ok: fixed-port parsed only, never served
    assert check_origin("http://127.0.0.1:8123/") == "http://127.0.0.1:8123"
    assert check_origin("HTTPS://API.Example.COM") == "https://api.example.com"
    # kind-ok: fixed-port parsed only, never served
    assert check_origin("ws://localhost:9000") == "ws://localhost:9000"


@pytest.mark.parametrize(
    "value",
    [
        "*",
        "https://*",
        "https://*.com",
        "'self'",
        "'unsafe-eval'",
        "'unsafe-inline'",
        "data:",
        "blob:",
        "javascript:alert(1)",
        "https:",
        "http://evil.example.com",
        "ftp://files.example.com",
        "https://a.example.com/path",
        "https://a.example.com?x=1",
        "https://user@a.example.com",
        "https://a.example.com:99999",
        "https://a.example.com:*",
        "https://a.example.com; script-src *",
        "https://a.example.com,https://b.example.com",
        "https://a.example.com 'unsafe-eval'",
        " https://a.example.com",
        "https://a.example.com\n",
        "https://a..example.com",
        "https://-a.example.com",
        "https://" + "a" * 300 + ".com",
        "",
    ],
)
def test_hostile_origins_are_dropped_and_never_reach_the_policy(value: str) -> None:
    domains = sanitize_csp({field: [value] for field in ("connectDomains", "resourceDomains")})
    assert domains.connect == ()
    assert domains.resource == ()
    assert len(domains.rejected) == 2
    policy = build_csp(domains)
    assert policy == DEFAULT_CSP
    if value.strip():
        assert value.strip() not in policy or value.strip() in DEFAULT_CSP


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("connectDomains", "https://*.example.com"),
        ("frameDomains", "https://*.example.com"),
        ("baseUriDomains", "https://*.example.com"),
    ],
)
def test_wildcards_are_allowed_only_in_resource_domains(field: str, value: str) -> None:
    domains = sanitize_csp({field: [value]})
    assert domains.to_wire() == {}
    assert "wildcards" in domains.rejected[0]
    assert sanitize_csp({"resourceDomains": [value]}).resource == (value,)


@pytest.mark.parametrize("raw", ["https://a.example.com", 42, [1, None], {"x": 1}])
def test_malformed_csp_shapes_give_the_default(raw: Any) -> None:
    assert build_csp(sanitize_csp(raw)) == DEFAULT_CSP
    assert build_csp(sanitize_csp({"connectDomains": raw})) == DEFAULT_CSP


def test_at_most_max_domains_origins_per_field_are_kept() -> None:
    many = [f"https://h{n}.example.com" for n in range(40)]
    domains = sanitize_csp({"connectDomains": many}, max_domains=32)
    assert domains.connect == tuple(many[:32])
    assert len(domains.rejected) == 8


def test_allow_attribute_grants_only_declared_known_permissions() -> None:
    granted = sanitize_permissions(
        {"camera": {}, "clipboardWrite": {}, "microphone": True, "usb": {}, "geolocation": None}
    )
    assert granted == ("camera", "clipboardWrite")
    assert build_allow(granted) == "camera; clipboard-write"
    assert build_allow(sanitize_permissions("camera")) == ""


# -- through AppHost ---------------------------------------------------------------------
@pytest.fixture
async def hostile_client() -> AsyncIterator[Client]:
    meta: JSON = {
        "ui": {
            "csp": {
                "connectDomains": ["*", "https://ok.example.com", "'unsafe-eval'"],
                "resourceDomains": ["data:", "https://cdn.example.com; connect-src *"],
            },
            "permissions": {"camera": {}, "geolocation": "yes"},
            "domain": "evil.example.com/../x",
            "prefersBorder": "yes",
        }
    }
    async with Client(build_app_server(app_meta=meta), extensions=[client_extension()]) as c:
        yield c


@pytest.mark.anyio
async def test_apphost_builds_the_policy_from_hostile_metadata_without_loosening(
    hostile_client: Client,
) -> None:
    host = AppHost(hostile_client, tool_name="show_weather")
    assert host.content_security_policy() == DEFAULT_CSP  # before load
    resource = await host.load()
    d = directives(host.content_security_policy())
    assert d["connect-src"] == ["https://ok.example.com"]
    assert d["script-src"] == ["'self'", "'unsafe-inline'"]
    assert "'unsafe-eval'" not in host.content_security_policy()
    assert host.allow_attribute() == "camera"
    assert resource.domain is None
    assert resource.prefers_border is None
    assert len(resource.rejected) == 5
    params = host.sandbox_resource_ready_params()
    assert params["csp"] == {"connectDomains": ["https://ok.example.com"]}
    assert params["permissions"] == {"camera": {}}
    # The inner View frame's sandbox: never allow-same-origin (csp.py rule 6), which is
    # only for the outer proxy frame (spec §Sandbox proxy rule 2).
    assert params["sandbox"] == "allow-scripts allow-forms"
    assert "allow-same-origin" not in params["sandbox"].split()
    assert resource.sandbox_resource_ready_params("allow-scripts  allow-modals")["sandbox"] == (
        "allow-scripts allow-modals"
    )
    for asked in ("allow-scripts allow-same-origin", "ALLOW-SAME-ORIGIN"):
        with pytest.raises(ValueError, match="allow-same-origin"):
            resource.sandbox_resource_ready_params(asked)


@pytest.mark.anyio
async def test_apphost_with_no_csp_metadata_uses_the_default() -> None:
    async with Client(build_app_server(app_meta={}), extensions=[client_extension()]) as c:
        host = AppHost(c, tool_name="show_weather")
        resource = await host.load()
        assert host.content_security_policy() == DEFAULT_CSP
        assert host.allow_attribute() == ""
        assert "csp" not in host.sandbox_resource_ready_params()
        assert resource.rejected == ()


@pytest.mark.anyio
async def test_an_oversized_app_document_is_refused() -> None:
    server = build_app_server(html="<p>" + "x" * 5000 + "</p>")
    async with Client(server, extensions=[client_extension()]) as c:
        host = AppHost(c, tool_name="show_weather", limits=HostLimits(max_html_bytes=4096))
        with pytest.raises(AppResourceError, match="larger than 4096 bytes"):
            await host.load()
