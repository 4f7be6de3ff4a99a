"""The in-process backend: generated tools call your servicer object directly.

Rules:
1. The servicer is any object with the service's methods, called as
   ``method(request, context)`` like a grpcio servicer, so one object can serve both
   gRPC and MCP; one that cannot be called so (the servicer's class passed instead of
   an instance) is a ``TypeError`` at registration. ``async def`` methods (and async
   generators) run on the event loop; plain ones in a worker thread, a streamed
   iterator's ``next`` too.
2. ``context`` is a :class:`ServicerContext`: ``abort(code, details)`` raises the status
   error that becomes a tool error (``runtime`` rule 2); ``set_code``/``set_details``
   without raising make a non-OK status the error too; ``time_remaining()`` is the
   tool's timeout left (None without one); ``invocation_metadata()`` is empty;
   ``mcp`` is the MCP request's :class:`~mcpkit.server.Context`, for the elicitation
   and sampling helpers (async methods only: a thread cannot await them).
3. A status ``code`` is a ``grpc.StatusCode``, any enum, or its canonical name; it is
   reported by name (``NOT_FOUND``).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator
from typing import Any, NoReturn, cast

import anyio.to_thread
from google.protobuf.message import Message

from mcpkit.experimental.protogen.runtime import RpcFailure
from mcpkit.server import Context

__all__ = ["InProcess", "ServicerContext", "code_name"]

_END = object()


def _takes_two(fn: Any) -> bool:
    """Whether ``fn(request, context)`` binds (a callable without a signature passes)."""
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def code_name(code: Any) -> str:
    """Rule 3."""
    name = getattr(code, "name", None)
    return str(name if isinstance(name, str) else code)


class ServicerContext:
    """What an in-process servicer method gets as ``context`` (rule 2)."""

    def __init__(self, mcp: Context[Any], timeout_s: float | None) -> None:
        self.mcp = mcp
        self._deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._code: Any = None
        self._details = ""

    def abort(self, code: Any, details: str = "") -> NoReturn:
        raise RpcFailure(code_name(code), details)

    def set_code(self, code: Any) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        return True

    def check(self) -> None:
        """Raise the status a method set without raising, if not OK."""
        if self._code is not None and code_name(self._code) != "OK":
            raise RpcFailure(code_name(self._code), self._details)


class InProcess:
    """The backend calling ``servicer``'s methods (rule 1)."""

    def __init__(self, servicer: Any) -> None:
        self.servicer = servicer
        # kind-ok: unbounded-table one entry per generated method name, never a peer value
        self._methods: dict[str, tuple[Any, bool]] = {}

    def require(self, names: list[str]) -> None:
        """``TypeError`` naming every method of ``names`` the servicer lacks."""
        missing = [n for n in names if not callable(getattr(self.servicer, n, None))]
        if missing:
            raise TypeError(
                f"the servicer {type(self.servicer).__name__} has no method "
                f"{', '.join(sorted(set(missing)))}; add it (request, context) -> response"
            )
        unfit = sorted({n for n in names if not _takes_two(getattr(self.servicer, n))})
        if unfit:
            hint = (
                f"; pass an instance ({self.servicer.__name__}()), not the class"
                if isinstance(self.servicer, type)
                else ""
            )
            raise TypeError(
                f"the servicer's {', '.join(unfit)} cannot be called as (request, context){hint}"
            )

    def _method(self, name: str) -> tuple[Any, bool]:
        """The bound method and whether it is ``async def`` (looked up once)."""
        found = self._methods.get(name)
        if found is None:
            fn = getattr(self.servicer, name)
            found = self._methods[name] = (fn, inspect.iscoroutinefunction(fn))
        return found

    async def unary(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> Message:
        fn, is_async = self._method(method)
        context = ServicerContext(ctx, timeout_s)
        if is_async:
            result = await fn(request, context)
        else:
            result = await anyio.to_thread.run_sync(fn, request, context)
            if inspect.isawaitable(result):
                result = await result
        context.check()
        return result

    async def stream(
        self,
        service: str,
        method: str,
        request: Message,
        response: type[Message],
        ctx: Context[Any],
        timeout_s: float | None,
    ) -> AsyncIterator[Message]:
        fn = getattr(self.servicer, method)
        context = ServicerContext(ctx, timeout_s)
        if inspect.isasyncgenfunction(fn) or inspect.iscoroutinefunction(fn):
            result = fn(request, context)
            if inspect.isawaitable(result):
                result = await result
        else:
            result = await anyio.to_thread.run_sync(fn, request, context)
        if hasattr(result, "__aiter__"):
            async for item in result:
                yield item
        else:
            iterator = iter(result)
            while (item := await anyio.to_thread.run_sync(next, iterator, _END)) is not _END:
                yield cast(Message, item)
        context.check()
