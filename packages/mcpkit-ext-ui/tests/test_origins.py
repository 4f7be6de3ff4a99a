"""``mcpkit.ext.ui.origins``: CSP origins read with a URL parser (issue 25 §2, the URL side
of the kind), shared by the server's declarations and the host's sanitizer."""

from __future__ import annotations

import pytest

from mcpkit.ext.ui.host.csp import check_origin as host_check
from mcpkit.ext.ui.origins import parse_origin
from mcpkit.ext.ui.server.meta import ResourceCsp
from mcpkit.ext.ui.server.meta import check_origin as server_check


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("HTTPS://API.Example.COM/", "https://api.example.com"),
        ("wss://rt.example.com:8443", "wss://rt.example.com:8443"),
        ("https://*.cdn.example.com", "https://*.cdn.example.com"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),  # kind-ok: fixed-port parsed only
        ("http://[::1]:9", "http://[::1]:9"),  # kind-ok: fixed-port parsed only here
        ("http://[0:0::1]", "http://[::1]"),
    ],
)
def test_origins_are_rebuilt_from_the_parsed_parts(value: str, text: str) -> None:
    assert parse_origin(value).text == text


@pytest.mark.parametrize(
    "value",
    [
        "https://api.example.com\n",  # a regex's `$` let this one through on the server
        "https://api.example.com\t",
        "https://api.example.com:0",
        "https://api.example.com:",
        "https://api.example.com:65536",
        "https://api.example.com/#",
        "https://api.example.com?",
        "https://api.example.com\\@evil.example.com",
        "https://a.*.example.com",
        "https://*.127.0.0.1",
        "https://[::1",
        "https://[not-ipv6]",
        "https://under_score.example.com",
        "https://1.2.3",
        "https:/api.example.com",
        "//api.example.com",
    ],
)
def test_anything_the_parser_would_bend_is_refused_on_both_sides(value: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_origin(value)
    with pytest.raises(ValueError, match="is not an origin"):
        server_check(value)
    with pytest.raises(ValueError, match=r"csp\.connectDomains"):
        ResourceCsp(connect_domains=[value])
    with pytest.raises(ValueError, match=r"."):
        host_check(value, wildcard=True)
