"""The Skills extension against the official Python SDK (``mcp`` 2.3.0), both directions,
over stdio and Streamable HTTP, on each era the SDK speaks.

``mcp`` 2.3.0 has no Skills support of its own (no ``Skills`` class, no verifier), so:
- its generic client reads our skills: ``skills/list`` and ``skills/get`` sent as
  extension requests, every file read with ``resources/read`` and checked here against
  the entry with ``hashlib``;
- our client reads skills from a server built with its extension API
  (``sdk_skills_server.py``), verifying every read, and refuses a lying one.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import harness  # conformance/harness.py (conftest puts it on sys.path): served processes
import pytest
from mcp import Client as OfficialClient
from mcp import StdioServerParameters
from mcp import types as official
from pydantic import TypeAdapter

from mcpkit.client import Client, StdioTransport
from mcpkit.ext.skills.client import (
    DigestMismatchError,
    SkillEntry,
    list_skills,
    read_skill_file,
    server_supports_skills,
)

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "skills")
SDK_SERVER = str(Path(__file__).resolve().parent / "sdk_skills_server.py")
OURS = [sys.executable, "-m", "mcpkit.cli.main", "skills", "serve", EXAMPLE]
EXTENSION_ID = "io.modelcontextprotocol/skills"
AS_DICT = TypeAdapter(dict[str, Any])


@pytest.fixture(scope="module")
def ours_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``mcpkit skills serve`` over HTTP on port 0; yields the URL it announces."""
    argv = [*OURS, "--transport", "http", "--host", "127.0.0.1", "--port", "0"]
    log = tmp_path_factory.mktemp("ours") / "server.log"
    with harness.served(argv, log) as url:
        yield url


@pytest.fixture(scope="module")
def sdk_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The official SDK's server over HTTP (it takes a port number, never 0): on a free
    port, started again on a fresh one when another process took it in between."""
    log = tmp_path_factory.mktemp("sdk") / "server.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            argv = [sys.executable, SDK_SERVER, "http", str(port)]
            return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    with harness.served_fresh(start, "the official SDK's skills server", log) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def request(client: OfficialClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    sent = official.Request[dict[str, Any], str](method=method, params=params)
    return await client.session.send_request(sent, AS_DICT)


@pytest.mark.parametrize("kind", ["stdio", "http"])
@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_the_official_client_reads_and_checks_our_skills(
    kind: str, mode: str, version: str, ours_http: str
) -> None:
    target: Any = ours_http
    if kind == "stdio":
        target = StdioServerParameters(command=OURS[0], args=OURS[1:], env=dict(os.environ))
    with anyio.fail_after(120):
        async with OfficialClient(target, mode=mode, read_timeout_seconds=30) as client:
            assert client.protocol_version == version
            caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
            assert caps["extensions"][EXTENSION_ID] == {"directoryRead": True}
            assert "resources" in caps
            listed = await request(client, "skills/list", {})
            assert listed["resultType"] == "complete"
            assert [s["frontmatter"]["name"] for s in listed["skills"]] == [
                "refunds",
                "git-workflow",
                "pdf-processing",
            ]
            for entry in listed["skills"]:
                for file in entry["resources"]:
                    read = await client.read_resource(file["uri"])
                    content = read.contents[0]
                    if isinstance(content, official.TextResourceContents):
                        data = content.text.encode()
                    else:
                        data = base64.b64decode(content.blob)  # type: ignore[union-attr]
                    assert len(data) == file["size"]
                    assert "sha256:" + hashlib.sha256(data).hexdigest() == file["digest"]
                got = await request(client, "skills/get", {"uri": entry["uri"]})
                assert got["skill"] == entry
            children = await request(
                client, "resources/directory/read", {"uri": "skill://pdf-processing/templates"}
            )
            assert {c["name"]: c["mimeType"] for c in children["resources"]} == {
                "regional": "inode/directory",
                "invoice.md": "text/markdown",
                "purchase-order.md": "text/markdown",
            }


@pytest.mark.parametrize("kind", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["modern", "adaptive"])
async def test_our_client_verifies_skills_from_an_sdk_server(
    kind: str, mode: str, sdk_http: str
) -> None:
    target: Any = sdk_http
    if kind == "stdio":
        target = StdioTransport(sys.executable, [SDK_SERVER, "stdio"], stderr="capture")
    async with Client(target, mode=mode, probe_timeout_s=30) as client:  # type: ignore[arg-type]
        assert server_supports_skills(client)
        (entry,) = [e async for e in list_skills(client)]
        assert isinstance(entry, SkillEntry)
        assert entry.frontmatter == {
            "name": "sdk-skill",
            "description": "Served by the official SDK",
            "level": 2,
        }
        for file in entry.files or ():
            content = await read_skill_file(client, entry, file.uri)
            assert len(content.data) == file.size


async def test_the_sdk_server_declares_the_extension_on_2026_only() -> None:
    """What the SDK does on the handshake era: no ``capabilities.extensions`` in its
    ``initialize`` result, so a host following the spec does not call ``skills/*``."""
    target = StdioTransport(sys.executable, [SDK_SERVER, "stdio"], stderr="capture")
    async with Client(target, mode="legacy", probe_timeout_s=30) as client:
        assert not server_supports_skills(client)


async def test_our_client_refuses_an_sdk_server_that_lies() -> None:
    target = StdioTransport(
        sys.executable,
        [SDK_SERVER, "stdio"],
        env={**os.environ, "SDK_SKILLS_LIE": "digest"},
        stderr="capture",
    )
    async with Client(target, mode="modern", probe_timeout_s=30) as client:
        (entry,) = [e async for e in list_skills(client)]
        assert isinstance(entry, SkillEntry)
        await read_skill_file(client, entry, entry.uri)
        with pytest.raises(DigestMismatchError):
            await read_skill_file(client, entry, "skill://sdk-skill/guide.md")
