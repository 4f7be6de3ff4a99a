"""WWW-Authenticate parsing (RFC 9110 §11.6.1) and origins, as the client flow reads them."""

from __future__ import annotations

from mcpkit.ext.auth.client._http import bearer_challenge, origin_of, parse_challenges


def test_several_challenges_quoted_and_token_values() -> None:
    header = (
        'Basic realm="x", Bearer resource_metadata="https://rs/.well-known/x", '
        'scope="a b", error=insufficient_scope, DPoP algs="ES256", error="use_dpop_nonce"'
    )
    parsed = parse_challenges(header)
    assert [c.scheme for c in parsed] == ["basic", "bearer", "dpop"]
    assert dict(parsed[1]) == {
        "resource_metadata": "https://rs/.well-known/x",
        "scope": "a b",
        "error": "insufficient_scope",
    }
    assert parsed[2]["error"] == "use_dpop_nonce"
    assert bearer_challenge(header)["scope"] == "a b"


def test_escapes_bare_scheme_and_no_challenge() -> None:
    assert bearer_challenge(r'Bearer error_description="say \"hi\""')["error_description"] == (
        'say "hi"'
    )
    assert dict(bearer_challenge("Bearer")) == {}
    assert dict(bearer_challenge("")) == {}
    assert dict(bearer_challenge('Basic realm="r"')) == {}


def test_origins_fold_case_and_default_ports() -> None:
    assert origin_of("HTTPS://MCP.Example.com:443/mcp?x") == "https://mcp.example.com"
    # kind-ok: fixed-port parsed only, never served
    assert origin_of("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000"
    # kind-ok: fixed-port parsed only, never served
    assert origin_of("http://[::1]:80/") == "http://[::1]"
