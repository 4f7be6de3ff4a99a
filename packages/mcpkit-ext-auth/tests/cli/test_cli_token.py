"""``mcpkit ls``/``call`` with ``--token``, and the plugin's usage rules, through the real
``mcpkit`` command against a server protected by the resource-server side on loopback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cli_helpers import mcpkit, mcpkit_sync, serve, whoami_app

from mcpkit.ext.auth.server import Principal, StaticTokenValidator

pytestmark = pytest.mark.anyio

TOKEN = "dev-token-0123456789"
DEMO = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"


@pytest.fixture
async def url() -> AsyncIterator[str]:
    validator = StaticTokenValidator(
        {TOKEN: Principal("dev", client_id="cli", scopes=frozenset({"files:read"}))}
    )
    async with serve(
        lambda base: whoami_app(base, "https://as.invalid", validator=validator)
    ) as base:
        yield f"{base}/mcp"


async def test_token_reaches_the_protected_server(url: str, tmp_path: Path) -> None:
    out = await mcpkit(tmp_path, "call", url, "whoami", "--token", TOKEN)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().strip() == "dev cli files:read"
    listed = await mcpkit(tmp_path, "ls", url, "--token", TOKEN, "--mode", "legacy")
    assert listed.returncode == 0, listed.stderr
    assert "whoami" in listed.stdout.decode()


async def test_without_a_token_the_401_fails_the_command(url: str, tmp_path: Path) -> None:
    out = await mcpkit(tmp_path, "call", url, "whoami")
    assert out.returncode == 2
    assert "401" in out.stderr.decode()
    assert out.stdout == b""


async def test_a_401_at_the_shell_names_the_flags_not_the_constructor(
    url: str, tmp_path: Path
) -> None:
    """Issue 26: `mcpkit ls URL` ended with "pass Client(url, auth=...)"."""
    out = await mcpkit(tmp_path, "ls", url)
    err = out.stderr.decode()
    assert out.returncode == 2
    assert "HTTP 401" in err
    assert "sign in with --auth (OAuth in the browser), or send a bearer token with --token" in err
    assert "Client(" not in err
    assert "auth=" not in err
    refused = await mcpkit(tmp_path, "ls", url, "--token", "wrong-token")
    assert "the server refused the --token: get a fresh one, or sign in with --auth" in (
        refused.stderr.decode()
    )


async def test_a_wrong_token_fails_and_is_never_printed(url: str, tmp_path: Path) -> None:
    secret = "not-the-token-but-a-secret-7f3a"
    out = await mcpkit(tmp_path, "call", url, "whoami", "--token", secret)
    assert out.returncode == 2
    assert "401" in out.stderr.decode()
    assert secret not in out.stderr.decode() + out.stdout.decode()


def usage_error(out: subprocess.CompletedProcess[str], message: str) -> None:
    assert out.returncode == 2, out
    assert out.stderr.endswith(f": {message}\n"), out.stderr


def test_usage_errors_of_the_auth_options(tmp_path: Path) -> None:
    # kind-ok: fixed-port never connected: the command fails on its usage first
    url = "http://127.0.0.1:9/mcp"  # never reached: every case fails before connecting
    usage_error(
        mcpkit_sync(tmp_path, "ls", url, "--auth", "--token", "t"), "use one of --auth and --token"
    )
    usage_error(
        mcpkit_sync(tmp_path, "ls", DEMO, "--token", "t"),
        "--auth and --token need an http(s):// target",
    )
    usage_error(mcpkit_sync(tmp_path, "ls", url, "--token", "  "), "--token is empty")
    usage_error(
        mcpkit_sync(tmp_path, "ls", url, "--scope", "a"), "--scope and --token-file go with --auth"
    )


def test_the_plugin_loads_without_warnings_and_documents_its_options(tmp_path: Path) -> None:
    for command in ("ls", "call"):
        out = mcpkit_sync(tmp_path, command, "--help")
        assert out.returncode == 0
        assert out.stderr == ""
        for option in ("--auth", "--token TOKEN", "--scope SCOPE", "--token-file PATH"):
            assert option in out.stdout, (command, option)
    top = mcpkit_sync(tmp_path, "--help")
    assert top.stderr == ""


def test_a_stdio_server_still_works_with_the_plugin_installed(tmp_path: Path) -> None:
    out = mcpkit_sync(tmp_path, "call", DEMO, "echo", '{"text": "plain"}')
    assert (out.returncode, out.stdout, out.stderr) == (0, "plain\n", "")


async def test_a_403_for_a_missing_scope_names_the_scope_flags(tmp_path: Path) -> None:
    validator = StaticTokenValidator(
        {TOKEN: Principal("dev", client_id="cli", scopes=frozenset({"files:read"}))}
    )
    async with serve(
        lambda base: whoami_app(
            base, "https://as.invalid", validator=validator, writer_scope="notes:write"
        )
    ) as base:
        out = await mcpkit(tmp_path, "call", f"{base}/mcp", "add_note", "text=hi", "--token", TOKEN)
    err = out.stderr.decode()
    assert out.returncode == 2, err
    assert "HTTP 403" in err
    assert "sign in again with --auth --scope notes:write" in err
    assert "Client(" not in err
