"""Independent calls made at once: answers in order, the first error raised after all ran."""

from __future__ import annotations

import threading

import pytest

from dzlineage_dagster.core.aws.concurrency import at_once


def test_answers_come_in_the_calls_order_from_calls_that_ran_together():
    barrier = threading.Barrier(3, timeout=10)

    def answer(value: int) -> int:
        barrier.wait()  # only passes when all three run at the same time
        return value

    assert at_once(*(lambda v=v: answer(v) for v in (3, 1, 2))) == [3, 1, 2]


def test_the_first_call_s_error_is_raised_once_every_call_ran():
    ran: list[str] = []

    def fails(name: str) -> None:
        ran.append(name)
        raise ValueError(name)

    with pytest.raises(ValueError, match="first"):
        at_once(lambda: fails("first"), lambda: ran.append("ok"), lambda: fails("second"))
    assert sorted(ran) == ["first", "ok", "second"]


def test_one_call_runs_on_the_caller_s_thread():
    assert at_once(threading.get_ident) == [threading.get_ident()]
