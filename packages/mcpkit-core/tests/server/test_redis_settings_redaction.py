"""RedisSettings rule 3: the Redis URL is never shown with a credential in it, whether
the password is in the userinfo or a query parameter (redis-py reads ``?password=``)."""

from __future__ import annotations

import pytest

from mcpkit.server import Server
from mcpkit.server.redis import RedisSettings, replicate
from mcpkit.server.replication import SecretError

PASSWORD = "hunter2-very-secret"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # kind-ok: fixed-port parsed only, never served
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        (f"redis://:{PASSWORD}@h:6379/0", "redis://:***@h:6379/0"),
        (f"redis://ada:{PASSWORD}@h/0", "redis://ada:***@h/0"),
        (f"redis://h:6379/0?password={PASSWORD}", "redis://h:6379/0?password=***"),
        (
            f"redis://h/0?socket_timeout=2&Password={PASSWORD}&db=1",
            "redis://h/0?socket_timeout=2&Password=***&db=1",
        ),
        (f"rediss://h/0?ssl_password={PASSWORD}", "rediss://h/0?ssl_password=***"),
        (f"redis://h/0?auth_token={PASSWORD}&x=1", "redis://h/0?auth_token=***&x=1"),
        (
            f"redis://u:{PASSWORD}@h/0?password={PASSWORD}",
            "redis://u:***@h/0?password=***",
        ),
        (
            f"unix:///run/redis.sock?db=0&password={PASSWORD}",
            "unix:///run/redis.sock?db=0&password=***",
        ),
    ],
)
def test_redacted_url_hides_every_password(url: str, shown: str) -> None:
    settings = RedisSettings(url)
    assert settings.redacted_url() == shown
    assert PASSWORD not in repr(settings)
    assert settings.url == url  # the client still connects with it


def test_startup_error_does_not_print_a_query_password(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MCPKIT_SECRET", "MCPKIT_SECRET_FILE", "MCPKIT_STATE_SECRET"):
        monkeypatch.delenv(name, raising=False)
    # kind-ok: fixed-port parsed only, never served
    url = f"redis://127.0.0.1:6379/0?password={PASSWORD}"
    with pytest.raises(SecretError) as caught:
        replicate(Server("s"), RedisSettings(url))
    assert "password=***" in str(caught.value)
    assert PASSWORD not in str(caught.value)
