"""The distribution installs alone: its dependencies are importable next to core."""

from __future__ import annotations

import importlib


def test_dependencies_importable() -> None:
    for name in ("mcpkit.ext.auth", "mcpkit.core", "authlib", "joserfc", "jwt", "httpx2"):
        assert importlib.import_module(name) is not None
