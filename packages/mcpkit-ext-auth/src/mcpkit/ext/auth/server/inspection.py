"""What ``mcpkit inspect`` shows of a protected server: its scope rules.

Registered by :meth:`~.protect.Auth.install` through core's
:func:`~mcpkit.server.inspection.add_inspect_source` (core never imports this
extension).

Rules:
1. One section, key ``"io.mcpkit/auth"``, titled ``Scope rules``: a
   row per requirement (:meth:`~.scopes.ScopePolicy.rules`): ``every request`` for the
   server-wide ``required_scopes``, else ``tool NAME``, ``prompt NAME``, ``resource
   URI``, ``method NAME``; the right-hand side reads ``all of a, b; one of c, d``.
   Its ``--json`` data is ``{"authorizationServers": [...], "resource": ...,
   "rules": [{"kind", "key", "allOf", "anyOf", "source"}]}``, ``source`` the
   ``auth.require(...)`` call or the decorator that made the rule (``""`` for
   ``required_scopes``).
2. The section is shown even with no rule, naming the authorization servers, so a
   protected server never looks unprotected in ``mcpkit inspect``; its heading counts
   the rules (``Scope rules (2)``), not that ``protected by`` row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.ext.auth.server.scopes import ScopePolicy
from mcpkit.ext.auth.server.settings import AuthSettings
from mcpkit.server.inspection import InspectSection

if TYPE_CHECKING:
    from mcpkit.server import Server

__all__ = ["Inspected", "scope_rules_section"]

SECTION_KEY = "io.mcpkit/auth"


class Inspected(Protocol):
    """What the section reads of :class:`~.protect.Auth` (declared here, below it, so
    this module does not import the one that registers it)."""

    @property
    def settings(self) -> AuthSettings: ...

    @property
    def policy(self) -> ScopePolicy: ...

    @property
    def resource(self) -> str: ...


def _needs(all_of: tuple[str, ...], any_of: tuple[str, ...]) -> str:
    parts = [f"all of {', '.join(all_of)}"] if all_of else []
    if any_of:
        parts.append(f"one of {', '.join(any_of)}")
    return "; ".join(parts)


def scope_rules_section(auth: Inspected, _server: Server) -> InspectSection:
    """Rules 1 and 2 for the server ``auth`` protects."""
    rows: list[tuple[str, str]] = [
        ("protected by", ", ".join(auth.settings.authorization_servers) or "(no server)")
    ]
    rules: list[dict[str, Any]] = []
    for kind, key, req in auth.policy.rules():
        where = "every request" if kind == "server" else f"{kind} {key}"
        rows.append((where, _needs(req.all_of, req.any_of)))
        rules.append(
            {
                "kind": kind,
                "key": key,
                "allOf": list(req.all_of),
                "anyOf": list(req.any_of),
                "source": auth.policy.source(kind, key, req),
            }
        )
    data = {
        "authorizationServers": list(auth.settings.authorization_servers),
        "resource": auth.resource,
        "rules": rules,
    }
    return InspectSection(SECTION_KEY, "Scope rules", rows=rows, data=data, count=len(rules))
