"""A spawned ``mcpkit demo`` serving streamable HTTP on a free loopback port.

The demo prints ``mcpkit: serving streamable HTTP at <url>`` to stderr once it listens
(with ``--port 0`` the real port); the helper waits for that line and keeps reading
stderr into ``lines`` until the process ends.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator

URL_PREFIX = "mcpkit: serving streamable HTTP at "


class DemoProcess:
    """``mcpkit demo`` (or ``mcpkit <command...>`` with ``command``) on a free port."""

    def __init__(self, *args: str, command: tuple[str, ...] = ("demo",)) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit.cli.main", *command, "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.url = ""
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(30) or not self.url:
            self.stop()
            raise RuntimeError("mcpkit demo did not start: " + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith(URL_PREFIX):
                self.url = line[len(URL_PREFIX) :].strip()
                self._ready.set()
        self._ready.set()

    def stderr(self) -> str:
        self._reader.join(timeout=5)
        return "".join(self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
# kind-ok: fixed-port the function adds --port 0 below
def demo_process(*args: str, command: tuple[str, ...] = ("demo",)) -> Iterator[DemoProcess]:
    demo = DemoProcess(*args, command=command)
    try:
        yield demo
    finally:
        demo.stop()
