"""Running the real ``mcpkit`` command in tests: :func:`mcpkit` (a bounded subprocess of
``python -m mcpkit.cli.main``) and :func:`in_process` (``main(argv)`` in this process,
for commands that only load a file and print)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from demo_process import DemoProcess, demo_process

from mcpkit.cli.main import main

__all__ = ["DEMO", "DemoProcess", "demo_process", "in_process", "mcpkit"]

DEMO = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"
PROCESS_TIMEOUT_S = 120.0
"""Liveness bound of one command (a hang fails the test instead of hanging it)."""
CONNECT = ("--connect-timeout", "60")
"""Client commands under test load: the default 10 s bound is for people, not CI."""


def mcpkit(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT_S,
        check=False,
        input=stdin if stdin is not None else "",
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``mcpkit argv`` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), out.out, out.err
