"""``mcpkit run`` refuses a configuration mistake in one line, status 2, on every
transport (:mod:`mcpkit.server.startup`), including those only I/O can find: a proxy
pinned to an era its upstream does not speak (issue 26; before, a traceback, status 0
over stdio and 3 over HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_helpers import in_process

from mcpkit.server import Server
from mcpkit.server.names import NameRuleError
from mcpkit.server.startup import (
    ConfigurationError,
    add_startup_check,
    configuration_error,
    run_startup_checks,
)

ONE_ERA = Path(__file__).resolve().parents[1] / "proxy" / "one_era_server.py"
FRONT = f"""
import sys
from mcpkit.proxy import proxy

server = proxy([sys.executable, {str(ONE_ERA)!r}, "legacy"], mode="modern")
"""


def run_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, transport: str
) -> tuple[int, str]:
    """``mcpkit run`` of a module holding ``source`` on ``transport``: (status, stderr)."""
    app = tmp_path / "app_under_test.py"
    app.write_text(source)
    argv = ["run", str(app), "--transport", transport]
    if transport == "http":
        argv += ["--port", "0"]
    code, _out, err = in_process(capsys, *argv)
    return code, err


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_mcpkit_run_of_a_wrongly_pinned_proxy_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    code, err = run_app(tmp_path, capsys, FRONT, transport)
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[-1].startswith("mcpkit run: the upstream does not speak 2026-07-28"), err
    assert "use proxy(..., mode='legacy')" in lines[-1]
    assert "Traceback" not in err


class Refused(ConfigurationError, ValueError):
    pass


@pytest.mark.anyio
async def test_checks_run_after_the_name_rules_in_order_each_once() -> None:
    server = Server("s")
    ran: list[str] = []

    async def first() -> None:
        ran.append("first")

    async def second() -> None:
        ran.append("second")
        raise Refused("second refuses")

    add_startup_check(server, first)
    add_startup_check(server, first)
    add_startup_check(server, second)
    with pytest.raises(Refused, match="second refuses"):
        await run_startup_checks(server)
    assert ran == ["first", "second"]


def test_a_refusal_is_found_inside_exception_groups() -> None:
    refusal = NameRuleError("rule names nothing")
    nested = ExceptionGroup("outer", [RuntimeError("x"), ExceptionGroup("in", [refusal])])
    assert configuration_error(nested) is refusal
    assert configuration_error(RuntimeError("plain")) is None
    assert isinstance(refusal, ValueError)


def test_the_proxy_registers_its_era_check_only_when_pinned() -> None:
    from mcpkit.proxy import proxy
    from mcpkit.server.attached import peek

    pinned = proxy([sys.executable, str(ONE_ERA), "legacy"], mode="modern")
    adaptive = proxy([sys.executable, str(ONE_ERA), "legacy"])
    assert len(peek(pinned, "mcpkit.server.startup")) == 1
    assert peek(adaptive, "mcpkit.server.startup") is None


PLUGINS = """
from contextlib import asynccontextmanager

from mcpkit.server import Server
from mcpkit.server.names import NamedRule, declare_rules

server = Server("plugins")


@asynccontextmanager
async def plugins(srv):
    srv.add_tool(lambda: "x", name="admin_reset")
    yield


server.add_lifespan(plugins)
declare_rules(server, lambda: [NamedRule("tool", "admin_rest", "guard()", protects=True)])
"""


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_refusal_found_once_the_lifespans_are_entered_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    code, err = run_app(tmp_path, capsys, PLUGINS, transport)
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith("mcpkit run: guard() protects tool 'admin_rest'")
    assert "closest registered tool: 'admin_reset'" in err
    assert "Traceback" not in err
