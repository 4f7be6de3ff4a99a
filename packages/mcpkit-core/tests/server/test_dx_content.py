"""Content helpers (issue 13 §1, ``server/content.py``): ``Image``, ``Audio`` and
``File`` from a path or bytes, MIME type guessed, as tool returns (alone and in lists)
and as resource returns."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from peer import connect

from mcpkit.server import Audio, File, Image, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x00\x00\x00\x00WAVEfmt "


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_mime_types_come_from_the_suffix_the_bytes_or_the_caller(tmp_path: Path) -> None:
    jpg = tmp_path / "photo.jpg"
    jpg.write_bytes(b"not really a jpeg")
    assert Image(jpg).mime_type == "image/jpeg"
    assert Image(str(jpg)).mime_type == "image/jpeg"
    assert Image(path=jpg).data == b"not really a jpeg"
    assert Image(PNG).mime_type == "image/png"
    assert Image(data=PNG, mime_type="image/avif").mime_type == "image/avif"
    assert Audio(WAV).mime_type == "audio/wav"
    assert File(b"a,b\n", name="rows.csv").mime_type == "text/csv"
    assert File(b"\x00\x01").mime_type == "application/octet-stream"
    with pytest.raises(ValueError, match="mime_type="):
        Image(b"unknown bytes")
    with pytest.raises(TypeError, match="one source"):
        Image()
    with pytest.raises(TypeError, match="one source"):
        Image(PNG, data=PNG)
    with pytest.raises(TypeError, match="path"):
        Image(42)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        Image(tmp_path / "missing.png")


def test_fastmcp_format_option_names_the_mime_type() -> None:
    # FastMCP's spelling: Image(data=raw, format="png"); it used to be a TypeError
    # (unexpected keyword argument 'format') for a FastMCP user's first image tool.
    raw = b"bytes of no known format"
    assert Image(data=raw, format="png").mime_type == "image/png"
    assert Image(raw, format="JPG").mime_type == "image/jpeg"
    assert Audio(data=raw, format="mp3").mime_type == "audio/mp3"
    assert File(data=raw, format="csv").mime_type == "text/csv"
    assert File(data=raw, format="pdf").to_block()["resource"]["mimeType"] == "application/pdf"
    assert Image(PNG, format="image/webp").mime_type == "image/webp"
    assert Image(PNG, format="gif", mime_type="image/avif").mime_type == "image/avif"


def test_blocks_have_the_spec_shapes(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# hi\n", encoding="utf-8")
    assert Image(PNG, annotations={"audience": ["user"]}).to_block() == {
        "type": "image",
        "data": b64(PNG),
        "mimeType": "image/png",
        "annotations": {"audience": ["user"]},
    }
    assert Audio(WAV).to_block() == {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}
    assert File(notes).to_block() == {
        "type": "resource",
        "resource": {
            "uri": notes.resolve().as_uri(),
            "mimeType": "text/markdown",
            "text": "# hi\n",
        },
    }
    assert File(b"\xff\xfe", name="my data.bin").to_block() == {
        "type": "resource",
        "resource": {
            "uri": "file:///my%20data.bin",
            "mimeType": "application/octet-stream",
            "blob": b64(b"\xff\xfe"),
        },
    }
    # textual MIME type but not UTF-8: a blob
    assert "blob" in File(b"\xff", name="x.txt").to_block()["resource"]
    assert File(b"{}", uri="mem://x", mime_type="application/json").to_block()["resource"] == {
        "uri": "mem://x",
        "mimeType": "application/json",
        "text": "{}",
    }


async def test_helpers_are_tool_returns_alone_and_in_lists(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    chart.write_bytes(PNG)
    server = Server("s")

    @server.tool
    def picture():  # type: ignore[no-untyped-def]
        return Image(chart)

    @server.tool
    def report():  # type: ignore[no-untyped-def]
        return ["Here it is:", Image(chart), Audio(WAV), File(b"a,b", name="t.csv")]

    @server.tool
    def annotated() -> Image:
        return Image(PNG)

    async with connect(server) as peer:
        alone = await peer.call_tool("picture")
        listed = await peer.call_tool("report")
        typed = await peer.call_tool("annotated")
    image = {"type": "image", "data": b64(PNG), "mimeType": "image/png"}
    assert alone == {"content": [image], "isError": False}
    assert typed == {"content": [image], "isError": False}
    assert listed["content"] == [
        {"type": "text", "text": "Here it is:"},
        image,
        {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"},
        {
            "type": "resource",
            "resource": {"uri": "file:///t.csv", "mimeType": "text/csv", "text": "a,b"},
        },
    ]


async def test_helpers_are_resource_returns() -> None:
    server = Server("s")

    @server.resource("mem://logo")
    def logo() -> Image:
        return Image(PNG)

    @server.resource("mem://table")
    def table() -> File:
        return File(b"a,b", name="t.csv")

    async with connect(server) as peer:
        read_logo = await peer.request("resources/read", {"uri": "mem://logo"})
        read_table = await peer.request("resources/read", {"uri": "mem://table"})
    assert read_logo["contents"] == [
        {"uri": "mem://logo", "mimeType": "image/png", "blob": b64(PNG)}
    ]
    assert read_table["contents"] == [{"uri": "mem://table", "mimeType": "text/csv", "text": "a,b"}]


async def test_helpers_are_prompt_message_content() -> None:
    server = Server("s")

    @server.prompt
    def describe() -> list[Any]:
        return ["Describe this picture:", Image(PNG)]

    async with connect(server) as peer:
        got = await peer.request("prompts/get", {"name": "describe"})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Describe this picture:"}},
        {"role": "user", "content": {"type": "image", "data": b64(PNG), "mimeType": "image/png"}},
    ]
