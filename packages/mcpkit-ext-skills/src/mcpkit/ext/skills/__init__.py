"""mcpkit-ext-skills: the Skills extension (``io.modelcontextprotocol/skills``, SEP-2640).

Rules:
1. The extension identifier is ``io.modelcontextprotocol/skills``
   (``modelcontextprotocol/ext-skills``, ``specification/stable/skills.mdx``).
2. The server side (:class:`Skills`) and the frontmatter reader are exported here; the
   client and host side live in :mod:`mcpkit.ext.skills.client` and
   :mod:`mcpkit.ext.skills.host`.
"""

from __future__ import annotations

from mcpkit.ext.skills.catalog import DirectoryCatalog, FileRecord, SkillLoadError, SkillRecord
from mcpkit.ext.skills.frontmatter import FrontmatterError, parse_frontmatter
from mcpkit.ext.skills.names import (
    DIRECTORY_MIME_TYPE,
    EXTENSION_ID,
    MAX_BYTES_PER_SKILL,
    MAX_RESOURCES_PER_SKILL,
    META_PREFIX,
    SPEC_VERSION,
    digest_of,
)
from mcpkit.ext.skills.server import Producer, Skills

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "EXTENSION_ID",
    "MAX_BYTES_PER_SKILL",
    "MAX_RESOURCES_PER_SKILL",
    "META_PREFIX",
    "SPEC_VERSION",
    "DirectoryCatalog",
    "FileRecord",
    "FrontmatterError",
    "Producer",
    "SkillLoadError",
    "SkillRecord",
    "Skills",
    "digest_of",
    "parse_frontmatter",
]
