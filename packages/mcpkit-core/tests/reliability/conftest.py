"""Reliability tests (limits, regressions for faults the fuzz suite found, security
defaults) reuse the HTTP helpers of ``tests/http``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))
