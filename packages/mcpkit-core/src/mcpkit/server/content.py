"""Content helpers: ``Image``, ``Audio`` and ``File`` for tool and resource return values.

Spec: 2025-11-25 ``server/tools`` §Tool Result (image, audio and embedded resource
content); ``server/resources`` §Resource Contents. The same blocks exist on 2026-07-28.

Rules:
1. Each helper is built from a path (``str`` or ``os.PathLike``) or from ``bytes``
   (positionally, or as ``path=`` / ``data=``); exactly one of them. A path is read
   when the helper is built, so a missing file raises ``OSError`` inside the tool,
   which is then an ordinary tool failure.
2. The MIME type is ``mime_type=`` when given, else the one ``format=`` (FastMCP's
   option: ``Image(data=raw, format="png")`` is ``image/png``) names, else guessed from
   the path's suffix
   (:mod:`mimetypes`), else, for ``bytes``, from the leading magic bytes of the common
   image and audio formats. When none of these finds one, ``Image``/``Audio`` raise
   ``ValueError`` asking for ``mime_type=``; ``File`` uses
   ``application/octet-stream``.
3. ``Image`` becomes an ``image`` content block and ``Audio`` an ``audio`` block, with
   the bytes base64-encoded in ``data``.
4. ``File`` becomes an embedded resource (``{"type": "resource", "resource": {...}}``),
   not a ``resource_link``: a link only names a URI the client must then read with
   ``resources/read``, which works only for URIs the server serves, while an embedded
   resource carries the bytes, so any client can show or save it. Its ``uri`` is
   ``uri=`` when given, else the file's absolute ``file://`` URI, else
   ``file:///<name>`` (``name=``, default ``file``) for bytes. Contents whose MIME type
   is textual (``text/*``, JSON, XML, YAML, JavaScript) and that decode as UTF-8 are sent
   as ``text``, anything else as a base64 ``blob``.
5. Returned from a resource function, each helper becomes one resource contents entry
   for the URI being read (``blob``, or ``text`` for textual ``File`` contents, rule 4).
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from mcpkit.core.shapes import JSON

__all__ = ["Audio", "ContentHelper", "File", "Image"]


_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"WAVE", 8, "audio/wav"),
    (b"ID3", 0, "audio/mpeg"),
    (b"\xff\xfb", 0, "audio/mpeg"),
    (b"OggS", 0, "audio/ogg"),
    (b"fLaC", 0, "audio/flac"),
)
_TEXTUAL = ("application/json", "application/xml", "application/yaml", "text/javascript")


def _sniff(data: bytes) -> str | None:
    for magic, offset, mime in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return mime
    return None


def _is_textual(mime: str) -> bool:
    return mime.startswith("text/") or mime in _TEXTUAL or mime.endswith(("+json", "+xml"))


def _from_format(kind: str, format: str | None) -> str | None:
    """Rule 2: the MIME type ``format=`` names (``"png"``: ``image/png`` for an image,
    ``"jpg"``: ``image/jpeg``, ``"wav"``: ``audio/wav`` for audio; for a file, the type of
    that suffix; a full MIME type as is)."""
    if not format:
        return None
    if "/" in format:
        return format
    if kind in ("image", "audio"):
        sub = format.lower()
        return f"{kind}/{'jpeg' if sub == 'jpg' else sub}"
    return mimetypes.guess_type(f"file.{format}")[0]


class ContentHelper:
    """Base of :class:`Image`, :class:`Audio` and :class:`File` (rules 1, 2).

    ``data`` (bytes), ``mime_type`` (str) and ``path`` (the source file, or None) are
    read-only by convention. ``annotations`` and ``meta`` go to the block as
    ``annotations`` and ``_meta``.
    """

    __slots__ = ("annotations", "data", "meta", "mime_type", "path")
    kind: ClassVar[str] = "content"
    default_mime: ClassVar[str | None] = None

    def __init__(
        self,
        source: str | os.PathLike[str] | bytes | None = None,
        /,
        *,
        path: str | os.PathLike[str] | None = None,
        data: bytes | None = None,
        mime_type: str | None = None,
        format: str | None = None,  # FastMCP's name for it
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        mime_type = mime_type or _from_format(self.kind, format)
        given = [x for x in (source, path, data) if x is not None]
        name = type(self).__name__
        if len(given) != 1:
            raise TypeError(
                f"{name}() takes one source: a path or bytes, e.g. {name}('chart.png') or "
                f"{name}(data=png_bytes, mime_type='image/png')"
            )
        raw = given[0]
        if isinstance(raw, (bytes, bytearray, memoryview)):
            self.path: Path | None = None
            self.data = bytes(raw)
        else:
            try:
                self.path = Path(raw)
            except TypeError:
                raise TypeError(
                    f"{name}() takes a path (str, os.PathLike) or bytes, not {raw!r}"
                ) from None
            self.data = self.path.read_bytes()
        guessed = mimetypes.guess_type(self.path.name)[0] if self.path is not None else None
        mime = mime_type or guessed or _sniff(self.data) or self.default_mime
        if mime is None:
            raise ValueError(
                f"{name}(): cannot tell the MIME type of these bytes; pass mime_type=, "
                f"e.g. {name}(data, mime_type='{self.kind}/png')"
            )
        self.mime_type: str = mime
        self.annotations = dict(annotations) if annotations else None
        self.meta = dict(meta) if meta else None

    def _b64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def _decorate(self, block: JSON) -> JSON:
        if self.annotations:
            block["annotations"] = self.annotations
        if self.meta:
            block["_meta"] = self.meta
        return block

    def to_block(self) -> JSON:
        """The content block (rules 3, 4)."""
        return self._decorate({"type": self.kind, "data": self._b64(), "mimeType": self.mime_type})

    def resource_contents(self, uri: str) -> JSON:
        """One ``resources/read`` contents entry for ``uri`` (rule 5)."""
        return {"uri": uri, "mimeType": self.mime_type, "blob": self._b64()}

    def __repr__(self) -> str:
        where = str(self.path) if self.path is not None else f"{len(self.data)} bytes"
        return f"{type(self).__name__}({where!r}, mime_type={self.mime_type!r})"


class Image(ContentHelper):
    """An ``image`` content block from a path or bytes: ``Image("chart.png")``,
    ``Image(data=png_bytes)`` (MIME type sniffed), ``Image(raw, mime_type="image/avif")``.
    Raises ``OSError`` for an unreadable path and ``ValueError`` when the MIME type cannot
    be told (rule 2)."""

    __slots__ = ()
    kind = "image"


class Audio(ContentHelper):
    """An ``audio`` content block from a path or bytes: ``Audio("note.wav")``,
    ``Audio(data=wav_bytes, mime_type="audio/wav")``. Errors as :class:`Image`."""

    __slots__ = ()
    kind = "audio"


class File(ContentHelper):
    """A file sent as an embedded resource (rule 4): ``File("report.pdf")``,
    ``File(data=csv_bytes, name="rows.csv")`` (MIME type from ``name``), or with an
    explicit ``uri=``."""

    __slots__ = ("uri",)
    kind = "resource"
    default_mime = "application/octet-stream"

    def __init__(
        self,
        source: str | os.PathLike[str] | bytes | None = None,
        /,
        *,
        path: str | os.PathLike[str] | None = None,
        data: bytes | None = None,
        mime_type: str | None = None,
        format: str | None = None,  # FastMCP's name for it
        name: str | None = None,
        uri: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        mime_type = mime_type or _from_format(self.kind, format)
        if mime_type is None and name is not None:
            mime_type = mimetypes.guess_type(name)[0]
        super().__init__(
            source, path=path, data=data, mime_type=mime_type, annotations=annotations, meta=meta
        )
        if uri is None:
            if self.path is not None:
                uri = self.path.resolve().as_uri()
            else:
                uri = "file:///" + quote(name or "file")
        self.uri: str = uri

    def resource_contents(self, uri: str) -> JSON:
        entry: JSON = {"uri": uri, "mimeType": self.mime_type}
        if _is_textual(self.mime_type):
            try:
                entry["text"] = self.data.decode("utf-8")
                return entry
            except UnicodeDecodeError:
                pass
        entry["blob"] = self._b64()
        return entry

    def to_block(self) -> JSON:
        return self._decorate({"type": "resource", "resource": self.resource_contents(self.uri)})
