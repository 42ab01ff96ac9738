"""Speed trick "remembered comparisons": a statistic computed from the same values again is read back, not
recomputed.

The bootstrap and the randomization test are seeded, so their result is a function of the values compared and of
the settings (resamples, permutations, seed).  A surface asks for the same comparison again and again: the
headline's pairs are Compare's and the report's verdicts again, a k change leaves F1 and weighted F1 as they were,
a τ step leaves every lexical metric, and the reverse pair (B against A) is the mirror image of A against B.
`Remembered` keeps the last results by a digest of what they read (`digest`); the arrays kept are read-only.
Reference: the computation itself (tests/test_headline.py, tests/test_stats.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")


def digest(*parts: object) -> str:
    """A digest of `parts`: arrays by their dtype, shape and bytes, anything else by its repr."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(repr((part.dtype.str, part.shape)).encode())
            h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"\x00")
    return h.hexdigest()


class Remembered(Generic[T]):
    """The last `size` results by key, least recently used dropped first; safe across threads (the dashboard's
    sessions)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def get(self, key: str) -> T | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: str, value: T) -> T:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __call__(self, key: str, compute: Callable[[], T]) -> T:
        """The result kept for `key`, else `compute()` kept."""
        found = self.get(key)
        return found if found is not None else self.put(key, compute())


def read_only(values: np.ndarray) -> np.ndarray:
    """`values` as a float64 array no caller can change (a kept result is shared)."""
    out = np.array(values, dtype="float64")
    out.setflags(write=False)
    return out
