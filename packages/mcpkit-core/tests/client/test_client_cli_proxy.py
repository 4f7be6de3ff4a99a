"""``mcpkit proxy TARGET`` as real processes (issue 14): over stdio fronting an HTTP
``mcpkit demo``, over HTTP fronting a stdio demo, both eras downstream and the upstream
era pinned either way; the proxy's own upstream headers; usage errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from demo_process import demo_process
from http_helpers import serve
from stdio_process import mcpkit_argv

from mcpkit.client import Client
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "modern"]


@pytest.fixture(scope="module")
def demo_url() -> Any:
    with demo_process() as demo:
        yield demo.url


@pytest.mark.parametrize(
    ("era", "upstream"),
    [("legacy", "adaptive"), ("modern", "legacy"), ("legacy", "modern")],
    ids=["same-era", "bridge-modern-to-legacy", "bridge-legacy-to-modern"],
)
async def test_stdio_proxy_fronts_an_http_demo(demo_url: str, era: str, upstream: str) -> None:
    """A stdio-only host reaches a remote HTTP server; pinning the upstream to the other
    era than the host speaks is the era bridge."""
    argv = mcpkit_argv("proxy", demo_url, "--upstream-era", upstream)
    async with Client(argv, mode=era, timeout_s=60) as client:
        names = {tool.name for tool in await client.list_tools()}
        echoed = await client.call_tool("echo", {"text": f"{era} via {upstream}"})
        era_seen = client.era
    assert "echo" in names
    assert echoed.content[0].text == f"{era} via {upstream}"  # type: ignore[union-attr]
    assert era_seen == era


async def test_http_proxy_fronts_a_stdio_server() -> None:
    """``--transport http`` (``mcpkit run``'s options) in front of a command given after
    ``--``; clients of both eras use the same proxy process."""
    upstream = ["--", *mcpkit_argv("demo", "--transport", "stdio")]
    # kind-ok: fixed-port demo_process adds --port 0 to every command
    with demo_process(*upstream, command=("proxy", "--transport", "http")) as front:
        for era in ERAS:
            async with Client(front.url, mode=era, timeout_s=60) as client:
                names = {tool.name for tool in await client.list_tools()}
                echoed = await client.call_tool("echo", {"text": f"{era} over http"})
                assert client.era == era
            assert "echo" in names
            assert echoed.content[0].text == f"{era} over http"  # type: ignore[union-attr]


async def test_upstream_headers_are_the_proxys_own() -> None:
    """``--header`` reaches the HTTP upstream on every request (the proxy's own
    credential); a quoted command line target is split like ``mcpkit ls`` does."""
    upstream = Server("keyed")

    @upstream.tool()
    def key(ctx: Context) -> str:
        headers = ctx.transport.get("headers") or {}
        return str(headers.get("x-api-key"))

    async with serve(upstream.http_app()) as base:
        argv = mcpkit_argv("proxy", f"{base}/mcp", "--header", "X-Api-Key: s3cret")
        async with Client(argv, timeout_s=30) as client:
            got = await client.call_tool("key")
    assert got.content[0].text == "s3cret"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # kind-ok: fixed-port never connected: the command fails on its usage first
        (["http://127.0.0.1:9/mcp", "--header", "no-colon"], "must look like"),
        (["--header", "A: b", "--", "python", "server.py"], "need an http(s):// target"),
        ([""], "empty command"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        mcpkit_argv("proxy", *args), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert done.stdout == ""


def test_proxy_takes_mcpkit_runs_serve_options_and_a_command_after_dashes() -> None:
    from mcpkit.cli.main import build_parser
    from mcpkit.cli.proxy import build_proxy

    parser = build_parser()
    serve_options = ["--transport", "http", "--port", "0", "--stateless"]
    upstream_options = ["--response-mode", "json", "--upstream-era", "modern"]
    served = parser.parse_args(
        # kind-ok: fixed-port parsed only, never served
        ["proxy", "http://127.0.0.1:9/mcp", *serve_options, *upstream_options]
    )
    assert (served.transport, served.port, served.stateless) == ("http", 0, True)
    assert (served.response_mode, served.upstream_era) == ("json", "modern")
    # kind-ok: fixed-port parsed only, never served
    assert served.target == ["http://127.0.0.1:9/mcp"]
    command = parser.parse_args(["proxy", "--timeout", "5", "--", "python", "-m", "x", "--flag"])
    assert command.target == ["python", "-m", "x", "--flag"]
    assert command.transport == "stdio"  # stdio by default
    assert command.upstream_timeout_s == 5.0
    front = build_proxy(parser.parse_args(["proxy", "python -m mcpkit.cli.main demo"]))
    assert front.info["name"]  # a Server, not yet connected (the upstream starts lazily)


ONE_ERA = str(Path(__file__).parent.parent / "proxy" / "one_era_server.py")


def test_an_upstream_era_the_upstream_does_not_speak_stops_the_start() -> None:
    """Issue 26: before, the proxy answered ``initialize`` with no capabilities and every
    call with an error; now it stops at start-up naming the era and the flag. Here the
    mirror case of docs/proxy.md's transcript (run by ``test_docs_proxy``): a handshake-era
    pin before a 2026-07-28-only server, served over HTTP (whose server would otherwise
    report a failed start-up as a traceback)."""
    speaks = "modern"
    serve = ["--transport", "http", "--port", "0"]
    argv = mcpkit_argv(
        "proxy", "--upstream-era", "legacy", *serve, "--", sys.executable, ONE_ERA, speaks
    )
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("mcpkit proxy: the upstream does not speak ")
    assert f"use --upstream-era {speaks} (or adaptive)" in lines[-1]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
