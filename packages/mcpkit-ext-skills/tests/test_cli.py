"""``mcpkit skills serve|ls|verify|pull``: the example directory served over stdio and
checked by the real command, and pull's refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "skills"


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", "skills", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def served(directory: Path) -> str:
    """The stdio command that serves ``directory``."""
    return f"{sys.executable} -m mcpkit.cli.main skills serve {directory}"


def test_the_example_directory_serves_lists_and_verifies() -> None:
    listed = mcpkit("ls", served(EXAMPLE))
    assert listed.returncode == 0, listed.stderr
    assert "skill://pdf-processing/SKILL.md  5 files" in listed.stdout
    verified = mcpkit("verify", served(EXAMPLE))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.count("OK    ") == 3


def test_pull_writes_a_new_directory_and_refuses_to_overwrite(tmp_path: Path) -> None:
    dest = tmp_path / "pdf"
    pulled = mcpkit("pull", served(EXAMPLE), "skill://pdf-processing/SKILL.md", str(dest))
    assert pulled.returncode == 0, pulled.stderr
    for rel in ("SKILL.md", "templates/regional/eu-invoice.md", "scripts/extract.py"):
        assert (dest / rel).read_bytes() == (EXAMPLE / "pdf-processing" / rel).read_bytes()
    again = mcpkit("pull", served(EXAMPLE), "skill://pdf-processing/SKILL.md", str(dest))
    assert again.returncode == 1
    assert "exists" in again.stderr


def test_serve_refuses_a_bad_directory_before_starting(tmp_path: Path) -> None:
    (tmp_path / "Bad").mkdir()
    (tmp_path / "Bad" / "SKILL.md").write_text("---\nname: Bad\ndescription: d\n---\n")
    refused = mcpkit("serve", str(tmp_path))
    assert refused.returncode == 2
    assert "'Bad' is not a skill name" in refused.stderr


@pytest.mark.parametrize("command", ["verify", "pull"])
def test_a_mismatch_fails_verify_and_pull_writes_nothing(tmp_path: Path, command: str) -> None:
    liar = tmp_path / "liar.py"
    liar.write_text(
        "from mcpkit.core.extensions import Extension\n"
        "from mcpkit.server import Server\n"
        "from mcpkit.ext.skills import digest_of\n"
        "md = '---\\nname: demo\\ndescription: d\\n---\\n'\n"
        "entry = {'uri': 'skill://demo/SKILL.md', 'frontmatter': {'name': 'demo',\n"
        "  'description': 'd'}, 'resources': [{'uri': 'skill://demo/SKILL.md',\n"
        "  'digest': digest_of(b'other'), 'size': len(md)}]}\n"
        "s = Server('liar', extensions=[Extension('io.modelcontextprotocol/skills')])\n"
        "async def lst(ctx): return {'skills': [entry]}\n"
        "async def get(ctx): return {'skill': entry}\n"
        "s.add_method('skills/list', lst)\n"
        "s.add_method('skills/get', get)\n"
        "s.add_resource(lambda: md, 'skill://demo/SKILL.md', name='SKILL.md')\n"
        "s.run()\n"
    )
    target = f"{sys.executable} {liar}"
    if command == "verify":
        done = mcpkit("verify", target)
        assert done.returncode == 1
        assert "FAIL  skill://demo/SKILL.md: DigestMismatchError" in done.stdout
    else:
        dest = tmp_path / "out"
        done = mcpkit("pull", target, "skill://demo/SKILL.md", str(dest))
        assert done.returncode != 0
        assert not dest.exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


def test_an_unknown_skill_and_a_traversing_path_are_one_line_errors(tmp_path: Path) -> None:
    missing = mcpkit("verify", served(EXAMPLE), "skill://nope/SKILL.md")
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        "mcpkit skills verify: No skill is served at skill://nope/SKILL.md"
    )
    liar = tmp_path / "liar.py"
    liar.write_text(
        "from mcpkit.core.extensions import Extension\n"
        "from mcpkit.server import Server\n"
        "from mcpkit.ext.skills import digest_of\n"
        "md = '---\\nname: demo\\ndescription: d\\n---\\n'\n"
        "evil = 'skill://demo/..%2F..%2Fevil.sh'\n"
        "entry = {'uri': 'skill://demo/SKILL.md', 'frontmatter': {'name': 'demo',\n"
        "  'description': 'd'}, 'resources': [{'uri': 'skill://demo/SKILL.md',\n"
        "  'digest': digest_of(md.encode()), 'size': len(md)},\n"
        "  {'uri': evil, 'digest': digest_of(b'x'), 'size': 1}]}\n"
        "s = Server('liar', extensions=[Extension('io.modelcontextprotocol/skills')])\n"
        "async def get(ctx): return {'skill': entry}\n"
        "s.add_method('skills/get', get)\n"
        "s.add_resource(lambda: md, 'skill://demo/SKILL.md', name='SKILL.md')\n"
        "s.add_resource(lambda: 'x', evil, name='evil')\n"
        "s.run()\n"
    )
    dest = tmp_path / "sub" / "out"
    dest.parent.mkdir()
    done = mcpkit("pull", f"{sys.executable} {liar}", "skill://demo/SKILL.md", str(dest))
    assert done.returncode == 1
    assert "not a plain path" in done.stderr
    assert list(dest.parent.iterdir()) == []
    assert not (tmp_path / "evil.sh").exists()
