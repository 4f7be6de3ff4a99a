"""Sync handlers: the dedicated worker pool (``server/threads.py``) and ``inline=True``
(``server/typed.py`` rule 4)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import anyio
import pytest
from peer import connect

from mcpkit.server import Server
from mcpkit.server import threads as T

pytestmark = pytest.mark.anyio

REQUEST_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("request_tag", default="-")


async def test_every_handler_kind_runs_in_the_pool_or_inline_on_the_loop() -> None:
    """Rule 1 and typed rule 4: ``def`` handlers of every kind run in a ``mcpkit-sync``
    thread; with ``inline=True`` on the event loop's own thread."""
    server = Server("s")
    seen: dict[str, str] = {}

    def record(key: str) -> str:
        seen[key] = threading.current_thread().name
        return key

    server.add_tool(lambda: record("tool"), name="threaded")
    server.add_tool(lambda: record("tool-inline"), name="inline", inline=True)
    server.add_resource(lambda: record("resource"), "res://a")
    server.add_resource(lambda: record("resource-inline"), "res://b", inline=True)
    server.add_resource(lambda n: record(f"template-{n}"), "res://t/{n}", inline=True)
    server.add_prompt(lambda: record("prompt"), name="p")
    server.add_prompt(lambda: record("prompt-inline"), name="q", inline=True)
    loop_thread = threading.current_thread().name
    async with connect(server) as peer:
        await peer.call_tool("threaded")
        await peer.call_tool("inline")
        await peer.request("resources/read", {"uri": "res://a"})
        await peer.request("resources/read", {"uri": "res://b"})
        await peer.request("resources/read", {"uri": "res://t/x"})
        await peer.request("prompts/get", {"name": "p"})
        await peer.request("prompts/get", {"name": "q"})
    threaded = {k: v for k, v in seen.items() if "inline" not in k and "template" not in k}
    assert set(threaded) == {"tool", "resource", "prompt"}
    assert all(name.startswith("mcpkit-sync") for name in threaded.values())
    inline = {k: v for k, v in seen.items() if k not in threaded}
    assert set(inline) == {"tool-inline", "resource-inline", "template-x", "prompt-inline"}
    assert set(inline.values()) == {loop_thread}


async def test_the_handler_sees_the_callers_context_variables() -> None:
    """Rule 3."""
    token = REQUEST_TAG.set("call-7")
    try:
        assert await T.run_sync(REQUEST_TAG.get) == "call-7"
    finally:
        REQUEST_TAG.reset(token)


async def test_what_the_handler_raises_is_raised_to_the_caller() -> None:
    def fail() -> None:
        raise LookupError("nope")

    with pytest.raises(LookupError, match="nope"):
        await T.run_sync(fail)


async def test_cancelling_waits_for_the_thread_then_takes_effect() -> None:
    """Rule 4: the cancellation lands only once the handler returned."""
    finished = threading.Event()

    def slow() -> str:
        time.sleep(0.3)
        finished.set()
        return "done"

    landed_after_finish: list[bool] = []
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                try:
                    await T.run_sync(slow)
                except BaseException:
                    landed_after_finish.append(finished.is_set())
                    raise

            tg.start_soon(call)
            await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
    assert landed_after_finish == [True]


async def test_serving_a_server_with_threaded_handlers_prestarts_the_pool() -> None:
    """Rule 2: the threads exist before the first request."""
    server = Server("s")

    @server.tool
    def echo(text: str) -> str:
        return text

    async with server.lifespan():
        names = [t.name for t in threading.enumerate() if t.name.startswith("mcpkit-sync")]
    assert len(names) >= T.PRESTART_WORKERS


async def test_calls_beyond_the_pool_wait_for_a_free_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1: the pool is bounded; calls queue, none is lost."""
    monkeypatch.setattr(T, "_pool", T._Pool(2))  # pyright: ignore[reportPrivateUsage]
    running = 0
    peak = 0
    lock = threading.Lock()

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return i

    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        for i in range(8):

            async def one(i: int = i) -> None:
                results.append(await T.run_sync(lambda: work(i)))

            tg.start_soon(one)
    assert sorted(results) == list(range(8))
    assert peak == 2


async def test_consecutive_calls_reuse_the_most_recently_idle_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1: under light load one warm thread serves every call.

    A worker hands its result back before it puts itself on the idle stack, so on a busy
    machine the next call can arrive first and (rightly) go to another idle thread. The
    test waits until every thread of its own pool is idle again before each call: that
    is what "light load" means, and the claim is then exact, whatever the machine does.
    """
    pool = T._Pool(T.MAX_WORKERS)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(T, "_pool", pool)
    T.prestart()

    async def all_idle() -> None:
        with anyio.fail_after(10):
            while True:
                with pool.lock:
                    if len(pool.idle) == pool.threads:
                        return
                await anyio.sleep(0.001)

    names: set[int | None] = set()
    for _ in range(20):
        await all_idle()
        names.add(await T.run_sync(lambda: threading.current_thread().ident))
    assert len(names) == 1


async def test_a_cancelled_caller_withdraws_a_job_no_thread_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 4: a job still waiting for a thread never runs once its caller is gone."""
    monkeypatch.setattr(T, "_pool", T._Pool(1))  # pyright: ignore[reportPrivateUsage]
    release = threading.Event()
    ran: list[str] = []

    def hold() -> None:
        release.wait(10)
        ran.append("hold")

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(T.run_sync, hold)
            await anyio.sleep(0.05)
            with anyio.move_on_after(0.05):
                await T.run_sync(lambda: ran.append("waiting"))  # queued behind hold
            release.set()
    await T.run_sync(lambda: None)  # the thread went through the queue once more
    assert ran == ["hold"]


def test_inline_is_a_checked_option() -> None:
    """The option is typed (ToolOptions etc.); a misspelling names it."""
    server = Server("s")
    with pytest.raises(TypeError, match="inline"):
        server.add_tool(lambda: 1, name="t", inlne=True)  # type: ignore[call-arg]


async def _until(flag: threading.Event) -> None:
    """Wait for ``flag`` (set in a worker thread) without blocking the event loop."""
    with anyio.fail_after(10):
        while not flag.is_set():
            await anyio.sleep(0.001)


async def test_a_blocked_def_tool_stalls_no_other_call() -> None:
    """Rule 1 (issue 31): while a ``def`` tool is blocked, another ``def`` tool and an
    ``async def`` tool called after it are answered; the blocked one answers once freed."""
    server = Server("s")
    entered, gate = threading.Event(), threading.Event()

    @server.tool
    def blocking() -> str:  # pyright: ignore[reportUnusedFunction]
        entered.set()
        gate.wait(10)
        return "released"

    @server.tool
    def quick() -> str:  # pyright: ignore[reportUnusedFunction]
        return "quick"

    @server.tool
    async def quick_async() -> str:  # pyright: ignore[reportUnusedFunction]
        return "async"

    answered: list[str] = []
    async with connect(server) as peer, anyio.create_task_group() as tg:

        async def call(name: str) -> None:
            result = await peer.call_tool(name)
            answered.append(result["content"][0]["text"])

        tg.start_soon(call, "blocking")
        await _until(entered)
        with anyio.fail_after(10):
            await call("quick")
            await call("quick_async")
        assert answered == ["quick", "async"]
        assert not gate.is_set()
        gate.set()
    assert answered == ["quick", "async", "released"]


async def test_a_burst_queued_behind_a_blocking_job_is_run_by_other_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1: jobs submitted together wake one thread; one that takes a job while
    others are queued wakes the next before running its own, so the jobs behind a
    blocking first one all finish while it is still blocked."""
    monkeypatch.setattr(T, "_pool", T._Pool(T.MAX_WORKERS))  # pyright: ignore[reportPrivateUsage]
    entered, gate = threading.Event(), threading.Event()
    done: list[int] = []

    def first() -> str:
        entered.set()
        gate.wait(10)
        return "first"

    async with anyio.create_task_group() as tg:
        tg.start_soon(T.run_sync, first)
        for i in range(6):  # queued in the same loop turn as the first job

            async def one(i: int = i) -> None:
                done.append(await T.run_sync(lambda: i))

            tg.start_soon(one)
        await _until(entered)
        with anyio.fail_after(10):
            while len(done) < 6:
                await anyio.sleep(0.001)
        assert not gate.is_set()
        gate.set()
    assert sorted(done) == list(range(6))


async def test_results_that_arrive_together_wake_the_loop_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 7: results finished while the loop is busy are settled by one wake-up."""
    monkeypatch.setattr(T, "_pool", T._Pool(T.MAX_WORKERS))  # pyright: ignore[reportPrivateUsage]
    loop = asyncio.get_running_loop()
    wakes = 0
    real = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal wakes
        wakes += 1
        return real(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    finished = threading.Semaphore(0)

    def work(i: int) -> int:
        finished.release()
        return i

    tasks = [asyncio.ensure_future(T.run_sync(lambda i=i: work(i))) for i in range(8)]
    await asyncio.sleep(0)  # the jobs are submitted
    for _ in range(8):  # the loop is held (busy) until every job has finished
        assert finished.acquire(timeout=10)
    inbox = T._inbox(loop)  # pyright: ignore[reportPrivateUsage]
    deadline = time.monotonic() + 10
    while len(inbox.done) < 8:  # the last result is appended just after its release
        assert time.monotonic() < deadline
        time.sleep(0.001)  # noqa: ASYNC251 - holding the loop busy is the point
    assert await asyncio.gather(*tasks) == list(range(8))
    assert wakes == 1


def test_a_finished_event_loop_is_not_kept_by_the_pool() -> None:
    """Rule 7: the per-loop inbox holds its loop weakly; once a loop that used the pool
    is closed and dropped, it is collected."""
    import gc
    import weakref

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(T.run_sync(lambda: 3)) == 3
    finally:
        loop.close()
    ref = weakref.ref(loop)
    del loop
    gc.collect()
    assert ref() is None


class _ParkWatch(T._Pool):  # pyright: ignore[reportPrivateUsage]
    """A pool that reports each park (the thread is on the idle stack, not yet waiting)
    and, while ``go`` is clear, holds the thread there, so a test acts in that moment."""

    def __init__(self, max_workers: int) -> None:
        super().__init__(max_workers)
        self.parking = threading.Semaphore(0)
        self.go = threading.Event()

    def _park(self, inbox: Any) -> bool:
        self.parking.release()
        self.go.wait(10)
        return super()._park(inbox)


async def _acquired(sem: threading.Semaphore) -> None:
    """Take ``sem`` (released in a worker thread) without blocking the event loop."""
    with anyio.fail_after(10):
        while not sem.acquire(blocking=False):
            await anyio.sleep(0.001)


async def test_a_job_queued_just_as_a_thread_parks_still_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1, no lost wake-up: the job arrives after the thread put itself on the idle
    stack but before it waits; the wake-up sent to it is kept, and the job runs."""
    pool = _ParkWatch(1)
    monkeypatch.setattr(T, "_pool", pool)
    pool.prestart(1)
    await _acquired(pool.parking)  # on the idle stack, held before its wait
    call = asyncio.ensure_future(T.run_sync(lambda: "ran"))
    await asyncio.sleep(0)  # submitted: the wake-up goes to the thread not yet waiting
    with pool.lock:
        assert (pool.idle, pool.searching, pool.threads) == ([], 1, 1)
    pool.go.set()
    with anyio.fail_after(10):
        assert await call == "ran"


async def test_a_burst_queued_in_one_loop_turn_wakes_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 1: the calls of one loop turn (a read's worth of requests) send one wake-up
    between them; the thread that takes the first job wakes the next one itself."""
    pool = _ParkWatch(T.MAX_WORKERS)
    monkeypatch.setattr(T, "_pool", pool)
    pool.prestart(4)
    for _ in range(4):
        await _acquired(pool.parking)  # every thread idle, held before its wait
    calls = [asyncio.ensure_future(T.run_sync(lambda i=i: i)) for i in range(8)]
    await asyncio.sleep(0)  # all eight submitted in this turn
    with pool.lock:
        assert (len(pool.idle), pool.searching, len(pool.waiting)) == (3, 1, 8)
    pool.go.set()
    with anyio.fail_after(10):
        assert await asyncio.gather(*calls) == list(range(8))
