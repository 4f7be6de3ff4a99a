"""What a server declares to protect itself, and what composition does with it.

A server protects itself at two levels (issue 25 §4):

- **inside dispatch**: list filters (:meth:`~mcpkit.server.Server.add_list_filter`:
  auth's ``hide_unauthorized``, Apps visibility) and receive middleware
  (:meth:`~mcpkit.server.Server.add_middleware`: a tasks extension's ownership). They run
  wherever the server's own handlers run: a mounted server's handlers run inside its
  middleware with its filters (mount rules 4, 9), a proxied in-memory ``Server`` serves
  the proxy's requests itself. They travel with it and need no record here.
- **at its HTTP endpoint**: request guards and HTTP middleware (authentication, scope
  rules, quotas). Only the HTTP endpoint of the server being served runs them, so a
  mounted server, or a ``Server`` proxied in memory, would lose them. Each is recorded as
  a :class:`Protection`, and composition either carries it onto the outer server or
  refuses.

Rules:
1. :meth:`~mcpkit.server.Server.add_request_guard` and
   :meth:`~mcpkit.server.Server.add_http_middleware` record a protection: the one passed
   as ``protection=`` (an extension names itself, its remedy and how it is carried; one
   :class:`Protection` may cover several hooks), else a generic one naming the hook,
   which cannot be carried. :meth:`~mcpkit.server.Server.add_protection` records one
   directly. ``Server.protections`` lists them in registration order, each once.
2. ``parent.mount(child, ...)`` and ``proxy(server)`` compose: for each protection of the
   inner server, its ``carry(composition)`` returns a function that installs an
   equivalent on the outer server, or None when the outer server cannot enforce it (it
   is not protected alike). Every protection is asked first; when one answers None the
   composition is refused with :class:`ProtectionError` (a ``ValueError``) naming each
   such protection and its remedy, and nothing is installed. Else every installer runs:
   the protection travels. Failing closed is the default.
3. ``mount(..., parent_protects=True)`` is the caller's statement that the parent
   enforces the child's protections itself (for example a hand-written guard registered
   on the parent again, with the prefixed names): nothing is asked or installed.
4. A composition is remembered (weakly): a protection the inner server records after it
   was composed (``protect(child, ...)`` after ``parent.mount(child)``, a guard added to
   a proxied server after the proxy started) is carried onto every outer server then, or
   :meth:`~mcpkit.server.Server.add_protection` raises :class:`ProtectionError` naming
   it, and the inner server does not record it. A ``parent_protects=True`` mount is not
   remembered (rule 3).
5. A proxy checks its in-memory ``Server`` target when it starts serving (its
   lifespan, once), since the proxy server is usually protected after ``proxy()``
   returns; a refusal fails the start. A URL or command target enforces its own
   protections against the proxy's credentials; a proxy holding credentials of its own
   (``auth=``) refuses an anonymous HTTP caller (403) until the proxy is protected.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from mcpkit.server.attached import attached, peek

if TYPE_CHECKING:
    from mcpkit.core.shapes import JSON
    from mcpkit.server.guards import HTTPMiddleware, RequestGuard

__all__ = [
    "Composable",
    "Composition",
    "Installer",
    "Protection",
    "ProtectionError",
    "compose",
    "composed_later",
]


class Composable(Protocol):
    """A server as a composition reads it (every :class:`~mcpkit.server.Server` is one;
    named here so that this module stays below the server)."""

    @property
    def info(self) -> JSON: ...
    @property
    def protections(self) -> list[Protection]: ...
    def add_protection(self, protection: Protection) -> None: ...
    def add_request_guard(
        self, guard: RequestGuard, *, protection: Protection | None = None
    ) -> None: ...
    def add_http_middleware(
        self, wrap: HTTPMiddleware, *, protection: Protection | None = None
    ) -> None: ...


Installer = Callable[[], None]
"""Installs a carried protection on the outer server (rule 2)."""


@dataclass(frozen=True, slots=True)
class Composition:
    """One composition: ``inner`` served as part of ``outer``.

    - ``kind``: ``"mount"`` or ``"proxy"``;
    - ``prefix``: what ``outer`` puts before ``inner``'s tool and prompt names
      (``"weather_"``; ``""`` without a namespace and for a proxy).
    """

    outer: Composable
    inner: Composable
    kind: Literal["mount", "proxy"]
    prefix: str = ""

    def inner_name(self, outer_name: str) -> str | None:
        """``outer_name`` (a tool or prompt name as ``outer`` lists it) as ``inner``
        knows it, or None when it cannot be ``inner``'s."""
        if not outer_name.startswith(self.prefix):
            return None
        return outer_name[len(self.prefix) :]


@dataclass(eq=False, slots=True)
class Protection:
    """Something a server does to protect itself at its HTTP endpoint (rule 1).

    - ``name``: what it is, for the refusal ("mcpkit-ext-auth protect()").
    - ``remedy``: how to protect the outer server so that the composition is allowed.
    - ``carry``: ``(composition) -> installer | None`` (rule 2); None (the default)
      never carries, so every composition is refused unless ``parent_protects``.
    """

    name: str
    remedy: str
    carry: Callable[[Composition], Installer | None] | None = None


class ProtectionError(ValueError):
    """A composition that would drop a protection (rule 2); the message names each one
    and how to protect the outer server."""


def generic(hook: str, target: object) -> Protection:
    """Rule 1: the record of a guard or HTTP middleware registered without one."""
    what = getattr(target, "__qualname__", None) or type(target).__name__
    return Protection(
        f"{hook} {what}",
        f"register an equivalent {hook} on the outer server (tool and prompt names as it "
        "lists them), then mount with parent_protects=True",
    )


_Compositions = list[tuple[weakref.ref["Composable"], Literal["mount", "proxy"], str]]
"""Rule 4: the (outer server, kind, prefix) of each composition of an inner server,
kept on the inner server (:mod:`mcpkit.server.attached`)."""


def compose(
    outer: Composable, inner: Composable, kind: Literal["mount", "proxy"], prefix: str
) -> None:
    """Rule 2: carry every protection of ``inner`` onto ``outer``, or raise
    :class:`ProtectionError` having installed nothing. Remembers the composition
    (rule 4)."""
    installers = _plan(Composition(outer, inner, kind, prefix), inner.protections, "")
    for install in installers:
        install()
    attached(inner, __name__, _Compositions).append((weakref.ref(outer), kind, prefix))


def composed_later(inner: Composable, protection: Protection) -> None:
    """Rule 4: carry ``protection``, which ``inner`` is about to record, onto every
    server ``inner`` was composed into, or raise :class:`ProtectionError` having
    installed nothing."""
    installers: list[Installer] = []
    known: _Compositions = peek(inner, __name__) or []
    for ref, kind, prefix in list(known):
        outer = ref()
        if outer is not None:
            site = Composition(outer, inner, kind, prefix)
            installers += _plan(site, [protection], "a protection added after composing: ")
    for install in installers:
        install()


def _plan(site: Composition, protections: list[Protection], why: str) -> list[Installer]:
    """Rule 2: the installers carrying ``protections`` to ``site``, or raise."""
    installers: list[Installer] = []
    refused: list[Protection] = []
    for protection in protections:
        installer = protection.carry(site) if protection.carry is not None else None
        if installer is None:
            refused.append(protection)
        else:
            installers.append(installer)
    if refused:
        what = "mounting" if site.kind == "mount" else "proxying"
        lines = "; ".join(f"{p.name}: {p.remedy}" for p in refused)
        raise ProtectionError(
            f"{why}{what} {site.inner.info.get('name')!r} into "
            f"{site.outer.info.get('name')!r} would drop what protects it at its HTTP "
            f"endpoint (the outer server's endpoint is the one served). {lines}"
        )
    return installers
