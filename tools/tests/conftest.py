"""Fixtures of the tools' tests: ``scratch``, a git copy of the workspace's release files
(tools/tests/scratch_repo.py) with git's identity and configuration fixed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scratch_repo import Scratch, git_identity, make


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scratch:
    for key, value in git_identity(tmp_path).items():
        monkeypatch.setenv(key, value)
    (tmp_path / "repo").mkdir()
    return make(tmp_path / "repo")
