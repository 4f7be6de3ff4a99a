"""instrument()'s flags (issue 26): a value that is not a bool fails when instrumenting;
a string "false" used to be truthy and recorded tool arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit.ext.otel import instrument
from mcpkit.server import Server

STARTUP_TABLE = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
"""docs/server.md: its "Mistakes caught at start-up" rows quote these messages."""


@pytest.mark.parametrize("flag", ["record_arguments", "uri_in_span_name", "metric_resource_uri"])
def test_a_flag_that_is_not_a_bool_is_refused(flag: str) -> None:
    server = Server("s")
    options: dict[str, Any] = {flag: "false"}
    with pytest.raises(TypeError, match=rf"instrument\(\): {flag}='false' must be True or False"):
        instrument(server, **options)
    if flag == "record_arguments":
        assert "`TypeError: instrument(): record_arguments='false' must be True or False`" in (
            STARTUP_TABLE
        )
    assert server.tracer is None
