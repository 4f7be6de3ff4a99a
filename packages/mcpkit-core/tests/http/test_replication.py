"""mcpkit.server.replication: where the shared secret comes from, and the checks that
refuse a multi-replica setup that cannot work (no Redis needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit.core.versions import MODERN_VERSION
from mcpkit.server import Server, replication
from mcpkit.server.replicas import apply_shared_secret, check_workers
from mcpkit.server.replication import (
    ReplicaModeError,
    SecretError,
    load_secret,
)

HEX = "0123456789abcdef" * 4  # 64 hex digits: 32 bytes


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MCPKIT_SECRET", "MCPKIT_SECRET_FILE", "MCPKIT_STATE_SECRET"):
        monkeypatch.delenv(name, raising=False)


def test_sources_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert load_secret() is None
    monkeypatch.setattr(replication, "_legacy_warned", False)
    monkeypatch.setenv("MCPKIT_STATE_SECRET", HEX)
    with pytest.warns(FutureWarning, match="set MCPKIT_SECRET"):
        assert load_secret() == bytes.fromhex(HEX)  # the older name, read last
    env_file = tmp_path / "env-secret"
    env_file.write_text("a long enough passphrase, read from a file\n")
    monkeypatch.setenv("MCPKIT_SECRET_FILE", str(env_file))
    assert load_secret() == b"a long enough passphrase, read from a file"
    monkeypatch.setenv("MCPKIT_SECRET", HEX.upper())
    assert load_secret() == bytes.fromhex(HEX)  # MCPKIT_SECRET wins over the env file
    given = tmp_path / "given"
    given.write_text("another long enough passphrase here!")
    assert load_secret(secret_file=given) == b"another long enough passphrase here!"
    assert (
        load_secret(b"code wins over everything else, ok") == b"code wins over everything else, ok"
    )


def test_short_placeholder_and_unreadable_secrets(tmp_path: Path) -> None:
    with pytest.raises(SecretError, match="shorter than 32 bytes"):
        load_secret("short")
    with pytest.raises(SecretError, match="placeholder"):
        load_secret(b"k" * 40)
    with pytest.raises(SecretError, match="cannot read the secret file"):
        load_secret(secret_file=tmp_path / "missing")


def test_random_or_placeholder_server_secret_refused() -> None:
    server = Server("s")
    assert not server.sealer.configured
    with pytest.raises(SecretError, match="refuses to start with a random"):
        apply_shared_secret(server, None, why="--workers 2")
    apply_shared_secret(server, bytes.fromhex(HEX), why="--workers 2")
    assert server.sealer.configured
    # the shared secret seals: another process with it opens this one's states
    other = Server("s")
    apply_shared_secret(other, bytes.fromhex(HEX), why="--workers 2")
    token = server.sealer.seal(method="tools/call", digest="d", principal=None, answers={})
    assert other.sealer.open(token, method="tools/call", digest="d", principal=None)["a"] == {}
    assert server.sealer.derive("event-ids") == other.sealer.derive("event-ids")
    with pytest.raises(SecretError, match="placeholder"):
        apply_shared_secret(Server("s", state_secret=b"s" * 32), None, why="Redis configured")
    # a secret set in code is kept
    coded = Server("s", state_secret=bytes(range(32)))
    apply_shared_secret(coded, None, why="Redis configured")
    assert coded.sealer.derive("x") == Server("s", state_secret=bytes(range(32))).sealer.derive("x")


def test_workers_without_redis_refuse_stateful_http() -> None:
    server = Server("s")
    check_workers(server, 1, redis=False, stateless=False)
    check_workers(server, 4, redis=True, stateless=False)
    check_workers(server, 4, redis=False, stateless=True)
    with pytest.raises(ReplicaModeError, match="cannot serve stateful HTTP"):
        check_workers(server, 4, redis=False, stateless=False)
    modern = Server("s")
    modern.supported_versions = (MODERN_VERSION,)
    check_workers(modern, 4, redis=False, stateless=False)
    with pytest.raises(ReplicaModeError, match="at least 1"):
        check_workers(server, 0, redis=False, stateless=True)


def test_replica_errors_say_their_fix_in_code_and_at_the_shell() -> None:
    """Issue 26 (advice for the wrong reader, mirrored): a program calling ``run_http``
    was told ``--secret-file`` / ``--redis``; each reader now gets its own fix."""
    from mcpkit.cli.errors import cli_message

    with pytest.raises(SecretError) as no_secret:
        apply_shared_secret(Server("s"), None, why="2 worker processes")
    with pytest.raises(ReplicaModeError) as no_redis:
        check_workers(Server("s"), 4, redis=False, stateless=False)
    for exc, code, shell in (
        (no_secret.value, "secret_file=PATH", "--secret-file PATH"),
        (no_redis.value, "stateless=True", "--stateless"),
    ):
        assert code in str(exc)
        assert "--" not in str(exc)
        said = cli_message(exc, bare=True)
        assert shell in said
        assert code not in said
