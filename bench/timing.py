"""The best of repeated runs, for the bench scripts: one loop whatever the clock (wall or CPU)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(call: Callable[[], T], repeat: int = 1, clock: Callable[[], float] = time.perf_counter) -> tuple[float, T]:
    """(the least seconds of `repeat` runs of `call()` on `clock` — `time.perf_counter` for wall time,
    `time.process_time` for CPU time on a shared machine — and the last run's value)."""
    best, value = float("inf"), None
    for _ in range(repeat):
        start = clock()
        value = call()
        best = min(best, clock() - start)
    return best, value  # type: ignore[return-value]
