"""Server processes for the soak and multi-replica tests (``replica.py``), and the TLS
webhook receiver they deliver to, in the test process."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount

from hooks.hookkit import HOOK_HOST, TLS, Flaky, Inbox, make_tls, serve
from mcpkit.experimental.events.webhooks import WebhookReceiver

REPLICA = Path(__file__).with_name("replica.py")


ANNOUNCED = re.compile(rb"replica: serving at http://127\.0\.0\.1:(\d+)/mcp")


class Replica:
    """A ``replica.py`` process: started on port 0 (the port it prints is read), then
    restarted on that same port (retried for 5 s while another process holds it)."""

    def __init__(self, ca_file: str, log_dir: str, *extra: str, replica_id: str = "") -> None:
        self.port = 0
        self.ca_file = ca_file
        self.extra = extra
        self.replica_id = replica_id
        name = replica_id or secrets.token_hex(4)  # a fresh name, never an address
        self.log_path = Path(log_dir) / f"replica-{name}.log"
        self.log = self.log_path.open("ab")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        deadline = time.monotonic() + 5
        while not self._start_once():
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica: port {self.port} stayed in use")
            time.sleep(0.1)

    def _start_once(self) -> bool:
        """Start; False when the process exited because its port was in use."""
        argv = [sys.executable, str(REPLICA), "--port", str(self.port), "--ca", self.ca_file]
        argv += ["--replica-id", self.replica_id, *self.extra]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        offset = self.log.tell()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=self.log, env=env)
        deadline = time.monotonic() + 60
        while True:
            said = self.log_path.read_bytes()[offset:]
            if self.proc.poll() is not None:
                if b"already in use" in said.lower() and self.port:
                    return False
                raise RuntimeError(f"replica exited with {self.proc.returncode}")
            if not self.port and (found := ANNOUNCED.search(said)):
                self.port = int(found.group(1))
            if ANNOUNCED.search(said):
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                    return True
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError("replica not listening after 60 s")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.proc = None

    def close(self) -> None:
        self.stop(signal.SIGKILL)
        self.log.close()


@contextlib.contextmanager
def replicas(n: int, tls_dir: str, tls: TLS, *extra: str) -> Iterator[list[Replica]]:
    ca_file = str(Path(tls_dir) / "ca.pem")
    tls.ca.cert_pem.write_to_path(ca_file)
    started = [Replica(ca_file, tls_dir, *extra, replica_id=f"r{i}") for i in range(n)]
    try:
        for r in started:
            r.start()
        yield started
    finally:
        for r in started:
            r.close()


@dataclass
class Hook:
    receiver: WebhookReceiver
    inbox: Inbox
    flaky: Flaky
    url: str
    tls: TLS
    tmp: str


@contextlib.asynccontextmanager
async def hook_endpoint() -> AsyncIterator[Hook]:
    """The TLS receiver on a free loopback port; its URL names ``hooks.test``."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.environ.get("MCPKIT_TEST_LOGS") or tmp
        tls = make_tls(Path(tmp))
        inbox = Inbox()
        receiver = WebhookReceiver(inbox.on_message)
        flaky = Flaky(receiver)
        app = Starlette(routes=[Mount("/hooks", app=flaky)])
        async with serve(app, tls=tls) as port:
            yield Hook(receiver, inbox, flaky, f"https://{HOOK_HOST}:{port}/hooks/", tls, tmp)
