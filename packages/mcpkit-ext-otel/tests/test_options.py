"""instrument()'s flags (issue 26): a value that is not a bool fails when instrumenting;
a string "false" used to be truthy and recorded tool arguments."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.otel import instrument
from mcpkit.server import Server


@pytest.mark.parametrize("flag", ["record_arguments", "uri_in_span_name", "metric_resource_uri"])
def test_a_flag_that_is_not_a_bool_is_refused(flag: str) -> None:
    server = Server("s")
    options: dict[str, Any] = {flag: "false"}
    with pytest.raises(TypeError, match=rf"instrument\(\): {flag}='false' must be True or False"):
        instrument(server, **options)
    assert server.tracer is None
