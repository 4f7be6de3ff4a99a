"""Issue 26, "configuration accepted silently": :class:`HostLimits` checks its numbers
when made (``mcpkit.core.limits.check_limits``), and ``mcpkit ui-demo --port`` refuses a
port outside 0..65535 while parsing."""

from __future__ import annotations

import math

import pytest

from mcpkit.cli.main import build_parser
from mcpkit.cli.plugins import load_plugins
from mcpkit.core.limits import numeric_fields
from mcpkit.ext.ui.host.limits import HostLimits

CASES = [
    (name, bad)
    for name, kind, _ in numeric_fields(HostLimits)
    for bad in (0, -1, True, math.inf if kind is float else 1.5)
]


@pytest.mark.parametrize(("name", "bad"), CASES, ids=[f"{n}={b!r}" for n, b in CASES])
def test_every_host_limit_refuses_nonsense(name: str, bad: object) -> None:
    with pytest.raises(ValueError, match=rf"^HostLimits\.{name}: must be .*, got "):
        HostLimits(**{name: bad})  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("value", ["-1", "65536", "http"])
def test_ui_demo_port_is_refused_while_parsing(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser(load_plugins()).parse_args(["ui-demo", "--transport", "http", "--port", value])
    assert exited.value.code == 2
    assert "argument --port: " in capsys.readouterr().err
