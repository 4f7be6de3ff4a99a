"""The system chromium runs a page's script under Playwright."""

from __future__ import annotations

from playwright.sync_api import Browser


def test_chromium_runs_script(browser: Browser) -> None:
    page = browser.new_page()
    page.set_content(
        "<p id=x></p><script>document.getElementById('x').textContent = 6 * 7</script>"
    )
    assert page.text_content("#x") == "42"
    page.close()
