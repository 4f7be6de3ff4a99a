"""The browser: Debian's chromium (``MCPKIT_CHROMIUM``, set by the nox session), launched
by Playwright headless and offline; a missing browser is an error, never a skip."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = os.environ.get("MCPKIT_CHROMIUM") or "/usr/bin/chromium"
    if not os.path.exists(executable):
        raise RuntimeError(f"no chromium at {executable}: run `uv run nox -s ext-ui-browser`")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()
