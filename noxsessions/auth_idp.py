"""nox session ``ext-auth-idp``: mcpkit-ext-auth against a real OpenID Provider.

Rules:
1. mcpkit-ext-auth is installed alone with its ``test`` group (common rule 1); the Node
   toolchain (Node 22, npm ``oidc-provider``, the TypeScript SDK v1 and v2 clients) comes
   from ``conformance/toolchain.py`` (``ensure``), and the session fails when it cannot.
2. It runs ``packages/mcpkit-ext-auth/tests_idp``: the tests start the OpenID Provider
   (``tests_idp/op_server.mjs``) themselves on loopback over TLS (``trustme``), so the
   ``ext-auth`` session stays free of Node; paths after ``--`` replace the default.
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
    TLS on loopback): Authlib's client, the official Python SDK's and the TypeScript
    SDK's OAuth clients, driven headlessly through the OP's login and consent forms."""
    sync(session, "mcpkit-ext-auth", "test")
    session.run("python", str(ROOT / "conformance" / "toolchain.py"), "ensure", silent=True)
    pytest(session, TESTS)
