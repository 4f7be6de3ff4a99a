"""The browser assets (``mcpkit.ext.ui.static``): read by name only, served with their
types, and shipped in the built wheel. Their behaviour in a browser is tested in
``tests_browser/`` (nox session ``ext-ui-browser``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import httpx2
import pytest

from mcpkit.ext.ui.host.csp import DEFAULT_CSP
from mcpkit.ext.ui.static import (
    ASSETS,
    MAX_CSP_PARAM_BYTES,
    assets_app,
    read_asset,
    sandbox_policy,
)

PACKAGE = Path(__file__).resolve().parents[1]


def test_every_asset_reads_and_nothing_else_does() -> None:
    assert set(ASSETS) == {"bridge.js", "host.html", "host.js", "sandbox.html"}
    for name in ASSETS:
        assert len(read_asset(name)) > 500
    for name in ("__init__.py", "../__init__.py", "static/bridge.js", "BRIDGE.JS"):
        with pytest.raises(KeyError):
            read_asset(name)


def test_bridge_inlines_without_closing_its_script_tag() -> None:
    assert "</script" not in read_asset("bridge.js").lower()
    assert "globalThis" in read_asset("bridge.js")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_assets_app_serves_only_the_names_it_was_given() -> None:
    app = assets_app(["host.html", "host.js"])
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        page = await http.get("/host.html")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["cache-control"] == "no-store"
        assert page.text == read_asset("host.html")
        script = await http.get("/host.js")
        assert script.headers["content-type"] == "text/javascript; charset=utf-8"
        for path in ("/sandbox.html", "/bridge.js", "/__init__.py", "/static/host.js"):
            assert (await http.get(path)).status_code == 404, path
        assert (await http.post("/host.html")).status_code == 405


def test_sandbox_policy_is_built_from_the_sanitized_parameter_and_fails_closed() -> None:
    # kind-ok: fixed-port a declared CSP domain, never connected to
    declared = {"connectDomains": ["http://127.0.0.1:8"], "resourceDomains": ["*", "data:"]}
    policy = sandbox_policy(json.dumps(declared))
    assert "connect-src http://127.0.0.1:8;" in policy  # kind-ok: fixed-port policy text only
    assert "*" not in policy
    assert "data: data:" not in policy
    too_long = json.dumps({"connectDomains": ["https://a.example.com"] * 2000})
    assert len(too_long) > MAX_CSP_PARAM_BYTES
    for raw in (None, "", "{not json", "[1]", '"x"', too_long):
        assert sandbox_policy(raw) == DEFAULT_CSP, raw


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_sandbox_page_always_carries_the_views_policy_header() -> None:
    """Issue 25 §2: the View's policy is the proxy page's response header, which the View's
    srcdoc document inherits; without a ``csp`` parameter it is the restrictive default."""
    transport = httpx2.ASGITransport(app=assets_app(["sandbox.html"]))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        plain = await http.get("/sandbox.html")
        assert plain.headers["content-security-policy"] == DEFAULT_CSP
        csp = json.dumps({"connectDomains": ["https://api.example.com", "'self' *"]})
        declared = await http.get("/sandbox.html", params={"csp": csp, "host": "x"})
        assert declared.headers["content-security-policy"] == sandbox_policy(csp)
        assert "connect-src https://api.example.com;" in declared.headers["content-security-policy"]
        assert "'self' *" not in declared.headers["content-security-policy"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_deeply_nested_csp_parameter_gets_the_default_policy_not_an_error() -> None:
    """A ``csp`` parameter of 16,000 ``[`` (under the byte bound) raised RecursionError out
    of the JSON parser: the sandbox page answered 500 instead of failing closed to the
    restrictive default."""
    nested = "[" * (MAX_CSP_PARAM_BYTES - 1)
    assert sandbox_policy(nested) == DEFAULT_CSP
    transport = httpx2.ASGITransport(app=assets_app(["sandbox.html"]))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        page = await http.get("/sandbox.html", params={"csp": nested})
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == DEFAULT_CSP


def test_the_built_wheel_ships_the_assets(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv builds the wheel (it runs nox)"
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(tmp_path), str(PACKAGE)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("mcpkit_ext_ui-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in ASSETS:
            shipped = f"mcpkit/ext/ui/static/{name}"
            assert shipped in names
            assert archive.read(shipped).decode("utf-8") == read_asset(name)
