"""``WWW-Authenticate`` challenges of a protected MCP server (401 and 403).

Sources: RFC 6750 §3 (Bearer challenges), RFC 9728 §5.1 (``resource_metadata``), RFC
9449 §7.1 (the ``DPoP`` scheme, ``algs``) and §8 (``DPoP-Nonce``); MCP
``basic/authorization`` §Scope Selection Strategy, §Runtime Insufficient Scope Errors
(both eras).

Rules:
1. Every challenge carries ``resource_metadata`` (401 and 403, both eras: on
   2026-07-28 a 403 can be the first response a client sees).
2. A 401 carries ``scope`` when the server requires or advertises scopes (required
   ones first, else ``scopes_supported``), and ``error``/``error_description`` only
   when a credential was presented and refused.
3. A 403 is ``error="insufficient_scope"`` with ``scope`` naming every scope the
   refused operation needs (not only the missing ones), in a stable order.
4. With DPoP enabled a 401 offers both schemes (a ``Bearer`` and a ``DPoP`` challenge,
   the latter with ``algs``), or only ``DPoP`` when DPoP is required; the error sits on
   the scheme the request used. ``use_dpop_nonce`` comes with a fresh ``DPoP-Nonce``.
5. Parameter values are quoted strings with ``\\`` and ``"`` escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["Challenge", "auth_param", "challenge_headers"]


def auth_param(name: str, value: str) -> str:
    """Rule 5: ``name="value"``."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{name}="{escaped}"'


def _scheme(
    scheme: str,
    resource_metadata: str,
    scopes: Sequence[str],
    error: str | None,
    description: str | None,
    extra: Iterable[tuple[str, str]] = (),
) -> str:
    params = [auth_param("resource_metadata", resource_metadata)]
    if scopes:
        params.append(auth_param("scope", " ".join(scopes)))
    if error is not None:
        params.append(auth_param("error", error))
        if description:
            params.append(auth_param("error_description", description))
    params.extend(auth_param(k, v) for k, v in extra)
    return f"{scheme} {', '.join(params)}"


class Challenge:
    """Builds the challenge headers of one protected resource (rules 1-5)."""

    __slots__ = ("dpop_algs", "dpop_required", "resource_metadata", "scopes_401")

    def __init__(
        self,
        resource_metadata: str,
        scopes_401: Sequence[str],
        *,
        dpop_algs: Sequence[str] | None = None,
        dpop_required: bool = False,
    ) -> None:
        self.resource_metadata = resource_metadata
        self.scopes_401 = tuple(scopes_401)
        self.dpop_algs = tuple(dpop_algs) if dpop_algs is not None else None
        self.dpop_required = dpop_required

    def unauthorized(
        self,
        error: str | None = None,
        description: str | None = None,
        *,
        dpop_error: bool = False,
        nonce: str | None = None,
    ) -> list[tuple[str, str]]:
        """Rules 2 and 4: the headers of a 401."""
        out: list[tuple[str, str]] = []
        if not self.dpop_required:
            err = None if dpop_error else error
            out.append(
                (
                    "www-authenticate",
                    _scheme("Bearer", self.resource_metadata, self.scopes_401, err, description),
                )
            )
        if self.dpop_algs is not None:
            err = error if (dpop_error or self.dpop_required) else None
            out.append(
                (
                    "www-authenticate",
                    _scheme(
                        "DPoP",
                        self.resource_metadata,
                        self.scopes_401,
                        err,
                        description if err else None,
                        [("algs", " ".join(self.dpop_algs))],
                    ),
                )
            )
        if nonce is not None:
            out.append(("dpop-nonce", nonce))
        return out

    def forbidden(self, scopes: Sequence[str], *, dpop: bool = False) -> list[tuple[str, str]]:
        """Rule 3: the headers of a 403 ``insufficient_scope``."""
        return [
            (
                "www-authenticate",
                _scheme(
                    "DPoP" if dpop else "Bearer",
                    self.resource_metadata,
                    scopes,
                    "insufficient_scope",
                    "the operation needs more scopes",
                ),
            )
        ]


def challenge_headers(pairs: Sequence[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """``pairs`` as ASGI header byte pairs."""
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]
