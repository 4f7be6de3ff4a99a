"""``docs/extensions/skills.md``: every Python example runs and prints what its comments
say; the install line, the directory layout and the command lines are true."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = "docs/extensions/skills.md"
DOC = ROOT / PAGE
sys.path.insert(0, str(ROOT / "tools"))
from docs_blocks import block  # noqa: E402

pytestmark = pytest.mark.lowest

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for lang, code in FENCE.findall(DOC.read_text("utf-8")):
        if lang == "python":
            m = MARKER.match(code)
            assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
            found[m.group(1)] = code
    return found


def test_every_example_is_run_here() -> None:
    assert sorted(examples()) == [
        "client-verify",
        "dynamic",
        "host-registry",
        "list-filter",
        "serve-directory",
    ]


@pytest.mark.parametrize(
    "name", ["client-verify", "dynamic", "host-registry", "list-filter", "serve-directory"]
)
def test_the_example_prints_what_its_comments_say(name: str) -> None:
    code = examples()[name]
    promised = "\n".join(
        line[2:]
        for line in code.splitlines()
        if line.startswith("# ") and "docs-example" not in line
    )
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"<{name}>", "exec"), {"__name__": f"docs_{name}"})
    finally:
        os.chdir(cwd)
    assert printed.getvalue().strip() == promised.strip()


def test_the_install_line_names_this_distribution_and_its_dependencies() -> None:
    assert block(PAGE, "skills-install").split() == ["pip", "install", "mcpkit-ext-skills"]
    project = tomllib.loads((ROOT / "packages/mcpkit-ext-skills/pyproject.toml").read_text())
    deps = [re.split(r"[<>=~ ]", d)[0] for d in project["project"]["dependencies"]]
    assert deps == ["mcpkit-core", "pyyaml"]


def test_the_layout_is_the_example_directory() -> None:
    lines = block(PAGE, "skills-layout").splitlines()
    assert lines[0] == "examples/skills/"
    on_disk = sorted(
        p.relative_to(ROOT / "examples" / "skills").as_posix()
        for p in (ROOT / "examples" / "skills").rglob("*")
        if p.is_file()
    )
    assert [line.strip() for line in lines[1:]] == on_disk


def test_the_command_lines_parse() -> None:
    import argparse
    from importlib.metadata import entry_points

    from mcpkit.ext.skills import cli, commands

    (found,) = [e for e in entry_points(group="mcpkit.cli") if e.name == "skills"]
    assert found.load() is cli.plugin
    parser = argparse.ArgumentParser(prog="mcpkit skills")
    commands.add_arguments(parser)
    for line in block(PAGE, "skills-cli").splitlines():
        words = shlex.split(line)
        assert words[:2] == ["mcpkit", "skills"]
        assert parser.parse_args(words[2:]).skills_command == words[2]
