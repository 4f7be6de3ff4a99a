"""Every Python example in ``docs/extensions/tasks.md`` runs and does what the text says.

Each ```python block starts with ``# docs-example: NAME`` and is executed in a fresh
namespace; ``CHECKS[NAME]`` then exercises what it defined. A block without a marker or
a check fails, so an example cannot be added without being run. The page says its
examples run as is: the server example and the client example also run as the two
programs the page describes, in their own interpreters, over HTTP on loopback.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.ext.tasks import RedisTaskStore, enable_task_results

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "tasks.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")
JSON = dict[str, Any]
Check = Callable[[dict[str, Any], pytest.FixtureRequest], Awaitable[None]]


def examples() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        if lang == "python":
            m = MARKER.match(code)
            found.append((m.group(1) if m else "", code))
    return found


def run(name: str, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_example_{name}"}
    exec(compile(code, f"<docs-example {name}>", "exec"), namespace)
    return namespace


async def publish(params: Any) -> JSON:
    return {"action": "accept", "content": {"publish": True, "env": "prod"}}


async def check_long_running_tool(ns: dict[str, Any], request: pytest.FixtureRequest) -> None:
    async with Client(ns["server"], mode="modern", elicitation=publish) as client:
        sync = await client.call_tool("build_report", {"pages": 1})
        enable_task_results(client)
        waited = await client.call_tool("build_report", {"pages": 2})
    assert sync.content[0].text == "published a 1-page report"  # type: ignore[union-attr]
    assert waited.content[0].text == "published a 2-page report"  # type: ignore[union-attr]


async def check_preamble(ns: dict[str, Any], request: pytest.FixtureRequest) -> None:
    async with Client(ns["server"], mode="modern", elicitation=publish) as client:
        enable_task_results(client)
        first = await client.session.request("tools/call", {"name": "deploy"})
        result = await client.call_tool("deploy")
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"env"}
    assert result.content[0].text == "deployed to prod"  # type: ignore[union-attr]


async def check_client(ns: dict[str, Any], request: pytest.FixtureRequest) -> None:
    (code,) = [c for n, c in examples() if n == "long-running-tool"]
    server = run("long-running-tool", code)["server"]
    assert await ns["transparently"](server) == "published a 2-page report"
    seen = await ns["step_by_step"](server)
    assert seen[0] == "working"
    assert "input_required" in seen
    assert seen[-3:] == ["completed", "published a 2-page report", "cancelled"]


async def check_redis_replicas(ns: dict[str, Any], request: pytest.FixtureRequest) -> None:
    assert isinstance(ns["store"], RedisTaskStore)
    async with Client(ns["server"], mode="modern") as client:
        enable_task_results(client)
        result = await client.call_tool("build_report", {"pages": 3})
    assert result.content[0].text == "built a 3-page report"  # type: ignore[union-attr]
    await ns["store"].aclose()


async def check_no_task(ns: dict[str, Any], request: pytest.FixtureRequest) -> None:
    """The handshake-era client behind a bridging proxy gets the tool's result at once,
    and ``wait`` says no task was made (issue 26)."""
    (code,) = [c for n, c in examples() if n == "long-running-tool"]
    server = run("long-running-tool", code)["server"]
    assert await ns["through_the_bridge"](server) == "published a 1-page report"


CHECKS: dict[str, Check] = {
    "long-running-tool": check_long_running_tool,
    "preamble": check_preamble,
    "client": check_client,
    "no-task": check_no_task,
    "redis-replicas": check_redis_replicas,
}


def test_every_example_has_a_marker_and_a_check() -> None:
    names = [name for name, _ in examples()]
    assert names
    assert all(names), "a ```python block in docs/extensions/tasks.md has no docs-example marker"
    assert sorted(names) == sorted(CHECKS)


def test_the_long_running_tool_fits_in_30_lines() -> None:
    (code,) = [c for n, c in examples() if n == "long-running-tool"]
    assert len(code.splitlines()) < 30


@pytest.mark.parametrize(("name", "code"), examples(), ids=[n for n, _ in examples()])
async def test_docs_example(
    name: str, code: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if name == "redis-replicas":
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_url"))
    await CHECKS[name](run(name, code), request)


# kind-ok: fixed-port the documented port, replaced by a free one before it runs
DOCUMENTED_PORT = 8770


def _announced_port(server: subprocess.Popen[str]) -> int:
    """The port the server example prints once it listens (port 0: any free port)."""
    assert server.stderr is not None
    said: list[str] = []
    for line in server.stderr:  # ends when the server exits
        said.append(line)
        if line.startswith("mcpkit: serving streamable HTTP at "):
            return int(line.rsplit(":", 1)[1].split("/")[0])  # http://127.0.0.1:PORT/mcp
    raise AssertionError(f"the server example exited: {''.join(said)[-2000:]}")


def test_the_server_and_client_examples_run_as_programs() -> None:
    code = dict(examples())
    server_code, client_code = code["long-running-tool"], code["client"]
    # The server example must not take the demo's port (`mcpkit demo` serves 8765).
    assert f"port={DOCUMENTED_PORT}" in server_code
    assert "8765" not in server_code
    assert f"127.0.0.1:{DOCUMENTED_PORT}/mcp" in client_code
    served = server_code.replace(f"port={DOCUMENTED_PORT}", "port=0")
    server = subprocess.Popen(
        [sys.executable, "-c", served],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = _announced_port(server)
        client = subprocess.run(
            [sys.executable, "-c", client_code.replace(f":{DOCUMENTED_PORT}/", f":{port}/")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert client.returncode == 0, client.stderr[-2000:]
    lines = client.stdout.splitlines()
    assert lines[0] == "published a 2-page report"
    steps = ast.literal_eval(lines[1])  # the printed list of statuses
    assert steps[0] == "working"
    assert steps[-3:] == ["completed", "published a 2-page report", "cancelled"]
