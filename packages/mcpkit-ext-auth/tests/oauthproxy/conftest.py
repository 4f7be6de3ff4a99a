"""Fixtures of the OAuth proxy tests: the anyio backend (helpers: ``proxy_helpers``,
``fake_idp``, on ``sys.path`` because pytest inserts this directory)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
