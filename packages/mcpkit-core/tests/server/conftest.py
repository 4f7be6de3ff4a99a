"""Server tests reuse the HTTP helpers of ``tests/http`` for their one-HTTP-request
checks (``test_dx_errors.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))
