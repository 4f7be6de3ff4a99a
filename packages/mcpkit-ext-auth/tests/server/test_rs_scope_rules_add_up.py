"""Scope rules of both styles add up (scopes.py rules 6-7, protect.py rule 6; reviewer
faults 1, 3 and 5 of issue 26): a later rule never loosens an earlier one, a failed
registration leaves the rules as they were, and a decorator-made rule is the
decorator's, not a ``require()`` start-up refuses after ``remove_tool``."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.auth.server import AuthSettings, protect
from mcpkit.ext.auth.server.scopes import Requirement
from mcpkit.server import Server

SETTINGS = AuthSettings(
    server_url="https://mcp.example.com/mcp",
    authorization_servers=["https://login.example.com"],
    jwks_url="https://login.example.com/jwks",
)
READER = frozenset({"notes:read"})


def purge() -> str:
    return "purged"


def test_require_after_a_decorator_rule_adds_to_it_instead_of_replacing_it() -> None:
    server = Server("notes")
    auth = protect(server, SETTINGS)
    server.tool(all_of_scopes=["notes:admin"])(purge)  # pyright: ignore[reportCallIssue]
    auth.require(tool="purge", any_of=["notes:read", "notes:write"])
    assert not auth.policy.permits(READER, "tools/call", "tools", "purge")
    admin = frozenset({"notes:admin", "notes:read"})
    assert auth.policy.permits(admin, "tools/call", "tools", "purge")
    assert not auth.policy.permits(frozenset({"notes:admin"}), "tools/call", "tools", "purge")


@pytest.mark.parametrize(
    "first",
    [
        {"tool": "purge"},
        {"method": "tools/call"},
        {"resource": "notes://{title}"},
    ],
)
def test_two_requires_for_one_item_both_hold(first: dict[str, Any]) -> None:
    server = Server("notes")
    auth = protect(server, SETTINGS)
    server.add_tool(purge)
    auth.require(**first, all_of=["notes:admin"])
    auth.require(**first, all_of=["notes:read"])
    auth.require(**first, all_of=["notes:read"])  # the same rule twice counts once
    kind, key = next(iter(first.items()))
    method = "resources/read" if kind == "resource" else "tools/call"
    item_kind = None if kind == "method" else f"{kind}s"
    target = "notes://a" if kind == "resource" else "purge"
    assert not auth.policy.permits(READER, method, item_kind, target)
    both = frozenset({"notes:admin", "notes:read"})
    assert auth.policy.permits(both, method, item_kind, target)
    assert len([r for r in auth.policy.rules() if r[1] == key]) == 2


def test_a_failed_registration_leaves_the_scope_rules_as_they_were() -> None:
    server = Server("notes")
    auth = protect(server, SETTINGS)
    server.add_tool(purge, all_of_scopes=["notes:admin"])  # pyright: ignore[reportCallIssue]
    before = auth.policy.requirements_for("tools/call", "tools", "purge")
    with pytest.raises(ValueError, match="cannot be sent as JSON"):
        server.add_tool(purge, all_of_scopes=["notes:read"], meta={"k": object()})  # pyright: ignore[reportCallIssue]
    assert auth.policy.requirements_for("tools/call", "tools", "purge") == before
    assert before == [Requirement(("notes:admin",))]


def test_removing_a_decorated_tool_starts_and_its_rule_still_holds_if_it_returns() -> None:
    server = Server("notes")
    auth = protect(server, SETTINGS)
    server.tool(all_of_scopes=["admin"])(purge)  # pyright: ignore[reportCallIssue]
    server.remove_tool("purge")
    server.http_app()  # before: "auth.require(tool='purge', ...) ... pass late_bound=True"
    assert auth.policy.named_rules() == []
    server.add_tool(purge)  # added again without options: still protected (fail closed)
    assert not auth.policy.permits(frozenset(), "tools/call", "tools", "purge")
    assert auth.policy.source("tool", "purge", Requirement(("admin",))) == (
        "@server.tool(all_of_scopes=['admin']) of tool 'purge'"
    )
