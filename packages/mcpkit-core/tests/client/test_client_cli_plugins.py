"""The ``mcpkit.cli`` plugin hook, through real installed distributions.

Each test writes one or more distributions (a module plus a ``.dist-info`` with
``entry_points.txt``) into a temporary directory, puts it on ``PYTHONPATH`` and runs the
real ``mcpkit`` command as a subprocess, so ``importlib.metadata`` finds them the way it
finds an installed extension.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from http_helpers import serve

from mcpkit.server import Context, Server
from mcpkit.server.http import http_app

DEMO = f"{sys.executable} -m mcpkit.cli.main demo --transport stdio"
CONNECT = ("--connect-timeout", "60")  # the 10 s default is for people, not a loaded CI

GOOD = """
import httpx2
from mcpkit.cli.plugins import CliError, CliPlugin


def add_commands(sub):
    hello = sub.add_parser("hello", help="say hello")
    hello.add_argument("--name", default="world")
    hello.add_argument("--status", type=int, default=0)
    hello.set_defaults(handler=run_hello)


def run_hello(args):
    if args.name == "refuse":
        raise CliError("refusing to greet")
    print(f"hello {args.name}")
    return args.status


class Bearer(httpx2.Auth):
    def __init__(self, token):
        self.token = token

    def auth_flow(self, request):
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


def add_client_options(parser):
    parser.add_argument("--bearer", metavar="TOKEN")
    parser.add_argument("--tenant")


def configure_client(args, config):
    if args.bearer == "bad":
        raise CliError("--bearer 'bad' is not a token")
    if args.bearer:
        config.auth = Bearer(args.bearer)
    if args.tenant:
        config.headers["X-Tenant"] = args.tenant


plugin = CliPlugin(
    add_commands=add_commands,
    add_client_options=add_client_options,
    configure_client=configure_client,
)
"""

OTHER_AUTH = """
from mcpkit.cli.plugins import CliPlugin


def add_client_options(parser):
    parser.add_argument("--other-token")


def configure_client(args, config):
    if args.other_token:
        config.auth = object()


def make():
    return CliPlugin(add_client_options=add_client_options, configure_client=configure_client)
"""

LAZY_PLUGIN = """
from mcpkit.cli.plugins import CliPlugin, LazyCommand

plugin = CliPlugin(
    commands=(
        LazyCommand("heavy", "a subcommand with a heavy import", "heavycmd"),
        LazyCommand("gone", "its module does not exist", "no_such_module_here"),
    )
)
"""

HEAVY_MODULE = """
import os
from pathlib import Path

Path(os.environ["HEAVY_MARKER"]).write_text("imported")


def add_arguments(parser):
    parser.add_argument("--times", type=int, default=1, help="how many greetings")


def run(args):
    print("heavy " * args.times)
    return 4
"""

BROKEN_IMPORT = "raise RuntimeError('plugin import exploded')\n"
NOT_A_PLUGIN = "plugin = 42\n"
BROKEN_HOOK = """
from mcpkit.cli.plugins import CliPlugin


def add_client_options(parser):
    parser.add_argument("--header")  # clashes with the core option


def configure_client(args, config):
    raise AssertionError("never called: the plugin broke while the parser was built")


def crash(args, config):
    raise ValueError("configure exploded")


plugin = CliPlugin(add_client_options=add_client_options, configure_client=configure_client)
crashing = CliPlugin(configure_client=crash)
"""


def install(site: Path, dist: str, module: str, source: str, entry_points: dict[str, str]) -> None:
    """Write ``module.py`` and a minimal ``<dist>-0.1.dist-info`` declaring ``entry_points``
    in the ``mcpkit.cli`` group, as an installer would."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = [f"{name} = {value}" for name, value in entry_points.items()]
    (info / "entry_points.txt").write_text("[mcpkit.cli]\n" + "\n".join(lines) + "\n")


def env_with(site: Path) -> dict[str, str]:
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}


def mcpkit(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env_with(site),
    )


async def amcpkit(site: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    with anyio.fail_after(120):
        return await anyio.run_process(
            [sys.executable, "-m", "mcpkit.cli.main", *args], check=False, env=env_with(site)
        )


@pytest.fixture
async def header_server() -> AsyncIterator[str]:
    """A real HTTP server whose ``headers`` tool reports the Authorization and X-Tenant
    headers it received."""
    server = Server("headers")

    @server.tool()
    def headers(ctx: Context) -> str:
        seen = ctx.transport["headers"]
        return f"{seen.get('authorization')}|{seen.get('x-tenant')}"

    async with serve(http_app(server, path="/mcp")) as base:
        yield base + "/mcp"


def test_a_plugin_adds_a_subcommand_and_its_exit_status(tmp_path: Path) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    out = mcpkit(tmp_path, "hello", "--name", "plugins")
    assert (out.returncode, out.stdout, out.stderr) == (0, "hello plugins\n", "")
    assert mcpkit(tmp_path, "hello", "--status", "3").returncode == 3
    refused = mcpkit(tmp_path, "hello", "--name", "refuse")
    assert refused.returncode == 2
    assert refused.stderr == "mcpkit hello: refusing to greet\n"
    assert "hello" in mcpkit(tmp_path, "--help").stdout


def test_without_the_plugin_the_subcommand_does_not_exist(tmp_path: Path) -> None:
    out = mcpkit(tmp_path, "hello")
    assert out.returncode == 2
    assert "invalid choice: 'hello'" in out.stderr


@pytest.mark.anyio
async def test_plugin_options_on_ls_and_call_become_auth_and_headers(
    tmp_path: Path, header_server: str
) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    out = await amcpkit(
        tmp_path, "call", header_server, "headers", "--bearer", "t0k", "--tenant", "acme"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().strip() == "Bearer t0k|acme"
    plain = await amcpkit(tmp_path, "call", header_server, "headers")
    assert plain.stdout.decode().strip() == "None|None"
    listed = await amcpkit(tmp_path, "ls", header_server, "--bearer", "t0k")
    assert listed.returncode == 0, listed.stderr
    assert "headers" in listed.stdout.decode()
    # --header values reach the plugin's config first; the plugin's own option wins.
    both = await amcpkit(
        tmp_path, "call", header_server, "headers", "--header", "X-Tenant: a", "--tenant", "b"
    )
    assert both.stdout.decode().strip() == "None|b"


@pytest.mark.anyio
async def test_a_plugins_cli_error_stops_the_client_command_with_status_2(
    tmp_path: Path, header_server: str
) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    out = await amcpkit(tmp_path, "call", header_server, "headers", "--bearer", "bad")
    assert out.returncode == 2
    assert out.stderr.decode() == "mcpkit call: --bearer 'bad' is not a token\n"
    assert out.stdout == b""


def test_two_plugins_setting_the_authorization_is_a_usage_error(tmp_path: Path) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    install(tmp_path, "other-plugin", "otherplug", OTHER_AUTH, {"other": "otherplug:make"})
    # kind-ok: fixed-port never connected: the command fails on its usage first
    url = "http://127.0.0.1:9/mcp"  # never reached: the conflict is found first
    out = mcpkit(tmp_path, "ls", url, "--bearer", "x", "--other-token", "y")
    assert out.returncode == 2
    assert "'good' (good-plugin) and 'other' (other-plugin) both set" in out.stderr


def test_auth_or_headers_on_a_stdio_target_is_a_usage_error(tmp_path: Path) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    out = mcpkit(tmp_path, "ls", DEMO, "--bearer", "x", *CONNECT)
    assert out.returncode == 2
    assert "need an http(s):// target" in out.stderr
    # kind-ok: fixed-port never connected: the command fails on its usage first
    bad_header = mcpkit(tmp_path, "ls", "http://127.0.0.1:9/mcp", "--header", "nocolon")
    assert bad_header.returncode == 2
    assert "--header 'nocolon' must look like 'Name: value'" in bad_header.stderr


def test_broken_plugins_are_warnings_naming_them_and_the_rest_works(tmp_path: Path) -> None:
    install(tmp_path, "good-plugin", "goodplug", GOOD, {"good": "goodplug:plugin"})
    install(tmp_path, "exploding-dist", "explodes", BROKEN_IMPORT, {"boom": "explodes:plugin"})
    install(tmp_path, "wrong-dist", "wrong", NOT_A_PLUGIN, {"wrong": "wrong:plugin"})
    install(
        tmp_path,
        "clash-dist",
        "clash",
        BROKEN_HOOK,
        {"clash": "clash:plugin", "crash": "clash:crashing", "missing": "clash:nothing"},
    )
    out = mcpkit(tmp_path, "ls", DEMO, *CONNECT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("mcpkit-demo")
    warnings = out.stderr.splitlines()
    assert (
        "mcpkit: warning: plugin 'boom' (exploding-dist) not loaded: "
        "RuntimeError: plugin import exploded" in warnings
    )
    assert (
        "mcpkit: warning: plugin 'wrong' (wrong-dist) not loaded: "
        "TypeError: wrong:plugin is a int, not a CliPlugin" in warnings
    )
    assert any(
        w.startswith("mcpkit: warning: plugin 'missing' (clash-dist) not loaded: AttributeError")
        for w in warnings
    )
    assert any(
        w.startswith(
            "mcpkit: warning: plugin 'clash' (clash-dist) failed in add_client_options: "
            "ArgumentError"
        )
        for w in warnings
    )
    assert (
        "mcpkit: warning: plugin 'crash' (clash-dist) failed in configure_client: "
        "ValueError: configure exploded" in warnings
    )
    # The healthy plugin still adds its subcommand next to the broken ones.
    hello = mcpkit(tmp_path, "hello")
    assert hello.returncode == 0
    assert hello.stdout == "hello world\n"


def test_lazy_commands_import_their_module_only_when_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, "lazy-plugin", "lazyplug", LAZY_PLUGIN, {"lazy": "lazyplug:plugin"})
    (tmp_path / "heavycmd.py").write_text(HEAVY_MODULE)
    marker = tmp_path / "marker"
    monkeypatch.setenv("HEAVY_MARKER", str(marker))
    top = mcpkit(tmp_path, "--help")
    assert "heavy" in top.stdout
    assert "a subcommand with a heavy import" in top.stdout
    assert mcpkit(tmp_path, "ls", DEMO, *CONNECT).returncode == 0
    assert not marker.exists()  # neither --help nor another command imported it
    ran = mcpkit(tmp_path, "heavy", "--times", "2")
    assert (ran.returncode, ran.stdout.strip()) == (4, "heavy heavy")
    assert marker.exists()
    marker.unlink()
    shown = mcpkit(tmp_path, "heavy", "--help")
    assert shown.returncode == 0
    assert "--times TIMES" in shown.stdout
    gone = mcpkit(tmp_path, "gone")
    assert gone.returncode == 2
    assert "plugin 'lazy' (lazy-plugin) cannot provide 'gone': ModuleNotFoundError" in gone.stderr
