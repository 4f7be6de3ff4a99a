"""The released-port check: a port read from a socket that is closed before the port is
handed on is flagged; a socket kept open (handed to the server, or held while the port
is in use) and a reasoned exception are not; only test code is read."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import released_ports


def lines_of(source: str) -> list[int]:
    return list(released_ports.scan(textwrap.dedent(source)))


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (  # the helpers: a with block, then the port returned
            """
            def free_port():
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    return s.getsockname()[1]
            """,
            5,
        ),
        (  # scale/cluster.py free_ports: a list of sockets, closed in finally
            """
            def free_ports(count):
                socks = [socket.socket() for _ in range(count)]
                try:
                    for sock in socks:
                        sock.bind(("127.0.0.1", 0))
                    return [int(sock.getsockname()[1]) for sock in socks]
                finally:
                    for sock in socks:
                        sock.close()
            """,
            7,
        ),
        (  # close(), then the port through a name
            """
            def fixture():
                sock = socket.socket()
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
                sock.close()
                proc = spawn(port)
                yield f"http://127.0.0.1:{port}/mcp"
            """,
            8,
        ),
        (  # the port used after the with block closed the socket
            """
            def serve():
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                start(["server", "--port", str(port)])
            """,
            6,
        ),
    ],
)
def test_a_released_port_handed_on_is_flagged(source: str, line: int) -> None:
    assert lines_of(source) == [line]


@pytest.mark.parametrize(
    "source",
    [
        # the bound socket goes to the server, closed only after the yield
        """
        async def serve(app):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            try:
                async with serving(app, [sock]):
                    yield f"http://127.0.0.1:{port}/"
            finally:
                sock.close()
        """,
        # a held port (a port in use on purpose), named in an assert after the block
        """
        def test_busy():
            with socket.socket() as busy:
                busy.bind(("127.0.0.1", 0))
                busy.listen()
                port = busy.getsockname()[1]
                done = run_on(port)
            assert f"{port}: already in use" in done
        """,
        # the socket itself is returned, open
        """
        def bound():
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            return sock, sock.getsockname()[1]
        """,
        # a fixed port is another check's business; port 0 of a server socket kept open
        """
        def held():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                yield s.getsockname()[1]
        """,
    ],
)
def test_a_port_whose_socket_stays_open_is_not_flagged(source: str) -> None:
    assert lines_of(source) == []


def test_only_test_trees_are_read_and_an_exception_needs_a_reason(tmp_path: Path) -> None:
    bad = (
        "def free_port():\n"
        "    with socket.socket() as s:\n"
        "        s.bind(('127.0.0.1', 0))\n"
        "        return s.getsockname()[1]\n"
    )
    for where in ("packages/p/tests/a.py", "bench/b.py", "packages/p/src/p/c.py"):
        path = tmp_path / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(bad)
    allowed = tmp_path / "scale/d.py"
    allowed.parent.mkdir(parents=True)
    reasoned = "        # kind-ok: released-port callers retry on EADDRINUSE\n"
    allowed.write_text(bad.replace("        return", reasoned + "        return"))
    bare = tmp_path / "interop/e.py"
    bare.parent.mkdir(parents=True)
    bare.write_text(bad.replace("[1]\n", "[1]  # kind-ok: released-port\n"))
    found = sorted(line.split(" [")[0] for line in run(tmp_path) if "[released-port]" in line)
    assert found == ["bench/b.py:4:", "interop/e.py:4:", "packages/p/tests/a.py:4:"]
