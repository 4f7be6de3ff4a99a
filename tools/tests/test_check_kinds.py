"""The runner of the fault-kind checks: allow comments need a reason (rule 2)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import _allowed, load_checks


def test_allow_comment_on_the_line_or_above_with_a_reason() -> None:
    lines = ["x = 1  # kind-ok: demo the reason here", "# kind-ok: demo reason above", "y = 2"]
    assert _allowed(lines, 1, "demo") == (True, None)
    assert _allowed(lines, 3, "demo") == (True, None)


def test_allow_comment_for_another_check_or_without_reason_does_not_allow() -> None:
    assert _allowed(["x = 1  # kind-ok: other some reason"], 1, "demo") == (False, None)
    ok, problem = _allowed(["x = 1  # kind-ok: demo"], 1, "demo")
    assert not ok
    assert problem is not None
    assert "reason" in problem
    # a code line above does not lend its comment to the next line
    assert _allowed(["a = 1  # kind-ok: demo a reason", "b = 2"], 2, "demo") == (False, None)


def test_every_check_module_declares_its_name_and_kind() -> None:
    for check in load_checks():
        assert check.NAME
        assert check.NAME.lower() == check.NAME
        assert check.WHAT
