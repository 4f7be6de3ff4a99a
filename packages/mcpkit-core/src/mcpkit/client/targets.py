"""What ``Client(target)`` connects over: the transport for a target, and ``auth=``.

Rules (``Client`` rules 1 and 9):
1. A target is an ``http(s)://`` URL (Streamable HTTP), a command string or argv list
   (stdio), an :class:`~mcpkit.server.Server` (in memory: any
   :class:`~mcpkit.core.memory.MemoryServer`), or a transport (anything with
   ``connect`` and ``kind``); anything else is ``TypeError``.
2. ``auth`` is an :class:`~mcpkit.client.http.HttpPlugin` (an object with ``on_request``
   and ``on_response``), added to the transport's plugins, or an ``httpx2.Auth``, set as
   its ``auth``; only with an HTTP target (a URL or an
   :class:`~mcpkit.client.http.HttpTransport`), else ``TypeError``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any, cast

from mcpkit.client.transport import ClientTransport
from mcpkit.core.memory import MemoryServer

__all__ = ["is_plugin", "transport_for"]


def is_plugin(auth: Any) -> bool:
    return callable(getattr(auth, "on_request", None)) and callable(
        getattr(auth, "on_response", None)
    )


def transport_for(target: Any, *, auth: Any = None) -> ClientTransport:
    """Rule 1: the transport for a URL, a Server object, a command or a transport.

    ``auth`` (rule 9): an :class:`~mcpkit.client.http.HttpPlugin` or an ``httpx2.Auth``;
    only for HTTP (a URL or an :class:`~mcpkit.client.http.HttpTransport`), else
    ``TypeError``.
    """
    if auth is not None:
        from mcpkit.client.http import HttpTransport

        if isinstance(target, str) and target.startswith(("http://", "https://")):
            if is_plugin(auth):
                return HttpTransport(target, plugins=[auth])
            return HttpTransport(target, auth=auth)
        if isinstance(target, HttpTransport):
            if is_plugin(auth):
                target.plugins.append(auth)
            else:
                target.auth = auth
            return target
        raise TypeError(
            f"auth= needs an HTTP target (an http(s):// URL or an HttpTransport), got {target!r}"
        )
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        from mcpkit.client.http import HttpTransport

        return HttpTransport(target)
    if isinstance(target, str):
        argv = shlex.split(target)
        if not argv:
            raise ValueError("empty command")
        from mcpkit.client.stdio import StdioTransport

        return StdioTransport(argv[0], argv[1:])
    if isinstance(target, (list, tuple)):
        from mcpkit.client.stdio import StdioTransport

        argv = [str(a) for a in cast("Sequence[Any]", target)]
        return StdioTransport(argv[0], argv[1:])
    if hasattr(target, "connect") and hasattr(target, "kind"):
        return target
    if isinstance(target, MemoryServer) and not isinstance(target, type):
        from mcpkit.client.memory import MemoryTransport

        return MemoryTransport(target)
    if isinstance(target, type):
        raise TypeError(
            f"cannot connect to the class {target.__name__}: give an instance "
            f"({target.__name__}(...)), a URL, a command or a transport"
        )
    raise TypeError(f"cannot connect to {target!r}: give a URL, a command, a Server or a transport")
