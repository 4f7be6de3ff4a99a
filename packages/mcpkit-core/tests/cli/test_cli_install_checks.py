"""``mcpkit install``: the ``uv run`` command it writes runs, the values it writes are
checked, and a secret bound for a committed file is warned about (issue 26 review:
faults 4, 10 and 12).
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from importlib.metadata import distributions
from pathlib import Path

import pytest
from cli_helpers import in_process

from mcpkit.cli.interpreter import provides_mcpkit

ROOT = Path(__file__).resolve().parents[4]
UV = shutil.which("uv")
SERVER = """
from mcpkit.server import Server

server = Server("installed")


@server.tool()
def ping() -> str:
    return "pong"
"""


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert UV is not None, "the workspace is run with uv"
    monkeypatch.setenv("UV", UV)
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(SERVER))
    return path


def _mcpkit_names() -> list[str]:
    return sorted(
        str(d.metadata["Name"]).lower()
        for d in distributions()
        if str(d.metadata["Name"]).lower().startswith("mcpkit-")
    )


def test_a_project_without_mcpkit_is_not_named_and_every_mcpkit_dist_is_carried(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's project that does not depend on mcpkit: ``--project`` there failed to
    spawn ``mcpkit`` (and made a .venv and uv.lock in it); outside a project only
    mcpkit-core was added, so a server importing mcpkit.ext.tasks lost it."""
    project = app.parent
    (project / "pyproject.toml").write_text('[project]\nname = "notes"\nversion = "0.1"\n')
    monkeypatch.chdir(project)
    assert not provides_mcpkit(project)
    here = Path(sys.prefix)  # the environment running this test, whatever made it
    assert provides_mcpkit(here.parent, env={"UV_PROJECT_ENVIRONMENT": here.name})
    code, out, err = in_process(
        capsys, "install", "mcp-json", str(app), "--print", "--with", "redis"
    )
    assert code == 0, err
    args = json.loads(out)["mcpServers"]["installed"]["args"]
    assert "--project" not in args
    assert args[:2] == ["run", "--no-project"]
    carried = [args[i + 1] for i, word in enumerate(args) if word in ("--with", "--with-editable")]
    names = _mcpkit_names()  # all of the workspace's, or mcpkit-core alone (nox -s core)
    assert "mcpkit-core" in names
    # each installed mcpkit distribution carried (by its directory when editable, else
    # NAME==VERSION), sorted by name
    assert [Path(c).name.split("==")[0] for c in carried[: len(names)]] == names
    assert carried[-1] == "redis"
    assert args[-3:] == ["mcpkit", "run", str(app)]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--with-editable", "./nope"], "--with-editable './nope': no such directory"),
        (["--python", "3.99"], "--python '3.99': Python 3.99 does not exist"),
        (["--python", "2.7"], "--python '2.7': Python 2.7 does not exist"),
        (["--python", "three"], "--python 'three': not a Python version"),
        (["--python", "/no/such/python"], "--python '/no/such/python': no such interpreter"),
        (["--with", "bad req ==="], "--with 'bad req ===': not a requirement"),
        (["--with", "redis>="], "--with 'redis>=': not a requirement"),
    ],
)
def test_values_uv_cannot_use_are_refused_and_nothing_is_written(
    app: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(app.parent)
    config = app.parent / "mcp.json"
    code, out, err = in_process(
        capsys, "install", "mcp-json", str(app), "--config", str(config), *flags
    )
    assert (code, out) == (2, ""), err
    assert message in err
    assert not config.exists()
    if flags == ["--python", "3.99"]:  # the row of docs/server.md's start-up table
        assert f"`{err.strip()}`" in (ROOT / "docs" / "server.md").read_text("utf-8")


@pytest.mark.parametrize(
    "flags",
    [
        ["--python", "3.12"],
        ["--python", "pypy3.10"],
        ["--python", ">=3.11"],
        ["--with", "redis[hiredis]>=5,<6"],
        ["--with", "opentelemetry-sdk"],
        ["--with", "pkg @ https://example.invalid/pkg.whl"],
        ["--with", "uvloop; sys_platform != 'win32'"],
    ],
)
def test_values_uv_takes_are_written(
    app: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    code, out, err = in_process(capsys, "install", "mcp-json", str(app), "--print", *flags)
    assert code == 0, err
    assert flags[1] in json.loads(out)["mcpServers"]["installed"]["args"]


def test_a_secret_written_into_the_project_scope_file_is_warned_about(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(app.parent)
    code, _, err = in_process(
        capsys, "install", "claude-code", str(app),
        "--env", "OPENAI_API_KEY=sk-secret-value", "--env", "LOG_LEVEL=debug",
    )  # fmt: skip
    assert code == 0, err
    written = json.loads((app.parent / ".mcp.json").read_text())
    assert written["mcpServers"]["installed"]["env"]["OPENAI_API_KEY"] == "sk-secret-value"
    assert "warning: --env OPENAI_API_KEY puts a secret in plain text into" in err
    assert "pass --env-file PATH instead" in err
    assert "LOG_LEVEL" not in err
    assert "sk-secret-value" not in err
    # --print shows `claude mcp add --scope project`: the same file, the same warning
    code, _, err = in_process(
        capsys, "install", "claude-code", str(app), "--print", "--env", "DB_PASSWORD=x"
    )
    assert code == 0
    assert "warning: --env DB_PASSWORD puts a secret" in err
    # a user-level host's file is not committed: no warning
    code, _, err = in_process(
        capsys, "install", "mcp-json", str(app), "--print", "--env", "OPENAI_API_KEY=sk"
    )
    assert code == 0
    assert "warning" not in err
