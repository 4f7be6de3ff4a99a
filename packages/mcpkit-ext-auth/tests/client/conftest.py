"""Fixtures for the client-flow tests: the anyio backend. The scripted protected server
and authorization server live in ``oauth_peer.py`` next to this file (this directory is
on ``sys.path`` because pytest inserts the directory of a ``conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
