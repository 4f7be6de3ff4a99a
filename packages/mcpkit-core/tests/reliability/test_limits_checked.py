"""Issue 26, "configuration accepted silently": every limits/settings dataclass of core
checks its numbers when it is made (``mcpkit.core.limits`` rule 6), and every numeric
flag of ``mcpkit`` refuses nonsense while parsing (``mcpkit.cli.flags``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpkit.cli.main import build_parser
from mcpkit.client.reconnect import ReconnectPolicy
from mcpkit.core.limits import Limits, check_limits, numeric_fields
from mcpkit.core.remedies import OptionError
from mcpkit.proxy.options import ProxyLimits
from mcpkit.server.redis.settings import RedisSettings

ROOT = Path(__file__).resolve().parents[4]
REQUIRED: dict[type, dict[str, Any]] = {RedisSettings: {"url": "redis://redis.invalid/0"}}


def bad_values(*classes: type) -> list[tuple[type, str, object]]:
    """``(class, field, value)``: for every numeric field, a negative and a wrong type."""
    return [
        (cls, name, bad)
        for cls in classes
        for name, kind, _ in numeric_fields(cls)
        for bad in (-1, True, math.nan if kind is float else 1.5)
    ]


CORE = bad_values(Limits, ProxyLimits, RedisSettings, ReconnectPolicy)


@pytest.mark.parametrize(
    ("cls", "name", "bad"), CORE, ids=[f"{c.__name__}.{n}={b!r}" for c, n, b in CORE]
)
def test_every_numeric_field_refuses_a_negative_and_a_wrong_type(
    cls: type, name: str, bad: object
) -> None:
    """`ProxyLimits(timeout_s=-5)` was accepted (and so on for every class here but
    `Limits`): it failed far away, or never."""
    with pytest.raises(ValueError, match=rf"^{cls.__name__}\.{name}: must be ") as refused:
        cls(**REQUIRED.get(cls, {}), **{name: bad})
    assert isinstance(refused.value, OptionError)
    assert str(refused.value).endswith(f"got {bad!r}")


def test_the_message_names_class_field_value_and_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="ProxyLimits") as refused:
        ProxyLimits(timeout_s=-5)
    assert str(refused.value) == (
        "ProxyLimits.timeout_s: must be a positive, finite number (seconds), got -5"
    )
    with pytest.raises(ValueError, match=r"Limits.max_depth: must be an integer from 1 to 200"):
        Limits(max_depth=201)


def test_zero_none_caps_and_order_are_allowed_only_where_declared() -> None:
    @dataclass(frozen=True)
    class Sample:
        count: int = 1
        idle: int = 0
        ratio: float = 0.5
        rate_per_s: float | None = None
        low_ms: int = 1
        high_ms: int = 2
        flag: bool = False
        name: str = ""

        def __post_init__(self) -> None:
            check_limits(
                self, zero=("idle",), at_most={"ratio": 1}, ordered=[("low_ms", "high_ms")]
            )

    Sample(idle=0, rate_per_s=None, ratio=1.0, low_ms=2, high_ms=2)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"count": 0}, "Sample.count: must be a positive integer, got 0"),
        ({"idle": -1}, "Sample.idle: must be an integer, 0 or more, got -1"),
        ({"ratio": 1.5}, "Sample.ratio: must be a finite number above 0 and at most 1"),
        ({"rate_per_s": 0}, "Sample.rate_per_s: must be a positive, finite number, or None"),
        ({"low_ms": 3}, "Sample.low_ms: must not exceed Sample.high_ms (2), got 3"),
        ({"count": math.inf}, "Sample.count: must be a positive integer, got inf"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=r"^Sample") as refused:
            Sample(**bad)
        assert str(refused.value).startswith(message)


def test_zero_stays_allowed_where_it_means_something() -> None:
    ProxyLimits(max_idle_connections=0, max_cached_pages=0, max_cached_page_bytes=0)
    RedisSettings("redis://redis.invalid/0", health_check_interval_s=0)
    ReconnectPolicy(initial_delay_s=0, max_delay_s=0, jitter=0, max_attempts=0)
    with pytest.raises(ValueError, match=r"ReconnectPolicy\.jitter"):
        ReconnectPolicy(jitter=1.5)


FLAGS = [
    (["demo", "--port", "70000"], "argument --port: 70000 is not in 0..65535"),
    (["demo", "--port", "-1"], "argument --port: -1 is not in 0..65535"),
    (["demo", "--workers", "0"], "argument --workers: must be a positive integer, got 0"),
    (["demo", "--shutdown-grace", "nan"], "argument --shutdown-grace: must be a finite"),
    (["run", "x.py", "--shutdown-grace", "-1"], "argument --shutdown-grace: must be a finite"),
    (["proxy", "--timeout", "0", "http://mcp.invalid/mcp"], "argument --timeout: must be"),
    (["proxy", "--connect-timeout", "inf", "http://mcp.invalid/mcp"], "--connect-timeout: must"),
    (["proxy", "--port", "65536", "http://mcp.invalid/mcp"], "argument --port: 65536 is not"),
    (["ls", "--timeout", "-1", "http://mcp.invalid/mcp"], "argument --timeout: must be a pos"),
    (["call", "--connect-timeout", "0", "http://mcp.invalid/mcp", "t"], "--connect-timeout: mu"),
]


@pytest.mark.parametrize(("argv", "expected"), FLAGS, ids=[" ".join(a[:3]) for a, _ in FLAGS])
def test_a_numeric_flag_refuses_nonsense_while_parsing(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--timeout 0`, `--connect-timeout inf`, `--port -1`, `--shutdown-grace nan` were
    accepted: a request that timed out at once, a wait without end, a bind error."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert expected in capsys.readouterr().err


def test_the_cli_docs_sample_is_what_the_parser_says(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join((ROOT / "docs/cli.md").read_text("utf-8").split())
    documented = re.search(r"`(argument --workers: [^`]+)`", text)
    assert documented is not None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--port", "0", "--workers", "0"])
    assert capsys.readouterr().err.strip().endswith(documented.group(1))
