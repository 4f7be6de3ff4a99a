"""Issue 26, "configuration accepted silently": the auth extension's settings and limits
check their numbers when made (``mcpkit.core.limits.check_limits``), and its numeric
flags refuse nonsense while parsing: `mcpkit auth-server --token-ttl -5` issued tokens
that were already expired."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from mcpkit.cli.main import build_parser
from mcpkit.cli.plugins import load_plugins
from mcpkit.core.limits import numeric_fields
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.server.settings import AuthSettings, DPoPSettings, ResourceServerLimits

ROOT = Path(__file__).resolve().parents[3]
REQUIRED: dict[type, dict[str, object]] = {AuthSettings: {"server_url": "https://mcp.test/mcp"}}
CASES = [
    (cls, name, bad)
    for cls in (ResourceServerLimits, DPoPSettings, AuthSettings, DevServerLimits)
    for name, kind, _ in numeric_fields(cls)
    for bad in (-1, True, math.nan if kind is float else 1.5)
]


@pytest.mark.parametrize(
    ("cls", "name", "bad"), CASES, ids=[f"{c.__name__}.{n}={b!r}" for c, n, b in CASES]
)
def test_every_numeric_field_refuses_a_negative_and_a_wrong_type(
    cls: type, name: str, bad: object
) -> None:
    with pytest.raises(ValueError, match=rf"^{cls.__name__}\.{name}: must be .*, got "):
        cls(**REQUIRED.get(cls, {}), **{name: bad})


def test_zero_stays_allowed_where_it_is_documented() -> None:
    assert AuthSettings("https://mcp.test/mcp", leeway_s=0).leeway_s == 0
    assert ResourceServerLimits(introspection_ttl_s=0).introspection_ttl_s == 0
    with pytest.raises(ValueError, match=r"DevServerLimits\.access_token_ttl_s"):
        DevServerLimits(access_token_ttl_s=0)


FLAGS = [
    (["auth-server", "--token-ttl", "-5"], "must be a positive integer (seconds), got -5"),
    (["auth-server", "--token-ttl", "0"], "must be a positive integer (seconds), got 0"),
    (["auth-server", "--token-ttl", "1.5"], "'1.5' is not an integer"),
    (["auth-server", "--port", "70000"], "70000 is not in 0..65535"),
    (["ls", "--redirect-port", "-1", "http://mcp.invalid/mcp"], "-1 is not in 0..65535"),
]


@pytest.mark.parametrize(("argv", "expected"), FLAGS, ids=[" ".join(a[:3]) for a, _ in FLAGS])
def test_a_numeric_flag_refuses_nonsense_while_parsing(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser(load_plugins()).parse_args(argv)
    assert exited.value.code == 2
    flag = next(word for word in argv if word.startswith("--"))
    assert f"argument {flag}: {expected}" in capsys.readouterr().err


def test_the_documented_token_ttl_message_is_what_the_parser_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser(load_plugins()).parse_args(["auth-server", "--token-ttl", "-5"])
    said = capsys.readouterr().err.strip().splitlines()[-1]
    table = (ROOT / "docs/server.md").read_text("utf-8")
    documented = re.search(r"`(argument --token-ttl: [^`]+)`", table)
    assert documented is not None
    assert said.endswith(documented.group(1))
