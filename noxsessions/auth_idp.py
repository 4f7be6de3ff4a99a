"""nox session ``ext-auth-idp``: mcpkit-ext-auth against a real OpenID Provider.

Rules:
1. mcpkit-ext-auth is installed alone with its ``test`` group (common rule 1); the Node
   toolchain (Node 22, npm ``oidc-provider``, the TypeScript SDK v1 and v2 clients) comes
   from ``conformance/toolchain.py`` (``ensure``), and the session fails when it cannot.
2. It runs ``packages/mcpkit-ext-auth/tests_idp``: the tests start the OpenID Provider
   (``tests_idp/op_server.mjs``) themselves on loopback over TLS (``trustme``), so the
   ``ext-auth`` session stays free of Node; paths after ``--`` replace the default.
3. What runs there: Authlib's client against the OP (the harness's proof); the official
   Python SDK's, the TypeScript SDK's (v1, v2) and mcpkit's OAuth clients through the
   OAuth proxy in front of the OP, and against the development authorization server;
   the conformance suite's authorization-server scenarios (0.2.0-alpha.12) against the
   proxy and the development server. Every peer binds 127.0.0.1 (the suite's callback
   listener too), so no network namespace is needed.
"""

from __future__ import annotations

from pathlib import Path

import nox

from noxsessions.common import pytest, sync

ROOT = Path(__file__).resolve().parent.parent
TESTS = "packages/mcpkit-ext-auth/tests_idp"


@nox.session(name="ext-auth-idp")
def ext_auth_idp(session: nox.Session) -> None:
    """mcpkit-ext-auth alone against a real OpenID Provider (npm oidc-provider, DCR off,
    TLS on loopback): Authlib's client, and the official Python SDK's, the TypeScript
    SDK's (v1, v2) and mcpkit's OAuth clients through the OAuth proxy, driven headlessly
    through the proxy's consent and the OP's login and consent forms; the conformance
    suite's authorization-server scenarios against the proxy."""
    sync(session, "mcpkit-ext-auth", "test")
    session.run("python", str(ROOT / "conformance" / "toolchain.py"), "ensure", silent=True)
    pytest(session, TESTS)
