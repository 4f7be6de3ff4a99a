"""Benchmark servers on a free loopback port, never a port picked, released and trusted
(another process may take it in between): ``start_fresh(start, what, log)`` from
``conformance/harness.py`` (its rule 3) starts ``start(port)`` on a fresh port again
while the server exits on an address in use, and counts it up only when the server
itself holds the listening socket. The server's output must go to ``log``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

from harness import start_fresh

__all__ = ["start_fresh"]
