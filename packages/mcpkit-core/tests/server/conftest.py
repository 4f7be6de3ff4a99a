"""Server tests reuse the HTTP helpers of ``tests/http`` for their one-HTTP-request
checks (``test_dx_errors.py``); ``dx_helpers.py`` serves the ``test_dx_*`` files."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))
sys.path.insert(0, str(Path(__file__).parent))  # dx_helpers
