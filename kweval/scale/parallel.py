"""Independent work in forked worker processes (the CLI's evaluation of big datasets).

Evaluating a big dataset spends most of its time reading and matching movies
that share nothing with each other.  `fork_map` gives each group of movies
its own process of a `ProcessPoolExecutor` forked from this one: a worker
inherits the imported modules and the work (only an index is pickled to send
it) and sends back only its result.  Work is shared out before any data is
loaded, so the processes do not touch each other's memory (copy-on-write
stays cheap).

Where forking is unsafe (not Linux, or other Python threads running, as in
the dashboard's server) it is a plain loop.  A worker that fails
in any way costs nothing but time: its item is computed again here, so errors
surface exactly as they would without workers.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

# Below this many bytes of input per process a worker costs more than it saves.
MIN_BYTES_PER_JOB = 4_000_000


def usable_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_jobs(sizes: Sequence[int]) -> int:
    """Processes worth using for items of these sizes (bytes): at most one per core, item and MIN_BYTES_PER_JOB."""
    return max(1, min(usable_cores(), len(sizes), sum(sizes) // MIN_BYTES_PER_JOB))


def can_fork() -> bool:
    """Whether forking is safe here: Linux (macOS system libraries are not fork-safe), and no other
    Python thread that could hold a lock the child needs."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def contiguous_groups(weights: Sequence[float], n: int) -> list[list[int]]:
    """Indices 0..len(weights)-1 cut into at most `n` runs of consecutive items with similar total weight.

    Runs keep the items' order, so results computed per run and concatenated
    come out in item order.
    """
    total = float(sum(weights))
    groups: list[list[int]] = [[]]
    done = 0.0
    for i, w in enumerate(weights):
        cut = total * len(groups) / n  # where the current run should end
        if groups[-1] and len(groups) < n and done + w / 2 > cut:
            groups.append([])
        groups[-1].append(i)
        done += w
    return groups


def fork_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]`` with each item after the first computed in a forked worker, all at once.

    A `concurrent.futures.ProcessPoolExecutor` with the fork context: `fn`
    and `items` are left in this module for the workers to inherit, so only
    an item's index is sent to a worker (`fn` may be a closure).
    """
    global _forked_work
    if len(items) < 2 or not can_fork():
        return [fn(x) for x in items]
    sys.stdout.flush()  # a worker must not write out this process's buffered output again
    sys.stderr.flush()
    _forked_work = (fn, items)
    context = multiprocessing.get_context("fork")
    workers = len(items) - 1
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(context.Barrier(workers),)
    )
    try:
        futures = [pool.submit(_item_result, i) for i in range(1, len(items))]  # the workers fork here
        _forked_work = None
        results = [fn(items[0])]
        for x, future in zip(items[1:], futures):
            try:
                results.append(cast(R, future.result()))  # the worker's fn(x)
            except Exception:  # the worker raised or died: compute its item here, so errors surface as without workers
                results.append(fn(x))
    except BaseException:  # do not leave workers computing results nobody will read
        _stop_workers(pool)
        raise
    finally:
        _forked_work = None
        pool.shutdown(wait=True, cancel_futures=True)
    return results


_forked_work: tuple[Callable, Sequence] | None = None  # (fn, items) of the fork_map under way, inherited by its workers


def _start_worker(everyone_started: threading.Barrier) -> None:
    """In a new worker: wait until every worker is up, so that no worker takes a second item while another
    is still starting (an item per worker); the inherited objects are never garbage: do not walk (and copy) them."""
    try:
        everyone_started.wait(timeout=60)
    except threading.BrokenBarrierError:  # a worker did not start: go on, items are still computed
        pass
    gc.freeze()


def _item_result(index: int) -> object:
    """In a worker: the result of the inherited function on the inherited item `index`."""
    assert _forked_work is not None  # fork_map sets it before the workers fork
    fn, items = _forked_work
    return fn(items[index])


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's worker processes now (shutdown() alone would wait for the running items)."""
    if hasattr(pool, "kill_workers"):  # Python ≥ 3.14
        pool.kill_workers()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # no public way before 3.14
        process.kill()
