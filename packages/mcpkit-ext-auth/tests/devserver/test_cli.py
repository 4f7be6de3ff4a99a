"""``python -m mcpkit.ext.auth.devserver``: a real process on 127.0.0.1 that prints its
issuer, serves metadata, honours a pre-registered client, and exits 0 on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

import httpx2
import pytest

from mcpkit.ext.auth.devserver.cli import main


def test_process_prints_issuer_serves_and_stops_on_sigterm() -> None:
    argv = [sys.executable, "-m", "mcpkit.ext.auth.devserver", "--port", "0"]
    argv += ["--scope", "mcp:read", "--client-id", "app", "--client-secret", "pw"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        issuer = proc.stdout.readline().split(": ", 1)[1].strip()
        assert issuer.startswith("http://127.0.0.1:")
        assert proc.stdout.readline().strip() == (
            f"metadata: {issuer}/.well-known/oauth-authorization-server"
        )
        with httpx2.Client(timeout=10) as http:
            doc = http.get(f"{issuer}/.well-known/oauth-authorization-server").json()
            assert doc["issuer"] == issuer
            assert doc["scopes_supported"] == ["mcp:read"]
            token = http.post(
                doc["token_endpoint"], data={"grant_type": "client_credentials"}, auth=("app", "pw")
            )
            assert token.status_code == 200, token.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_issuer_path_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """The option is named by its flag, not the constructor argument (issue 26)."""
    assert main(["--issuer-path", "no-slash"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcpkit auth-server: --issuer-path: start with '/'")
    assert "issuer_path" not in err
