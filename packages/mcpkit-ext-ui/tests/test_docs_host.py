"""Every Python example in the "Host" and "ServerRegistry" sections of
``docs/extensions/ui.md`` runs and does what the page says.

Each ```python block in those sections starts with ``# docs-example: NAME``; a block
without a marker, or with a name this test does not run, fails. The minimal host is
served by uvicorn on a free 127.0.0.1 port and driven over real HTTP."""

from __future__ import annotations

import contextlib
import io
import json
import re
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from ui_host_helpers import INIT_PARAMS, notification, request

from mcpkit.ext.ui.host import DEFAULT_CSP, wire

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "ui.md"
SECTIONS = ("Host", "ServerRegistry")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")
pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


def examples() -> dict[str, str]:
    parts = re.split(r"^## (.+)$", DOC.read_text("utf-8"), flags=re.MULTILINE)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    found: dict[str, str] = {}
    for heading in SECTIONS:
        for lang, code in FENCE.findall(sections[heading]):
            if lang == "python":
                m = MARKER.match(code)
                assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
                found[m.group(1)] = code
    return found


def load(name: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": f"docs_{name.replace('-', '_')}"}
    exec(compile(examples()[name], f"<{name}>", "exec"), ns)
    return ns


def test_every_example_of_the_sections_is_run_here() -> None:
    assert list(examples()) == ["minimal-host", "host-by-hand", "registry"]


async def test_the_minimal_host_serves_views_over_the_bridge() -> None:
    ns = load("minimal-host")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        async with (
            anyio.create_task_group() as tg,
            httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=20) as http,
        ):
            tg.start_soon(ns["main"], port)
            with anyio.fail_after(20):
                while True:
                    try:
                        opened = await http.post("/views", json={"toolName": "show_chart"})
                        break
                    except httpx2.TransportError:
                        await anyio.sleep(0.05)
            assert opened.status_code == 201
            view = opened.json()
            assert view["csp"] == DEFAULT_CSP
            assert "<html" in view["html"].lower()
            assert view["sandboxParams"]["html"] == view["html"]
            base = f"/views/{view['viewId']}"
            init = await http.post(
                f"{base}/messages", json=request(1, wire.INITIALIZE, INIT_PARAMS)
            )
            assert init.json()["result"]["protocolVersion"] == "2026-01-26"
            assert "message" in init.json()["result"]["hostCapabilities"]
            done = await http.post(f"{base}/messages", json=notification(wire.INITIALIZED))
            assert done.status_code == 202
            said = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
            reply = await http.post(f"{base}/messages", json=request(2, wire.MESSAGE, said))
            assert reply.json()["result"] == {}
            called = await http.post(
                f"{base}/call", json={"arguments": {"title": "t", "values": [1, 2]}}
            )
            assert called.status_code == 200
            async with http.stream("GET", f"{base}/events") as events:
                methods: list[str] = []
                async for line in events.aiter_lines():
                    if line.startswith("data: "):
                        methods.append(json.loads(line[6:])["method"])
                    if len(methods) == 2:
                        break
            assert methods == [wire.TOOL_INPUT, wire.TOOL_RESULT]
            tg.cancel_scope.cancel()
    assert "the view says: [{'type': 'text', 'text': 'hello'}]" in out.getvalue()


async def test_the_host_driven_by_hand_does_what_the_page_says() -> None:
    ns = load("host-by-hand")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sent = await ns["show_chart"]()
    assert sent == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    lines = out.getvalue().splitlines()
    assert lines[0] == DEFAULT_CSP
    assert "'count': 3" in lines[1]


async def test_the_registry_example_routes_as_the_page_says() -> None:
    ns = load("registry")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        names = await ns["route"]()
    assert names == ["charts__show_chart", "maps__show_chart"]
    assert out.getvalue().splitlines()[0] == "map: Oslo"
