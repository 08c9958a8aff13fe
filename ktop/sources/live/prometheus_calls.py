"""prometheus-api-client is synchronous: its calls run in daemon worker threads of their
own, at most a few at a time, each with a timeout (an abandoned call never delays an
exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class PrometheusCalls:
    """Runs blocking prometheus-api-client calls off the event loop: at most
    ``workers`` at a time, each abandoned after ``timeout_s``.

    Each call runs in a daemon thread of its own rather than in a thread pool: a pool's
    threads are joined when the interpreter exits, so one abandoned call (a slow range
    query on a loaded Prometheus) would keep ``ktop triage`` from exiting after its
    report. An abandoned call's thread ends by itself when its request does (the
    client's read timeout bounds it) and frees its slot as soon as it is abandoned.
    """

    def __init__(self, workers: int = 2, timeout_s: float = 30.0) -> None:
        self.timeout_s = timeout_s
        self.workers = workers
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._slots, self._loop = asyncio.Semaphore(self.workers), loop
        return self._slots

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread; TimeoutError after ``timeout_s``."""
        if self._closed:
            raise RuntimeError("the Prometheus calls were closed")
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
        # that arrives as the call completes, and the source would never stop.
        async with asyncio.timeout(self.timeout_s), self._semaphore():
            return await _in_daemon_thread(fn, *args)

    def close(self) -> None:
        """Take no more calls (calls still running finish in the background)."""
        self._closed = True


async def _in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a new daemon thread; its result or exception, awaited."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, exc: BaseException | None) -> None:
        if done.done():
            return  # abandoned: the caller timed out or was cancelled
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result: T | None = fn(*args)
        except BaseException as exc:  # handed to the awaiting task, never lost
            outcome: tuple[T | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="ktop-prometheus", daemon=True).start()
    return await done
