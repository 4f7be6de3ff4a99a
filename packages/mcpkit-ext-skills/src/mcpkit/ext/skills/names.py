"""Names, limits and URIs of the Skills extension (``io.modelcontextprotocol/skills``).

Spec: ``modelcontextprotocol/ext-skills`` ``specification/stable/skills.mdx`` (SEP-2640)
§Extension Identifier, §Resource Mapping, §Limits, and the Agent Skills naming rules it
delegates to.

Rules:
1. A skill name is 1-64 characters of lowercase ASCII letters, digits and hyphens, with
   no leading, trailing or consecutive hyphen (Agent Skills §name); a description is a
   non-empty string of at most 1,024 characters (Agent Skills §description).
2. A skill has at most :data:`MAX_RESOURCES_PER_SKILL` (512) files and at most
   :data:`MAX_BYTES_PER_SKILL` (16 MiB) in total, ``SKILL.md`` included (§Limits).
3. A digest is ``sha256:`` and 64 lowercase hex digits of the file's raw bytes
   (§Integrity and Verification); :func:`digest_of` makes one, :func:`is_digest` checks
   one.
4. A URI path segment keeps RFC 3986's unreserved characters, sub-delimiters, ``:``
   and ``@`` (``pchar``); anything else is percent-encoded (:func:`uri_segment`), so a
   file name with a space still has a URI. The first segment after ``scheme://`` is
   the authority, whose ``reg-name`` (RFC 3986 §3.2.2) admits no ``:`` or ``@``: they
   are percent-encoded there too (:func:`uri_authority`), so a directory named
   ``ops@evil.example:443`` never reads as userinfo, host and port.
5. ``SKILL.md`` is ``text/markdown``; other files take the MIME type of their suffix
   (``mimetypes``), else ``text/plain`` for UTF-8 text and
   ``application/octet-stream`` for other bytes (:func:`mime_type_of`).
6. :func:`normal_uri` is the comparison form of a URI a peer sent (RFC 3986 §6.2.2,
   by ``urllib.parse``): the scheme lowercased and every authority and path segment
   percent-decoded and re-encoded as :func:`uri_authority` and :func:`uri_segment` do
   (hex uppercase, unreserved characters never encoded), so ``SKILL.md`` and ``%53KILL.md`` compare
   equal. A URI without ``scheme://``, with a query or fragment, or with an empty,
   ``.`` or ``..`` segment once decoded, is a ``ValueError``.
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
from urllib.parse import quote, unquote_to_bytes, urlsplit

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "EXTENSION_ID",
    "MAX_BYTES_PER_SKILL",
    "MAX_DESCRIPTION_CHARS",
    "MAX_RESOURCES_PER_SKILL",
    "META_PREFIX",
    "SKILL_FILE",
    "SPEC_VERSION",
    "check_skill_name",
    "digest_of",
    "is_digest",
    "is_text",
    "mime_type_of",
    "normal_uri",
    "uri_authority",
    "uri_segment",
]

EXTENSION_ID = "io.modelcontextprotocol/skills"
"""The extension identifier (§Extension Identifier)."""
SPEC_VERSION = "2026-07-28"
"""The base protocol revision the stable Skills page is written against (§Protocol
Revision); carried in core's ``io.mcpkit/extensions`` about-block."""
SKILL_FILE = "SKILL.md"
META_PREFIX = "io.modelcontextprotocol.skills/"
"""The ``_meta`` key prefix for frontmatter fields on skill resources (§Resource Metadata)."""
DIRECTORY_MIME_TYPE = "inode/directory"
MAX_RESOURCES_PER_SKILL = 512
MAX_BYTES_PER_SKILL = 16 * 1024 * 1024
MAX_DESCRIPTION_CHARS = 1024

_NAME = re.compile(r"^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_SEGMENT_SAFE = "!$&'()*+,;=:@-._~"
_AUTHORITY_SAFE = "!$&'()*+,;=-._~"


def check_skill_name(name: object) -> str | None:
    """Rule 1: None when ``name`` is a valid skill name, else why it is not."""
    if not isinstance(name, str):
        return f"the name must be a string, not {type(name).__name__}"
    if not _NAME.match(name):
        return (
            f"{name!r} is not a skill name: 1-64 lowercase letters, digits and hyphens, "
            "no leading, trailing or double hyphen (Agent Skills naming rules)"
        )
    return None


def digest_of(data: bytes) -> str:
    """Rule 3: ``sha256:<64 lowercase hex>`` of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    """Rule 3: whether ``value`` is a well-formed digest string."""
    return isinstance(value, str) and _DIGEST.match(value) is not None


def uri_segment(segment: str) -> str:
    """Rule 4: one path segment as it appears in a URI."""
    return quote(segment, safe=_SEGMENT_SAFE)


def normal_uri(uri: str) -> str:
    """Rule 6: the normalised form of ``uri``; raises ``ValueError``."""
    parts = urlsplit(uri)
    if not parts.scheme or not uri[len(parts.scheme) :].startswith("://"):
        raise ValueError(f"{uri[:200]!r} is not a scheme://authority/path URI")
    if parts.query or parts.fragment or "?" in uri or "#" in uri:
        raise ValueError(f"{uri[:200]!r} has a query or fragment")
    segments = [parts.netloc, *parts.path.split("/")[1:]]
    decoded = [unquote_to_bytes(s) for s in segments]
    if any(d in (b"", b".", b"..") for d in decoded[1:]) or decoded[0] in (b".", b".."):
        raise ValueError(f"{uri[:200]!r} has an empty, '.' or '..' segment")
    path = "".join("/" + quote(d, safe=_SEGMENT_SAFE) for d in decoded[1:])
    return parts.scheme.lower() + "://" + uri_authority(decoded[0]) + path


def uri_authority(segment: str | bytes) -> str:
    """Rule 4: the first segment (the authority) as it appears in a URI."""
    return quote(segment, safe=_AUTHORITY_SAFE)


def is_text(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 text without NUL bytes (served as ``text``, else ``blob``)."""
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def mime_type_of(file_name: str, data: bytes | None = None) -> str:
    """Rule 5: the MIME type served for ``file_name`` (whose bytes are ``data``)."""
    if file_name == SKILL_FILE or file_name.lower().endswith((".md", ".markdown")):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(file_name, strict=False)
    if guessed:
        return guessed
    return "text/plain" if data is not None and is_text(data) else "application/octet-stream"
