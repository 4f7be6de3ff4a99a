"""``docs/extensions/protogen.md``: every Python example runs and prints what its comments
say; the install line, the proto snippet and the command line are true."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import LIBRARY_PROTO, ROOT

sys.path.insert(0, str(ROOT / "tools"))
from docs_blocks import block

pytestmark = pytest.mark.lowest  # also at the lowest supported dependencies

PAGE = "docs/extensions/protogen.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for lang, code in FENCE.findall((ROOT / PAGE).read_text("utf-8")):
        if lang == "python":
            m = MARKER.match(code)
            assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
            found[m.group(1)] = code
    return found


@pytest.mark.parametrize("name", ["in-process", "schema"])
def test_the_example_prints_what_its_comments_say(generated: Path, name: str) -> None:
    code = examples()[name]
    promised = "\n".join(
        line[2:]
        for line in code.splitlines()
        if line.startswith("# ") and "docs-example" not in line
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"<{name}>", "exec"), {"__name__": f"docs_{name}"})
    assert printed.getvalue().strip() == promised.strip()
    assert sorted(examples()) == ["in-process", "schema"]


def test_the_install_lines_name_the_extras() -> None:
    lines = block(PAGE, "protogen-install").splitlines()
    extras = [shlex.split(line.split("#")[0])[2] for line in lines]
    assert extras == ["mcpkit-exp-protogen[codegen]", "mcpkit-exp-protogen[grpc]"]
    project = tomllib.loads((ROOT / "experimental/mcpkit-exp-protogen/pyproject.toml").read_text())
    optional = project["project"]["optional-dependencies"]
    assert optional["codegen"][0].startswith("grpcio-tools")
    assert optional["grpc"][0].startswith("grpcio")


def test_the_proto_snippet_is_the_examples() -> None:
    assert block(PAGE, "protogen-proto") in LIBRARY_PROTO.read_text("utf-8")


def test_the_command_line_parses_and_names_real_files() -> None:
    from mcpkit.experimental.protogen import command

    (line,) = block(PAGE, "protogen-cli").splitlines()
    words = shlex.split(line)
    assert words[:2] == ["mcpkit", "protogen"]
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(words[2:])
    assert all((ROOT / f).is_file() for f in args.files)
    assert args.grpc


def test_the_worked_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """``examples/protogen/demo.py``: generate, serve over real gRPC, drive it."""
    import json
    import runpy

    runpy.run_path(str(ROOT / "examples" / "protogen" / "demo.py"), run_name="__main__")
    shown = json.loads(capsys.readouterr().out)
    assert shown["summary"] == "Found 2 books for dune"
    assert shown["book"]["title"] == "Cosmos"
    assert shown["prompt"] == "Recommend 1 fiction book(s)."
    assert shown["missing"]["code"] == "NOT_FOUND"


def test_the_readme_calls_what_the_generated_module_defines(generated: Path) -> None:
    from library.v1 import library_mcp

    readme = (ROOT / "experimental/mcpkit-exp-protogen/README.md").read_text("utf-8")
    (code,) = [c for lang, c in FENCE.findall(readme) if lang == "python"]
    called = re.findall(r"library_mcp\.(\w+)\(", code)
    assert sorted(set(called)) == ["forward_library", "register_library"]
    assert all(callable(getattr(library_mcp, name, None)) for name in called)


def test_the_plain_protoc_lines_generate(tmp_path: Path) -> None:
    """The page's plain-protoc lines, run as written from a directory holding the example:
    protoc finds the annotations through the documented include path."""
    import os
    import subprocess

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bindir = str(Path(sys.executable).parent)  # python and protoc-gen-mcpkit, as in a venv
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    script = block(PAGE, "protogen-plain")
    done = subprocess.run(["bash", "-euc", script], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    out = tmp_path / "gen" / "library" / "v1"
    assert (out / "library_mcp.py").is_file()
    pb2 = (out / "library_pb2.py").read_text("utf-8")
    assert "from mcpkit.experimental.protogen import annotations_pb2" in pb2
    assert "from mcp.v1 import" not in pb2
