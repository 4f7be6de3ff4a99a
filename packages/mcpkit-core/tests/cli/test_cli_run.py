"""``mcpkit run``: user errors in a line or two, the default attribute, ports, --reload.

Loading errors are checked through ``main(argv)`` in this process (the same code path,
no server starts); one real subprocess proves the whole command prints no traceback,
one proves a port in use is reported, and one exercises ``--reload`` for real.
"""

from __future__ import annotations

import socket
import textwrap
import time
import tomllib
from pathlib import Path

import anyio
import pytest
from cli_helpers import demo_process, in_process, mcpkit

from mcpkit.cli.run import load_server
from mcpkit.client import Client

SERVER = """
from mcpkit.server import Server

{name} = Server("loaded-as-{name}")


@{name}.tool()
def version() -> str:
    return "{version}"
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("attr", ["server", "mcp", "app"])
def test_the_attribute_defaults_to_server_then_mcp_then_app(tmp_path: Path, attr: str) -> None:
    path = write(tmp_path, f"default_{attr}.py", SERVER.format(name=attr, version="1"))
    assert load_server(str(path)).info["name"] == f"loaded-as-{attr}"


def test_server_wins_over_mcp_and_a_factory_is_called(tmp_path: Path) -> None:
    both = write(
        tmp_path,
        "both_attrs.py",
        SERVER.format(name="mcp", version="1") + SERVER.format(name="server", version="2"),
    )
    assert load_server(str(both)).info["name"] == "loaded-as-server"
    factory = write(
        tmp_path,
        "factory_mod.py",
        """
        from mcpkit.server import Server

        def make():
            return Server("made")
        """,
    )
    assert load_server(f"{factory}:make").info["name"] == "made"


@pytest.mark.parametrize(
    ("files", "target", "expected", "status"),
    [
        ({}, "{tmp}/missing.py", "no such file: {tmp}/missing.py", 2),
        ({}, "no_such_module_xyz", "no module named 'no_such_module_xyz'", 2),
        ({"syntax_err.py": "x = 1\ny = (\n"}, "{tmp}/syntax_err.py", "{tmp}/syntax_err.py:2:", 2),
        ({"no_attr.py": "x = 1\n"}, "{tmp}/no_attr.py", "has no 'server', 'mcp' or 'app'", 2),
        (
            {"wrong_attr.py": SERVER.format(name="mcp", version="1")},
            "{tmp}/wrong_attr.py:nope",
            "has no attribute 'nope' (Servers there: mcp)",
            2,
        ),
        ({"not_server.py": "server = 42\n"}, "{tmp}/not_server.py", "not an mcpkit Server", 2),
        (
            {"needs_dep.py": "import no_such_dependency_xyz\n"},
            "{tmp}/needs_dep.py",
            "No module named 'no_such_dependency_xyz'",
            2,
        ),
        (
            {"needs_args.py": "def make(x):\n    pass\n"},
            "{tmp}/needs_args.py:make",
            "a function that needs arguments",
            2,
        ),
    ],
)
def test_user_errors_are_one_or_two_lines_without_a_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    target: str,
    expected: str,
    status: int,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = in_process(capsys, "run", target.format(tmp=tmp_path))
    assert code == status
    assert expected.format(tmp=tmp_path) in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2, err
    assert out == ""


def test_an_exception_in_the_users_module_shows_only_the_users_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "raises_mod.py", "def f():\n    raise RuntimeError('boom')\nf()\n")
    code, _, err = in_process(capsys, "run", str(path))
    assert code == 1
    assert "RuntimeError: boom" in err
    assert f'File "{path}", line 2, in f' in err
    assert "mcpkit/cli" not in err
    assert "<frozen" not in err


def test_an_error_mcpkit_raises_for_the_users_module_shows_no_mcpkit_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/cli.md: "your frames only", also when the error is raised inside mcpkit (a
    misspelt decorator option) and when it is chained; was five mcpkit frames."""
    path = write(
        tmp_path,
        "misspelt_mod.py",
        """
        from mcpkit.server import Server

        server = Server("s")


        def register():
            try:
                server.tool(titel="x")(lambda: None)
            except TypeError as exc:
                raise RuntimeError("registering failed") from exc


        register()
        """,
    )
    code, _, err = in_process(capsys, "run", str(path))
    assert code == 1
    assert "unknown option 'titel'" in err
    assert "RuntimeError: registering failed" in err
    assert f'File "{path}", line 9, in register' in err
    frames = [line for line in err.splitlines() if line.lstrip().startswith("File ")]
    assert frames, err
    assert all(str(path) in line for line in frames), err
    assert "frames inside mcpkit not shown" in err


def test_port_is_range_checked_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = in_process(capsys, "run", "x.py", "--port", "65536")
    assert code == 2
    assert "65536 is not in 0..65535" in err
    code, _, err = in_process(capsys, "demo", "--port", "http")
    assert code == 2
    assert "'http' is not a port number" in err


def test_real_process_syntax_error_and_port_in_use(tmp_path: Path) -> None:
    bad = write(tmp_path, "broken.py", "def f(:\n    pass\n")
    out = mcpkit("run", str(bad))
    assert out.returncode == 2
    assert out.stderr.startswith(f"mcpkit run: {bad}:1: ")
    assert "Traceback" not in out.stderr
    good = write(tmp_path, "good.py", SERVER.format(name="server", version="1"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = mcpkit("run", str(good), "--transport", "http", "--port", str(port))
    assert busy.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: already in use" in busy.stderr
    assert "serving" not in busy.stderr
    assert "Traceback" not in busy.stderr


NO_SECRET = {"MCPKIT_SECRET": "", "MCPKIT_SECRET_FILE": "", "MCPKIT_REDIS_URL": ""}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--workers", "2", "--stateless"], "needs one secret shared by every process"),
        # kind-ok: fixed-port never connected: the configuration is refused first
        (["--redis", "redis://127.0.0.1:1/0"], "needs one secret shared by every process"),
    ],
)
def test_a_bad_configuration_is_reported_even_when_the_port_is_taken(
    tmp_path: Path, options: list[str], expected: str
) -> None:
    # The configuration is checked before the address is bound (run rule 3): a port in
    # use never hides a configuration error, whatever else holds the port.
    good = write(tmp_path, "good.py", SERVER.format(name="server", version="1"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit(
            "run", str(good), "--transport", "http", "--port", str(port), *options,
            env=NO_SECRET,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert "in use" not in done.stderr
    assert "Traceback" not in done.stderr


async def _version(url: str) -> str:
    async with Client(url, timeout_s=30) as client:
        result = await client.call_tool("version")
        return str(getattr(result.content[0], "text", ""))


def test_reload_restarts_the_server_when_its_file_changes(tmp_path: Path) -> None:
    path = write(tmp_path, "reloaded.py", SERVER.format(name="server", version="one"))
    with demo_process(
        # kind-ok: fixed-port demo_process adds --port 0 to every command
        "--transport",
        "http",
        "--reload",
        "--log-level",
        "warning",
        command=("run", str(path)),
    ) as server:
        first_url = server.url
        assert anyio.run(_version, first_url) == "one"
        path.write_text(textwrap.dedent(SERVER.format(name="server", version="two")))
        deadline = time.monotonic() + 60  # debounce 0.4 s + a restart, with room for load
        urls: list[str] = []
        while time.monotonic() < deadline:
            urls = [
                line.split(" at ", 1)[1].strip()
                for line in server.lines
                if line.startswith("mcpkit: serving streamable HTTP at ")
            ]
            if len(urls) >= 2:
                break
            time.sleep(0.2)
        assert len(urls) >= 2, server.lines
        assert any("reloaded.py changed; restarting" in line for line in server.lines)
        assert anyio.run(_version, urls[-1]) == "two"


def test_log_level_sets_the_mcpkit_stderr_log_before_the_module_is_imported(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "logs_at_import.py",
        SERVER.format(name="server", version="1")
        + "\nimport logging\nlogging.getLogger('mcpkit.notes').warning('warned at import')\n",
    )
    shown = mcpkit("run", str(path), "--log-level", "warning")  # stdin is empty: serves, ends
    assert shown.returncode == 0, shown.stderr
    assert "warned at import" in shown.stderr
    assert shown.stdout == ""
    hidden = mcpkit("run", str(path), "--log-level", "ERROR")
    assert hidden.returncode == 0, hidden.stderr
    assert "warned at import" not in hidden.stderr


def test_a_checkout_installs_the_reload_extra_so_uv_run_reload_works() -> None:
    # README: `uv sync` in a checkout installs everything, and docs/cli.md says
    # `--reload` works there; the workspace root used to depend on plain `mcpkit-core`,
    # so `uv run mcpkit run --reload` in a fresh checkout stopped at "needs watchfiles".
    root = Path(__file__).resolve().parents[4]
    workspace = tomllib.loads((root / "pyproject.toml").read_text())
    core = [d for d in workspace["project"]["dependencies"] if d.startswith("mcpkit-core")]
    assert len(core) == 1
    extras = core[0].removeprefix("mcpkit-core[").removesuffix("]").split(",")
    assert "reload" in extras
    core_project = tomllib.loads((root / "packages/mcpkit-core/pyproject.toml").read_text())
    assert core_project["project"]["optional-dependencies"]["reload"] == ["watchfiles>=1.0"]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (("--path", "nope"), "mcpkit {cmd}: --path: must start with '/', got 'nope'"),
        (("--workers", "0"), "argument --workers: must be a positive integer, got 0"),
        (
            ("--shutdown-grace", "-1"),
            "argument --shutdown-grace: must be a finite number (seconds), 0 or more, got -1",
        ),
    ],
)
@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_refused_serve_option_is_named_by_its_flag(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    option: tuple[str, str],
    expected: str,
    command: str,
) -> None:
    """Issue 26: `--path nope` was a traceback ending in "path must start with '/'";
    `--workers 0` said "workers"; a negative `--shutdown-grace` was accepted."""
    target = [str(write(tmp_path, "ok_mod.py", SERVER.format(name="server", version="1")))]
    argv = [command, *(target if command == "run" else []), "--transport", "http"]
    code, _out, err = in_process(capsys, *argv, "--port", "0", *option)
    assert code == 2
    assert expected.format(cmd=command) in err
    assert "Traceback" not in err


def test_a_protecting_rule_naming_nothing_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "typo_rule.py",
        """
        from mcpkit.server import Server
        from mcpkit.server.names import NamedRule, declare_rules

        server = Server("guarded")


        @server.tool()
        def save_note() -> str:
            return "saved"


        declare_rules(
            server, lambda: [NamedRule("tool", "sav_note", "guard(tool='sav_note')", protects=True)]
        )
        """,
    )
    code, out, err = in_process(capsys, "run", str(path))
    assert code == 2
    assert err.startswith("mcpkit run: guard(tool='sav_note') protects tool 'sav_note'")
    assert "closest registered tool: 'save_note'" in err
    assert len(err.strip().splitlines()) == 1, err
    assert out == ""
