"""Input checks of the metric families' public functions: clear ValueErrors instead of wrong numbers.

Each family has a private kernel that trusts its arrays and a public
function that checks them here first (as scikit-learn's `ndcg_score` checks
before `_dcg_sample_scores`): one-dimensional, equal lengths, whole
non-negative counts, finite non-negative sums, pairs that point at a review.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def counts(name: str, values: ArrayLike, minimum: int = 0) -> np.ndarray:
    """`values` as a 1-D int64 array of whole numbers >= `minimum` (a count per review)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per review), got {arr.ndim} dimension(s)")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind not in "fb" or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers")
    out = arr.astype("int64", copy=False)
    if out.size and out.min() < minimum:
        raise ValueError(f"{name} must be at least {minimum} (found {int(out.min())})")
    return out


def sums(name: str, values: ArrayLike) -> np.ndarray:
    """`values` as a 1-D float64 array of finite non-negative numbers (a sum per review)."""
    arr = np.asarray(values, dtype="float64")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per review), got {arr.ndim} dimension(s)")
    if arr.size and not (np.all(np.isfinite(arr)) and arr.min() >= 0):
        raise ValueError(f"{name} must be finite and non-negative")
    return arr


def same_length(**arrays: np.ndarray) -> int:
    """The common length of the arrays given by name; ValueError naming them when they differ."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("lengths differ: " + ", ".join(f"{name} {n}" for name, n in lengths.items()))
    return next(iter(lengths.values()), 0)


def at_most(name: str, values: np.ndarray, limit_name: str, limit: np.ndarray) -> None:
    """ValueError unless `values` <= `limit` everywhere (a part cannot exceed its whole)."""
    if np.any(values > limit):
        raise ValueError(f"{name} must not exceed {limit_name}")


def pairs(review: ArrayLike, position: ArrayLike, n_reviews: int) -> tuple[np.ndarray, np.ndarray]:
    """The matched pairs' review indexes (each within 0..n_reviews-1) and 0-based positions, as int64 arrays."""
    review_arr, position_arr = counts("review", review), counts("position", position)
    same_length(review=review_arr, position=position_arr)
    if review_arr.size and review_arr.max() >= n_reviews:
        raise ValueError(f"review indexes must be below the number of reviews ({n_reviews})")
    return review_arr, position_arr


def optional_flags(name: str, values: ArrayLike | None, n: int) -> np.ndarray | None:
    """`flags(name, values, n)`, None staying None."""
    return None if values is None else flags(name, values, n)


def flags(name: str, values: ArrayLike, n: int) -> np.ndarray:
    """`values` as a bool array of length `n`."""
    arr = np.asarray(values, dtype=bool)
    if arr.shape != (n,):
        raise ValueError(f"{name} must hold one flag per entry ({n}), got shape {arr.shape}")
    return arr
