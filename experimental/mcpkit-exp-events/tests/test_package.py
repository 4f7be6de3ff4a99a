"""The distribution installs alone, in the experimental namespace."""

from __future__ import annotations

import re
from importlib.metadata import requires


def test_extension_id_is_the_seps() -> None:
    from mcpkit.experimental.events import EXTENSION_ID

    assert EXTENSION_ID == "io.modelcontextprotocol/events"


def test_depends_on_core_standardwebhooks_aiohttp_and_yarl_only() -> None:
    # aiohttp: the webhook sender's HTTP client (docs/performance.md, "Webhooks")
    # yarl: aiohttp's URL type, the sender's IDNA host names
    reqs = requires("mcpkit-exp-events") or []
    declared = [r.split(";")[0].strip() for r in reqs if "extra ==" not in r]
    # the name ends at the first specifier character (`mcpkit-core<0.2,>=0.1`)
    names = sorted(re.split(r"[\s<>=!~\[(]", r, maxsplit=1)[0] for r in declared)
    assert names == ["aiohttp", "mcpkit-core", "standardwebhooks", "yarl"]
