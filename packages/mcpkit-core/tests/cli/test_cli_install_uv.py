"""``mcpkit install`` never writes an interpreter that will not exist (issue 26).

``uv run --with PKG mcpkit install ...`` runs in uv's throwaway environment
(``<uv cache>/builds-v0/.tmpXXXX``); the entry must be a ``uv run`` command instead.
One real test runs uv (offline: the package added is a local one, built with the
workspace's own build backend) and then starts the written command as a host would.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_helpers import in_process, mcpkit

from mcpkit.cli.interpreter import ephemeral_reason, uv_cache_dir

ROOT = Path(__file__).resolve().parents[4]
UV = shutil.which("uv")
SERVER = """
from mcpkit.server import Server
{imports}
server = Server("installed")


@server.tool()
def ping() -> str:
    return "pong"
"""


def test_uvs_cache_directory_is_found_as_uv_documents_it(tmp_path: Path) -> None:
    assert uv_cache_dir({"UV_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c"
    assert uv_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "uv"
    assert uv_cache_dir({}) == Path.home() / ".cache" / "uv"


def test_an_interpreter_in_uvs_cache_or_the_temp_dir_is_ephemeral(tmp_path: Path) -> None:
    env = {"UV_CACHE_DIR": str(tmp_path / "cache")}
    build = tmp_path / "cache" / "builds-v0" / ".tmpAbCd"
    reason = ephemeral_reason(str(build / "bin" / "python"), str(build), env)
    assert reason is not None
    assert "uv's cache" in reason
    lasting = ROOT / ".venv"
    assert ephemeral_reason(str(lasting / "bin" / "python"), str(lasting), env) is None
    temp = Path("/tmp") / "somewhere" / "bin" / "python"
    assert "temporary directory" in (ephemeral_reason(str(temp), str(temp), env) or "")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(SERVER.format(imports="")))
    return path


def test_with_options_write_a_uv_run_command(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert UV is not None, "the workspace is run with uv"
    monkeypatch.setenv("UV", UV)
    monkeypatch.chdir(ROOT)
    env_file = app.parent / "server.env"
    env_file.write_text("TOKEN=x\n")
    code, out, err = in_process(
        capsys,
        "install", "mcp-json", str(app), "--print",
        "--with", "opentelemetry-sdk", "--with", "redis>=5",
        "--with-editable", str(app.parent), "--python", "3.12", "--env-file", str(env_file),
    )  # fmt: skip
    assert code == 0, err
    entry = json.loads(out)["mcpServers"]["installed"]
    assert entry["command"] == str(Path(UV).absolute())
    assert entry["args"] == [
        "run", "--project", str(ROOT), "--python", "3.12",
        "--with", "opentelemetry-sdk", "--with", "redis>=5",
        "--with-editable", str(app.parent), "--env-file", str(env_file),
        "mcpkit", "run", str(app),
    ]  # fmt: skip


def test_without_uv_the_options_and_an_ephemeral_python_are_refused(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV", raising=False)
    monkeypatch.setenv("PATH", str(app.parent))  # no uv there
    code, out, err = in_process(capsys, "install", "mcp-json", str(app), "--with", "redis")
    assert (code, out) == (2, "")
    assert "--with needs uv, which is not on PATH: install it (https://docs.astral.sh/uv/)" in err
    # this interpreter, seen from a uv cache that holds it
    monkeypatch.setenv("UV_CACHE_DIR", str(Path(sys.prefix).parent))
    code, out, err = in_process(capsys, "install", "mcp-json", str(app))
    assert (code, out) == (2, "")
    assert f"this Python ({sys.executable}) will be gone when the host starts the server" in err
    assert "install uv" in err


def test_uv_run_with_install_writes_a_command_that_starts_the_server(tmp_path: Path) -> None:
    """The issue's example, for real: `uv run --with PKG mcpkit install` wrote
    `.../builds-v0/.tmpXXXX/bin/python`, deleted as soon as uv exited."""
    assert UV is not None, "the workspace is run with uv"
    package = tmp_path / "helperpkg"
    (package / "src" / "helperpkg").mkdir(parents=True)
    (package / "src" / "helperpkg" / "__init__.py").write_text("WORD = 'pong'\n")
    (package / "pyproject.toml").write_text(
        '[project]\nname = "helperpkg"\nversion = "0.1"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(SERVER.format(imports="import helperpkg")))
    # The user's project, whose environment is this test's (UV_PROJECT_ENVIRONMENT; uv
    # run syncs inexactly, and the project adds nothing), so nothing is downloaded.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "project"\nversion = "0"\ndependencies = []\n'
        "[tool.uv]\npackage = false\n"
    )
    env = {**os.environ, "UV_OFFLINE": "1", "UV_PROJECT_ENVIRONMENT": sys.prefix}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        [UV, "run", "--with-editable", str(package), "mcpkit", "install", "mcp-json", str(app),
         "--print"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "writing a `uv run` command with what its environment added" in done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["installed"]
    assert "builds-v0" not in json.dumps(entry)
    uv = Path(entry["command"])  # $UV, the binary uv ran this with
    assert uv.is_absolute()
    assert uv.is_file()
    assert entry["args"] == [
        "run", "--project", str(project), "--with-editable", str(package),
        "mcpkit", "run", str(app),
    ]  # fmt: skip
    # the host's view: the command starts the server, from any directory
    command = shlex.join([entry["command"], *entry["args"]])
    host_env = {"UV_OFFLINE": "1", "UV_PROJECT_ENVIRONMENT": sys.prefix, "VIRTUAL_ENV": ""}
    listed = mcpkit("ls", command, "--connect-timeout", "60", env=host_env, cwd="/")
    assert listed.returncode == 0, listed.stderr
    assert "ping" in listed.stdout
