"""Ratios with the zero rule of docs/metrics.md §3, vectorised: the building blocks of every metric family.

"0 if P empty", "0 if the sum is 0": a ratio whose denominator is 0 is 0,
and so is the harmonic mean of two zeros.  The scalar forms are in
`kweval.metrics.cutoff`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def safe_ratio(num: ArrayLike, den: ArrayLike) -> np.ndarray:
    """num / den as float64, and 0 where den is 0.

    >>> safe_ratio([1, 2, 3], [4, 0, 3]).tolist()
    [0.25, 0.0, 1.0]
    """
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    out = np.zeros(np.broadcast(num, den).shape, dtype="float64")
    np.divide(num, den, out=out, where=den != 0)
    return out


def harmonic_mean(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """2ab / (a + b), and 0 where both are 0 (an F1 from a precision and a recall).

    >>> harmonic_mean([0.5, 0.0], [0.25, 0.0]).tolist()
    [0.3333333333333333, 0.0]
    """
    return safe_ratio(2.0 * np.asarray(a) * np.asarray(b), np.asarray(a) + np.asarray(b))
