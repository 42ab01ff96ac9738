"""Independent work in forked worker processes (the CLI's evaluation of big datasets).

Evaluating a big dataset spends most of its time reading and matching movies
that share nothing with each other.  `fork_map` gives each group of movies
its own process, forked from this one: a child inherits the imported modules
(nothing is pickled to send it work) and sends back only its result.  Work is
shared out before any data is loaded, so the processes do not touch each
other's memory (copy-on-write stays cheap).

Where forking is unsafe (not Linux, or other Python threads running, as in
the dashboard's server) it is a plain loop.  A child that fails
in any way costs nothing but time: its item is computed again here, so errors
surface exactly as they would without workers.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

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
    """``[fn(x) for x in items]`` with each item after the first computed in a forked child, all at once."""
    if len(items) < 2 or not can_fork():
        return [fn(x) for x in items]
    sys.stdout.flush()  # a child must not write out this process's buffered output again
    sys.stderr.flush()
    children = [_start_child(fn, x) for x in items[1:]]
    try:
        results = [fn(items[0])]
    except BaseException:  # do not leave children waiting to send results nobody will read
        for pid, pipe in children:
            os.kill(pid, signal.SIGKILL)
            os.close(pipe)
            os.waitpid(pid, 0)
        raise
    for x, (pid, pipe) in zip(items[1:], children):
        ok, value = _collect(pid, pipe)
        results.append(value if ok else fn(x))  # a failed child: compute its item here
    return results


def _start_child(fn: Callable, item: object) -> tuple[int, int]:
    """Fork a child that sends back ``pickle(fn(item))``; (its pid, the read end of its pipe)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running any of the parent's exit handlers
        status = 1
        try:
            os.close(read_end)
            gc.freeze()  # the inherited objects are never garbage: do not walk (and copy) their pages
            payload = pickle.dumps(fn(item), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int) -> tuple[bool, object]:
    """(True, the child's result), or (False, None) if it did not finish cleanly."""
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not payload:
        return False, None
    try:
        return True, pickle.loads(payload)  # bytes from our own child, never from outside
    except Exception:  # a truncated payload: the child died while writing
        return False, None
