"""The uncarried-protection check: a hook without ``protection=`` in shipped code is
flagged; one with it, a spread of options, or one in a test is not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kinds import uncarried_protection


def tree_with(root: Path, rel: str, code: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)
    return root


def test_a_hook_without_protection_in_shipped_code_is_flagged(tmp_path: Path) -> None:
    code = "server.add_request_guard(guard)\nserver.add_http_middleware(wrap)\n"
    root = tree_with(tmp_path, "packages/ext/src/mod.py", code)
    found = list(uncarried_protection.check(root))
    assert [(f.line, f.message) for f in found] == [
        (1, "add_request_guard(...) without protection="),
        (2, "add_http_middleware(...) without protection="),
    ]


def test_protection_none_is_no_protection(tmp_path: Path) -> None:
    # ``protection=None`` is the default spelled out: the hook still cannot be carried.
    code = "server.add_request_guard(guard, protection=None)\n"
    root = tree_with(tmp_path, "packages/ext/src/mod.py", code)
    found = list(uncarried_protection.check(root))
    assert [(f.line, f.message) for f in found] == [
        (1, "add_request_guard(...) without protection="),
    ]


def test_a_hook_with_protection_a_spread_or_in_tests_is_not(tmp_path: Path) -> None:
    good = "server.add_request_guard(guard, protection=p)\nserver.add_http_middleware(w, **o)\n"
    tree_with(tmp_path, "packages/ext/src/mod.py", good)
    tree_with(tmp_path, "packages/ext/tests/test_mod.py", "server.add_request_guard(guard)\n")
    assert list(uncarried_protection.check(tmp_path)) == []


def test_the_repository_has_no_finding() -> None:
    root = Path(__file__).resolve().parents[2]
    assert list(uncarried_protection.check(root)) == []
