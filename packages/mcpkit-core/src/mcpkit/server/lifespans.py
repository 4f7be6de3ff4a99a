"""Running a server's lifespans around serving (:mod:`mcpkit.server.app` rules 7, 9).

Rules:
1. The lifespans are entered in a task of their own, in registration order (the
   ``Server(lifespan=...)`` one first): a failure while entering them fails startup, but
   a failure of their background work while serving is logged (CRITICAL, with the
   traceback) and contained. It ends those lifespans only; it never cancels the
   transport hosting them, so requests keep being served.
2. The first value other than None that they yield is the server's lifespan state
   (``Server.lifespan_state``, ``ctx.lifespan``) from the moment they are all entered
   until they start exiting.
3. Once every lifespan is entered (so what a lifespan registers counts), the server's
   rules keyed by a name or URI are checked against what it registers
   (:func:`mcpkit.server.names.check_names`): a protecting rule naming nothing fails
   startup with :class:`~mcpkit.server.names.NameRuleError`, and the lifespans are left
   again. From then until they exit the server counts as serving: a rule declared then
   is checked on declaration (:func:`mcpkit.server.names.check_declared`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc

from mcpkit.server.names import check_names, serving

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase

__all__ = ["serve_lifespans"]

logger = logging.getLogger("mcpkit.server")

S = TypeVar("S", bound="ServerBase")
"""The server class the lifespan factories take (``Server``; :data:`mcpkit.server.app.Lifespan`)."""


@asynccontextmanager
async def serve_lifespans(
    server: S,
    factories: Sequence[Callable[[S], AbstractAsyncContextManager[Any]]],
    states: list[Any],
) -> AsyncGenerator[None]:
    """Hold ``factories`` open around the body (rule 1); ``states`` receives the lifespan
    state while they are (rule 2). Entry and exit errors are raised here, as they are.
    The server's name-keyed rules are checked once they are entered (rule 3)."""
    if not factories:
        check_names(server)
        async with _serving(server):
            yield
        return
    stop = anyio.Event()
    errors: list[Exception] = []
    refused: list[Exception] = []  # raised as it is, not in the task group's group
    async with anyio.create_task_group() as tg:
        if await tg.start(_hold, server, factories, states, stop, errors):
            try:
                check_names(server)
            except Exception as exc:
                refused.append(exc)
            try:
                if not refused:
                    async with _serving(server):
                        yield
            finally:
                stop.set()
    if refused:
        raise refused[0]
    if errors:
        raise errors[0]


@asynccontextmanager
async def _serving(server: ServerBase) -> AsyncGenerator[None]:
    """Rule 3: count ``server`` as serving around the body."""
    serving(server, 1)
    try:
        yield
    finally:
        serving(server, -1)


async def _hold(
    server: S,
    factories: Sequence[Callable[[S], AbstractAsyncContextManager[Any]]],
    states: list[Any],
    stop: anyio.Event,
    errors: list[Exception],
    *,
    task_status: anyio.abc.TaskStatus[bool],
) -> None:
    """Rule 1: hold the lifespans open until ``stop``; contain what kills them while
    serving; hand entry and exit errors to :func:`serve_lifespans` (``errors``)."""
    started = False
    try:
        async with AsyncExitStack() as stack:
            state: Any = None
            for factory in factories:
                value = await stack.enter_async_context(factory(server))
                if state is None:
                    state = value
            states.append(state)
            stack.callback(states.remove, state)
            task_status.started(True)
            started = True
            await stop.wait()
    except Exception as exc:
        if not started or stop.is_set():
            errors.append(exc)
        else:
            logger.critical(
                "a server lifespan (extension background work) failed while serving; "
                "it has stopped, the server goes on serving without it",
                exc_info=True,
            )
    if not started:
        task_status.started(False)
