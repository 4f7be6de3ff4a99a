"""The official TypeScript tasks client drives mcpkit's tasks extension.

``@modelcontextprotocol/ext-tasks`` (with its peer, the TypeScript SDK's
``@modelcontextprotocol/client``; both pinned in ``conformance/toolchain.py``) runs
``interop/ts_tasks_client.mjs`` against the tasks demo (``mcpkit.ext.tasks.demo``) served
over Streamable HTTP on a free loopback port, on each era the client speaks: 2025-11-25
(``initialize``, ``capabilities.tasks``) and 2026-07-28 (``server/discover``, the
``io.modelcontextprotocol/tasks`` extension, SEP-2663). The client must see tasks, get a
task for a task-required call, and settle it ``completed`` with the tool's content.

The old wire shape (issue 25 §10): a 2026-07-28 entry carrying our own ``_meta`` instead
of the empty object SEP-2663 defines. This client then sees no tasks and refuses the
task-required call; the test keeps that on record as the reason the entry is ``{}``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
import pytest
import toolchain
from interop_servers import serve_app

from mcpkit.core.extensions import Extension, Stability
from mcpkit.core.versions import MODERN_VERSIONS
from mcpkit.ext.tasks import EXTENSION_ID
from mcpkit.ext.tasks.demo import build_server
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
SCRIPT = Path(__file__).resolve().parent / "ts_tasks_client.mjs"
ARGUMENTS = {"seconds": 0.3, "label": "ts"}
EXPECTED_TEXT = "ts: computed in 0.3s"


@pytest.fixture(scope="module")
def ts_tasks() -> tuple[str, str]:
    """(the pinned Node 22, the prefix holding ext-tasks and its SDK peer)."""
    toolchain.ensure_tool("ext-tasks")
    return str(toolchain.node_executable()), str(toolchain.parse_tool("ext-tasks").prefix)


@contextlib.asynccontextmanager
async def serve(server: Server) -> AsyncGenerator[str]:
    """``server`` under uvicorn on a free 127.0.0.1 port; yields the endpoint URL."""
    async with serve_app(lambda _: server.http_app()) as base:
        yield f"{base}/mcp"


async def run_client(ts_tasks: tuple[str, str], url: str, era: str) -> JSON:
    """Run the TypeScript tasks client once; return its JSON summary."""
    node, prefix = ts_tasks
    argv = [node, str(SCRIPT), prefix, url, era, "slow_compute", json.dumps(ARGUMENTS)]
    with anyio.fail_after(60):
        done = await anyio.run_process(argv, check=False)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, f"the TypeScript tasks client crashed:\n{stderr}"
    summary: JSON = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return summary


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_ts_tasks_client_runs_a_task_to_completion(
    ts_tasks: tuple[str, str], era: str
) -> None:
    async with serve(build_server()) as url:
        summary = await run_client(ts_tasks, url, era)
    assert "error" not in summary, summary
    if era == "legacy":
        assert summary["protocolEra"] == "legacy"
        assert summary["extensionEntry"] is None
        assert summary["legacyTasksCapability"]["requests"] == {"tools": {"call": {}}}
    else:
        assert summary["protocolEra"] == "modern"
        assert summary["extensionEntry"] == {}
        assert summary["capabilities"]["inputResponses"] is True
    assert summary["capabilities"]["execution"] is True
    assert summary["capabilities"]["cancellation"] is True
    assert summary["kind"] == "task"
    assert isinstance(summary["taskId"], str)
    assert summary["taskId"]
    assert summary["status"] == "completed"
    assert summary["lastTaskStatus"] == "completed"
    assert summary["result"]["content"] == [{"type": "text", "text": EXPECTED_TEXT}]
    assert summary["result"]["isError"] is False


async def test_ts_tasks_client_refuses_tasks_when_the_entry_carries_our_meta(
    ts_tasks: tuple[str, str],
) -> None:
    server = build_server()
    old_entry = {"_meta": {"io.mcpkit/extension": {"specVersion": "2026-07-28"}}}
    server.add_extension(  # the pre-fix advertisement: our metadata inside SEP-2663's object
        Extension(
            EXTENSION_ID,
            spec_version="2026-07-28",
            stability=Stability.EXPERIMENTAL,
            config=old_entry,
            protocol_versions=MODERN_VERSIONS,
        )
    )
    async with serve(server) as url:
        summary = await run_client(ts_tasks, url, "2026-07-28")
    assert summary["protocolEra"] == "modern"
    assert summary["extensionEntry"] == old_entry
    assert summary["capabilities"]["execution"] is False
    assert "taskId" not in summary
    assert "result" not in summary
    assert summary["error"]["message"] == "Task execution was required but is unavailable"
