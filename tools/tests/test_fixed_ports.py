"""The fixed-port check (issue 25 §9): a bad sample of each rule is flagged, port 0 and
reasoned exceptions are not, and only test code is read."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import fixed_ports


def lines_of(source: str) -> list[int]:
    return [line for line, _ in fixed_ports.scan(textwrap.dedent(source))]


@pytest.mark.parametrize(
    "source",
    [
        'server.run("http", host="127.0.0.1", port=8765)',  # rule 1
        'config = uvicorn.Config(app, port="8080")',
        "PORT = 8765",
        "callback_port: int = 3000",
        'argv = ["mcpkit", "run", "app.py", "--port", "8080"]',  # rule 2
        'subprocess.run(["mcpkit", "demo", "--port", 8765])',
        'os.system("mcpkit run app.py --transport http --port 8765")',
        'argv = ["mcpkit", "run", "app.py", "--port=8080"]',  # argparse's joined spelling
        'argv = ["mcpkit", "run", "app.py", "--transport", "http", "--port=8080"]',
        'os.system("mcpkit demo --port=8765")',
        'sock.bind(("127.0.0.1", 1234))',  # rule 3
        'probe.connect_ex(("127.0.0.1", 8765))',
        'await asyncio.open_connection("127.0.0.1", 6379)',
        'client.get("http://127.0.0.1:8765/mcp")',  # rule 4
        'Client("http://localhost:8000/mcp")',
        'url = f"ws://[::1]:9000/{path}"',
        'redis = "redis://0.0.0.0:6379/0"',
        'mcpkit("run", APP, "--transport", "http", "--workers", "2")',  # rule 5
        'argv = [python, "-m", "mcpkit.cli.main", "demo"]',
        'server.run("http")',
        "run_http(server, host='127.0.0.1')",
    ],
)
def test_each_rule_flags_a_fixed_port(source: str) -> None:
    assert lines_of(source) == [1]


@pytest.mark.parametrize(
    "source",
    [
        'server.run("http", host="127.0.0.1", port=0)',
        'argv = ["mcpkit", "run", "app.py", "--transport", "http", "--port", "0"]',
        'sock.bind(("127.0.0.1", 0))',
        'client.get(f"http://127.0.0.1:{port}/mcp")',
        'origin_of("https://mcp.example.com:8443/mcp")',  # not a local host
        'client.get("http://127.0.0.1/mcp")',  # no port given
        'argv = ["mcpkit", "demo", "--transport", "stdio"]',
        'argv = ["mcpkit", "demo", "--port=0"]',
        'os.system("mcpkit demo --port=0")',
        'server.run("http", **options)',  # the options may carry the port
        'argv = ["mcpkit", "run", "app.py", "--transport", "http", *extra]',
        'timeout = 8765\nsize = {"port": "not a number"}',
        # a port option added to the list further down the same function
        'def serve():\n    argv = ["demo"]\n    argv += ["--port", "0"]\n',
    ],
)
def test_port_zero_and_non_local_or_computed_ports_are_not_flagged(source: str) -> None:
    assert lines_of(source) == []


def test_a_missing_port_is_read_per_function() -> None:
    source = """
    def helper():
        return ["mcpkit", "run", "app.py", "--transport", "http", "--port", "0"]

    def test_refuses():
        mcpkit("run", "app.py", "--transport", "http", "--workers", "2")
    """
    assert lines_of(source) == [6]


def test_only_test_trees_are_read_and_an_allow_comment_needs_a_reason(tmp_path: Path) -> None:
    bad = 'URL = "http://127.0.0.1:8765/mcp"\n'
    for where in ("packages/p/tests/test_a.py", "scale/test_b.py", "packages/p/src/p/c.py"):
        path = tmp_path / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(bad)
    allowed = tmp_path / "interop/test_d.py"
    allowed.parent.mkdir(parents=True)
    allowed.write_text(
        "# kind-ok: fixed-port the documented URL, replaced before it runs\n" + bad
        + 'OTHER = "http://localhost:9/x"  # kind-ok: fixed-port\n'
    )  # fmt: skip
    found = sorted(line for line in run(tmp_path) if "[fixed-port]" in line)
    assert found == [
        "interop/test_d.py:3: [fixed-port] kind-ok: fixed-port needs a reason of at least two "
        "words",
        "packages/p/tests/test_a.py:1: [fixed-port] http://127.0.0.1:8765/mcp: a fixed local port "
        "8765; serve on port 0 and use its URL",
        "scale/test_b.py:1: [fixed-port] http://127.0.0.1:8765/mcp: a fixed local port 8765; "
        "serve on port 0 and use its URL",
    ]


def test_the_scale_tests_of_the_issue_are_flagged_as_they_were() -> None:
    # scale/test_workers.py before the fix: `mcpkit run` without --port serves 8765.
    source = """
    def test_several_workers_refuse_stateful_http_without_redis() -> None:
        done = mcpkit("run", APP, "--transport", "http", "--workers", "2", MCPKIT_SECRET=SECRET)
        assert done.returncode == 2
    """
    assert lines_of(source) == [3]
