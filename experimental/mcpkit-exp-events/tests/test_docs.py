"""Every Python example in ``docs/extensions/events.md`` runs: the source is served over
real HTTP on loopback and the poll and push examples run against it; the push example
runs again over the in-memory transport and resumes from the cursor it saved."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import serve_http

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "events.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")
RUN = {"source", "poll", "push"}
WEBHOOK_RUN = {"webhook-server", "webhook-client", "redis"}  # tests/on_redis/test_webhook_docs.py
SIGN_RUN = {"identity-server", "identity-receiver"}  # tests/hooks/test_identity_docs.py
RECEIVER_RUN = {"webhook-receiver"}  # tests/hooks/test_webhook_receiver_docs.py
AUTHZ_RUN = {"authz"}  # tests/test_authz_docs.py

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        if lang == "python":
            m = MARKER.match(code)
            assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
            found[m.group(1)] = code
    return found


def load(name: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": f"docs_events_{name}"}
    exec(compile(examples()[name], f"<docs-example {name}>", "exec"), ns)
    return ns


def test_every_example_is_run_here() -> None:
    assert set(examples()) == RUN | WEBHOOK_RUN | SIGN_RUN | RECEIVER_RUN | AUTHZ_RUN


def test_the_source_is_under_20_lines() -> None:
    code = examples()["source"]
    lines = [line for line in code.splitlines()[1:] if line.strip()]
    assert len(lines) < 20, len(lines)


async def test_poll_and_push_examples_over_http() -> None:
    source = load("source")
    async with serve_http(source["server"]) as url:
        assert await load("poll")["poll_deploys"](url) == [{"service": "api", "version": "1.2"}]
        versions, cursor = await load("push")["stream_deploys"](url, 3)
        assert versions == ["2.0", "2.1", "2.2"]
        assert cursor is not None


async def test_push_example_in_memory_and_the_saved_cursor_resumes() -> None:
    from mcpkit.client import Client
    from mcpkit.experimental.events import EventsClient

    source = load("source")
    server = source["server"]
    versions, cursor = await load("push")["stream_deploys"](server, 2)
    assert versions == ["2.0", "2.1"]
    await source["finished"].emit({"service": "api", "version": "3.0"})
    async with (
        Client(server, mode="modern") as client,
        EventsClient(client).stream("deploy.finished", cursor=cursor) as stream,
    ):
        with anyio.fail_after(10):
            async for event in stream:
                assert event.data["version"] == "3.0"
                break
