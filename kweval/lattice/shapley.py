"""Exact Shapley values: how much of a change each of its parts makes, independent of any order.

With players D (the conventions two protocols set differently) and v(S) the value with the players in S
moved to the second protocol's settings, player i's value is

    φ_i = Σ_{S ⊆ D∖{i}}  |S|! (|D| − |S| − 1)! / |D|!  ·  (v(S ∪ {i}) − v(S)),

every subset evaluated (no sampling).  The φ sum to v(D) − v(∅) (efficiency), a player that changes
nothing gets exactly 0 (every difference is 0), and swapping the two protocols negates each φ exactly
(the same products, negated, summed by `math.fsum`, which rounds the exact sum once).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


def subset_values(n: int, value: Callable[[Sequence[int]], float]) -> list[float]:
    """v of every subset of players 0..n-1, indexed by bit mask (bit i: player i moved)."""
    return [value([i for i in range(n) if mask >> i & 1]) for mask in range(1 << n)]


def weights(n: int) -> list[float]:
    """The Shapley weight of a coalition of size s (0..n-1) without the player: s! (n − s − 1)! / n!."""
    return [1.0 / (n * math.comb(n - 1, s)) for s in range(n)] if n else []


def shapley(values: Sequence[float], n: int) -> list[float]:
    """Each player's Shapley value from `subset_values`' list of 2^n values."""
    w = weights(n)
    out = []
    for i in range(n):
        bit = 1 << i
        out.append(
            math.fsum(
                w[bin(mask).count("1")] * (values[mask | bit] - values[mask])
                for mask in range(1 << n)
                if not mask & bit
            )
        )
    return out


def shapley_rows(values: Sequence[np.ndarray], n: int) -> np.ndarray:
    """`shapley` of many values at once (`values[mask]` an array, e.g. one value per document): an n × len array.

    Speed: the products are summed with numpy, so the sums are not the exactly rounded ones `shapley` gives; the
    per-document attributions only rank documents and name the convention that moves each."""
    w = weights(n)
    out = np.zeros((n, len(values[0]) if values else 0))
    for i in range(n):
        bit = 1 << i
        for mask in range(1 << n):
            if not mask & bit:
                out[i] += w[bin(mask).count("1")] * (values[mask | bit] - values[mask])
    return out
