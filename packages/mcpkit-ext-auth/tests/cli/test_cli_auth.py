"""``mcpkit ls``/``call --auth``: the authorization code flow through the real ``mcpkit``
command, against the development authorization server and a protected server on
loopback, with a stand-in browser (``$BROWSER``) that follows the authorization URL."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cli_helpers import browser_env, mcpkit, serve, whoami_app

from mcpkit.ext.auth.devserver import serve_dev_auth_server

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def protected() -> AsyncIterator[str]:
    async with (
        serve_dev_auth_server(scopes_supported=["mcp:read"]) as auth_server,
        serve(
            lambda base: whoami_app(base, auth_server.issuer, required_scopes=["mcp:read"])
        ) as base,
    ):
        yield f"{base}/mcp"


def browser(tmp_path: Path) -> dict[str, str]:
    return {"BROWSER": browser_env(tmp_path), "FAKE_BROWSER_LOG": str(tmp_path / "browser.log")}


def logins(tmp_path: Path) -> int:
    log = tmp_path / "browser.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


async def test_auth_signs_in_once_and_keeps_tokens_in_the_token_file(tmp_path: Path) -> None:
    tokens = tmp_path / "private" / "tokens.json"
    async with protected() as url:
        first = await mcpkit(
            tmp_path,
            "call",
            url,
            "whoami",
            "--auth",
            "--token-file",
            str(tokens),
            **browser(tmp_path),
        )
        assert first.returncode == 0, first.stderr
        assert first.stdout.decode().startswith("dev-user ")
        assert first.stdout.decode().strip().endswith(" mcp:read")
        assert logins(tmp_path) == 1
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
        stored = json.loads(tokens.read_text())
        assert url in stored  # keyed by the server's resource URI
        again = await mcpkit(
            tmp_path, "ls", url, "--auth", "--token-file", str(tokens), **browser(tmp_path)
        )
        assert again.returncode == 0, again.stderr
        assert "whoami" in again.stdout.decode()
        assert logins(tmp_path) == 1  # the stored token was used: no second sign-in
        assert b"waiting for the authorization" not in again.stderr


async def test_a_login_slower_than_the_probe_bound_still_signs_in(tmp_path: Path) -> None:
    """The login runs inside the first request (the ``server/discover`` probe, bounded by
    10 s by default): a person taking 12 s in the browser must still get in."""
    tokens = tmp_path / "tokens.json"
    async with protected() as url:
        slow = await mcpkit(
            tmp_path,
            "call",
            url,
            "whoami",
            "--auth",
            "--token-file",
            str(tokens),
            FAKE_BROWSER_DELAY_S="12",
            **browser(tmp_path),
        )
        assert slow.returncode == 0, slow.stderr
        assert slow.stdout.decode().startswith("dev-user ")
        assert logins(tmp_path) == 1


async def test_the_token_file_defaults_to_the_environment_then_the_config_dir(
    tmp_path: Path,
) -> None:
    chosen = tmp_path / "from-env.json"
    async with protected() as url:
        by_env = await mcpkit(
            tmp_path, "ls", url, "--auth", MCPKIT_TOKEN_FILE=str(chosen), **browser(tmp_path)
        )
        assert by_env.returncode == 0, by_env.stderr
        assert chosen.exists()
        by_config = await mcpkit(tmp_path, "ls", url, "--auth", **browser(tmp_path))
        assert by_config.returncode == 0, by_config.stderr
        assert (tmp_path / "config" / "mcpkit" / "tokens.json").exists()  # $XDG_CONFIG_HOME


async def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text("{}")
    os.chmod(tokens, 0o644)
    async with protected() as url:
        out = await mcpkit(
            tmp_path, "ls", url, "--auth", "--token-file", str(tokens), **browser(tmp_path)
        )
    assert out.returncode == 2
    err = out.stderr.decode()
    assert "PermissionError" in err
    assert f"chmod 600 {tokens}" in err
    assert "Traceback" not in err
    assert logins(tmp_path) == 0
