"""The documented examples in a real browser: the example app (``mcpkit ui-demo``,
``mcpkit.ext.ui.demo``) and the "Browser bridge" block of ``docs/extensions/ui.md``, each
served over Streamable HTTP and rendered by the host page through the sandbox proxy.

The example app's screenshot (``example-app.png`` in the screenshots directory) is what the
``ui-example-png`` nox session copies to ``docs/extensions/ui-example.png``; the tests
themselves never write a tracked file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import hosting, open_view
from playwright.sync_api import Page, expect

from mcpkit.ext.ui.demo import build_server

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "ui.md"
MARKER = "# docs-example: browser-bridge\n"


def docs_example() -> str:
    """The ```python block of the "Browser bridge" section that starts with MARKER."""
    text = DOC.read_text("utf-8")
    section = text.split("\n## Browser bridge\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    assert len(blocks) == 1, "one python block"
    assert blocks[0].startswith(MARKER), "marked as the browser-bridge example"
    return blocks[0]


@pytest.fixture(scope="module")
def demo_host() -> Iterator[str]:
    with hosting(build_server()) as host:
        yield host


def test_example_app_renders_its_chart_and_stats(
    demo_host: str, sandbox: str, page: Page, screenshots: Path
) -> None:
    values = [3, 7, 4, 9, 6, 11, 8]
    view = open_view(
        page, demo_host, sandbox, "show_chart", {"title": "Requests per day", "values": values}
    )
    expect(view.locator("#title")).to_have_text("Requests per day")
    assert view.locator("#chart rect").count() == len(values)
    button = view.locator("#stats-button")
    expect(button).to_be_enabled()
    button.click()  # the view calls summarize, an app-only tool, through the host
    expect(view.locator("#stats")).to_contain_text("count 7")
    expect(view.locator("#stats")).to_contain_text("max 11")
    page.screenshot(path=str(screenshots / "example-app-page.png"), full_page=True)
    # For the docs: the host page's header and the app, without the message log.
    page.add_style_tag(content="#log { display: none; }")
    box = page.locator("#app").bounding_box()
    assert box is not None
    bottom = box["y"] + box["height"] + 16
    clip = {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": bottom}  # type: ignore[index]
    page.screenshot(path=str(screenshots / "example-app.png"), clip=clip)  # type: ignore[arg-type]


def test_docs_bridge_example_runs_in_the_browser(
    sandbox: str, page: Page, screenshots: Path
) -> None:
    namespace: dict[str, Any] = {"__name__": "docs_notes"}
    exec(compile(docs_example(), "<browser-bridge>", "exec"), namespace)
    with hosting(namespace["server"]) as host:
        view = open_view(page, host, sandbox, "show_notes", {"owner": "Ada"})
        expect(view.locator("#owner")).to_have_text("Ada's notes")
        expect(view.locator("#notes")).to_have_text("none")
        view.locator("#text").fill("buy milk")
        view.locator("#add").click()
        expect(view.locator("#notes")).to_have_text("buy milk")
        assert namespace["notes"] == ["buy milk"]
        view.locator("#share").click()
        shared = page.wait_for_function(
            "() => mcpkitHost.state.events.find("
            "e => e.dir === 'in' && e.message.method === 'ui/message')"
        ).json_value()
        assert shared["message"]["params"] == {
            "role": "user",
            "content": [{"type": "text", "text": "My notes: buy milk"}],
        }
        page.screenshot(path=str(screenshots / "docs-notes.png"), full_page=True)
        page.evaluate("() => mcpkitHost.teardown()")
