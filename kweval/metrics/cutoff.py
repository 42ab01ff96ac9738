"""The cut-off `k` and precision, recall and F1 of one ranked list, in plain Python (no numpy).

These are the scalar definitions of docs/metrics.md §3 and §9 for a single
list: the keyphrase protocols (`kweval.keyphrase.protocols`, whose process
must not load numpy) compute with them, and the vectorised metric families
(`kweval.metrics.set_based`, `kweval.metrics.keyphrase`) are tested against
them.  `check_k` is the one check of a cut-off that every part uses
(`EvalOptions`, the ranking functions, the explanations).
"""

from __future__ import annotations

import numbers


def check_k(k: object, name: str = "k") -> int:
    """`k` as a cut-off: a positive integer (a bool is not one), else ValueError.

    >>> check_k(5)
    5
    >>> check_k(0)
    Traceback (most recent call last):
    ...
    ValueError: k must be a positive integer, got 0
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, and 0 where the denominator is 0 ("0 if P empty", docs/metrics.md §3).

    >>> ratio(1, 4), ratio(3, 0)
    (0.25, 0.0)
    """
    return numerator / denominator if denominator > 0 else 0.0


def harmonic_mean(a: float, b: float) -> float:
    """2ab / (a + b): the F1 of a precision and a recall; 0 where both are 0.

    >>> harmonic_mean(0.5, 0.25)
    0.3333333333333333
    """
    return 2 * a * b / (a + b) if a + b > 0 else 0.0


def precision_denominator(k: int, n_predictions: int, flexible: bool = False) -> int:
    """The denominator of P@k: k (*hard*, the field's usual choice), or min(k, |P|) (*flexible*).

    A list without predictions has denominator 0 either way: its P@k is 0.

    >>> precision_denominator(5, 3), precision_denominator(5, 3, flexible=True), precision_denominator(5, 0)
    (5, 3, 0)
    """
    if n_predictions == 0:
        return 0
    return min(k, n_predictions) if flexible else k


def precision_recall_f1(hits: float, precision_den: float, n_relevant: float) -> tuple[float, float, float]:
    """(hits / precision_den, hits / n_relevant, their F1), each 0 where its denominator is 0.

    With `hits` the matches among the first c predictions: P@c, R@c and F1@c
    (docs/metrics.md §9); c = |P| gives precision, recall and F1 (§3).

    >>> precision_recall_f1(2, 5, 4)
    (0.4, 0.5, 0.4444444444444445)
    """
    precision = ratio(hits, precision_den)
    recall = ratio(hits, n_relevant)
    return precision, recall, harmonic_mean(precision, recall)
