"""Helpers of the mcpkit-ext-skills tests: skill directories written into ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

from mcpkit.ext.skills import Skills
from mcpkit.server import Server


def write_skill(
    root: Path,
    path: str,
    *,
    description: str = "Does a thing",
    extra: str = "",
    files: dict[str, bytes | str] | None = None,
    name: str | None = None,
) -> Path:
    """Write ``root/path/SKILL.md`` (name = last segment unless ``name``) and ``files``."""
    skill = root / path
    skill.mkdir(parents=True, exist_ok=True)
    front = (
        f"---\nname: {name or path.rsplit('/', 1)[-1]}\ndescription: {description}\n{extra}---\n"
    )
    (skill / "SKILL.md").write_text(front + "\n# Body\n", encoding="utf-8")
    for rel, content in (files or {}).items():
        target = skill / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
    return skill


def serve(root: Path, **options: object) -> tuple[Server, Skills]:
    """A server with ``Skills.from_directory(root, **options)`` installed."""
    server = Server("skills-test", page_size=int(str(options.pop("page_size", 100))))
    skills = Skills.from_directory(root, **options).install(server)  # type: ignore[arg-type]
    return server, skills
