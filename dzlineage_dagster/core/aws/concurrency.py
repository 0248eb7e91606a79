"""Calls that do not depend on each other, made at once: reads that cost one latency instead of
the sum of theirs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def at_once(*calls: Callable[[], T]) -> list[T]:
    """Each call on its own thread, their answers in the calls' order. When calls fail, the
    first one's error (in the calls' order) is raised, once all of them are done.

    The threads are daemon threads, and the caller waits for them interruptibly: a
    KeyboardInterrupt (Ctrl-C, or `dzlineage sync`'s second signal, "stop now") leaves at once
    rather than after a call that hangs, and the process does not wait for such a call when it
    exits (a ThreadPoolExecutor's threads are joined at exit).
    """
    if len(calls) < 2:
        return [call() for call in calls]
    answers: list[Any] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)

    def make(index: int, call: Callable[[], T]) -> None:
        try:
            answers[index] = call()
        except BaseException as error:  # raised again on the caller's thread
            errors[index] = error

    threads = [
        threading.Thread(target=make, args=(index, call), name="dzlineage-at-once", daemon=True)
        for index, call in enumerate(calls)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first_error = next((error for error in errors if error is not None), None)
    if first_error is not None:
        raise first_error
    return answers
