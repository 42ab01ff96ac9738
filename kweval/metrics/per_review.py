"""Per-review metrics from one-to-one assignments (docs/metrics.md §3), vectorised over reviews.

Every function takes flat numpy arrays (one entry per review × model, or per
matched keyword with its review index) and returns arrays: no Python loop over
reviews.  The ranking metrics are the plain relevance-list functions of
`kweval.metrics.ranking` applied to a (reviews × k) relevance matrix, so there is one
definition of each.
"""

from __future__ import annotations

import numpy as np

from kweval.metrics import ranking


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, and 0 where den is 0 (docs/metrics.md §3: "0 if P empty", "0 if the sum is 0")."""
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    out = np.zeros(np.broadcast(num, den).shape, dtype="float64")
    np.divide(num, den, out=out, where=den != 0)
    return out


def harmonic_mean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2ab / (a + b), and 0 where both are 0."""
    return safe_ratio(2.0 * np.asarray(a) * np.asarray(b), np.asarray(a) + np.asarray(b))


def graded_relevance(gt_rank: np.ndarray) -> np.ndarray:
    """A GT keyword's relevance from its 0-based rank j: 1 / log2(j + 2)."""
    return 1.0 / np.log2(np.asarray(gt_rank, dtype="float64") + 2.0)


def relevance(gt_rank: np.ndarray, ranked: np.ndarray | None = None) -> np.ndarray:
    """A matched GT keyword's relevance: graded by rank for ranked GT, 1 for unranked GT (`ranked[i]` False)."""
    graded = graded_relevance(gt_rank)
    if ranked is None or np.all(ranked):
        return graded
    return np.where(np.asarray(ranked, dtype=bool), graded, 1.0)


def gt_gain_total(n_gt: np.ndarray, gain: str = "linear", ranked: np.ndarray | None = None) -> np.ndarray:
    """Σ_{j<|G|} gain(j) for each |G| in `n_gt` (the denominator of w_recall); |G| · gain(1) where unranked."""
    n_gt = np.asarray(n_gt, dtype="int64")
    top = int(n_gt.max()) if n_gt.size else 0
    cumulative = np.concatenate(([0.0], np.cumsum(ranking.apply_gain(graded_relevance(np.arange(top)), gain))))
    total = cumulative[n_gt]
    if ranked is None or np.all(ranked):
        return total
    flat = n_gt * float(ranking.apply_gain(np.ones(1), gain)[0])
    return np.where(np.asarray(ranked, dtype=bool), total, flat)


def set_metrics(n_pred: np.ndarray, n_gt: np.ndarray, n_matched: np.ndarray) -> dict[str, np.ndarray]:
    """precision = |M|/|P|, recall = |M|/|G|, f1."""
    precision = safe_ratio(n_matched, n_pred)
    recall = safe_ratio(n_matched, n_gt)
    return {"precision": precision, "recall": recall, "f1": harmonic_mean(precision, recall)}


def weighted_metrics(
    score_sum: np.ndarray, matched_score: np.ndarray, gain_sum: np.ndarray, matched_gain: np.ndarray
) -> dict[str, np.ndarray]:
    """Confidence-weighted precision, GT-importance-weighted recall, and their F1."""
    w_precision = safe_ratio(matched_score, score_sum)
    w_recall = safe_ratio(matched_gain, gain_sum)
    return {"w_precision": w_precision, "w_recall": w_recall, "w_f1": harmonic_mean(w_precision, w_recall)}


_CHUNK = 1 << 18  # reviews per slice in ranking_metrics


def ranking_metrics(
    review: np.ndarray,
    position: np.ndarray,
    gt_rank: np.ndarray,
    n_gt: np.ndarray,
    k: int,
    gain: str = "linear",
    discount: str = "log2",
    ranked: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """nDCG@k, P@k, AP@k and RR of every review from its matched pairs.

    `review`, `position` (i) and `gt_rank` (j) describe the matched pairs
    (i, j) ∈ M; `n_gt[r]` is |G| of review r.  The relevance of position i is
    the graded relevance of the GT keyword it matched; the ideal list is the
    GT's own top-k in order.  Where `ranked[r]` is False (unranked GT) every
    relevance is 1: binary-relevance nDCG.
    """
    if ranked is not None and np.all(ranked):
        ranked = None
    n_reviews = len(n_gt)
    if n_reviews > _CHUNK:
        # rows are independent: compute in slices of reviews so the (reviews × k) matrices stay small
        review, position, gt_rank = np.asarray(review), np.asarray(position), np.asarray(gt_rank)
        if len(review) > 1 and (review[1:] < review[:-1]).any():
            by_review = np.argsort(review, kind="stable")
            review, position, gt_rank = review[by_review], position[by_review], gt_rank[by_review]
        bounds = np.searchsorted(review, np.arange(0, n_reviews + _CHUNK, _CHUNK).clip(max=n_reviews))
        parts = [
            ranking_metrics(
                review[bounds[i] : bounds[i + 1]] - lo,
                position[bounds[i] : bounds[i + 1]],
                gt_rank[bounds[i] : bounds[i + 1]],
                n_gt[lo : lo + _CHUNK],
                k,
                gain,
                discount,
                None if ranked is None else ranked[lo : lo + _CHUNK],
            )
            for i, lo in enumerate(range(0, n_reviews, _CHUNK))
        ]
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    # Columns past the longest list (predicted or GT) hold only zeros, which change no metric
    # (ranking treats positions past a row's end as non-relevant): a huge k costs nothing.
    top = position < k
    n_ideal = np.minimum(np.asarray(n_gt, dtype="int64"), k)
    width = max(int(position[top].max()) + 1 if top.any() else 0, int(n_ideal.max()) if len(n_ideal) else 0, 1)
    rel = np.zeros((n_reviews, width), dtype="float64")
    rel[review[top], position[top]] = relevance(gt_rank[top], None if ranked is None else ranked[review[top]])
    ideal_row = graded_relevance(np.arange(width))[None, :]
    if ranked is not None:
        ideal_row = np.where(np.asarray(ranked, dtype=bool)[:, None], ideal_row, 1.0)
    ideal = np.where(np.arange(width)[None, :] < n_ideal[:, None], ideal_row, 0.0)
    hits = (rel > 0).astype("float64")
    suffix = f"@{k}"
    return {
        f"ndcg{suffix}": ranking.ndcg(rel, k=k, ideal=ideal, gain=gain, discount=discount),
        f"p{suffix}": ranking.precision_at_k(hits, k),
        f"ap{suffix}": ranking.average_precision(hits, k=k, n_relevant=n_ideal),
        "rr": ranking.reciprocal_rank(hits, k=k),
    }


def keyphrase_metrics(
    n_pred: np.ndarray, n_gt: np.ndarray, n_matched: np.ndarray, review: np.ndarray, position: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    """The keyphrase field's cut-off metrics of every review from its matched pairs (`review`, `position` i).

    With |M_c| the matched pairs among the top c predictions (i < c):

    - ``r@k`` = |M_k| / |G|; ``f1@k``: F1 of the *hard* P@k = |M_k| / k (the
      field's usual choice; the ``p@k`` column) and r@k;
      ``f1@k_flex``: F1 of the *flexible* P@k = |M_k| / min(k, |P|) and r@k.
    - ``f1@M``: F1 over all predictions (|M| / |P|, |M| / |G|), the same
      numbers as ``f1``, named as the field names them.
    - ``f1@O``: the oracle cut-off c = |G|: F1 of |M_|G|| / min(|G|, |P|) and |M_|G|| / |G|.
    - ``r_precision`` = |M_|G|| / |G| (precision at rank |G|).
    """
    n_pred = np.asarray(n_pred, dtype="int64")
    n_gt = np.asarray(n_gt, dtype="int64")
    n_reviews = len(n_gt)
    review = np.asarray(review, dtype="int64")
    position = np.asarray(position, dtype="int64")
    hit_k = np.bincount(review[position < k], minlength=n_reviews).astype("float64")
    hit_o = np.bincount(review[position < n_gt[review]], minlength=n_reviews).astype("float64")
    recall_k = safe_ratio(hit_k, n_gt)
    recall_o = safe_ratio(hit_o, n_gt)
    all_pairs = set_metrics(n_pred, n_gt, n_matched)
    return {
        f"r@{k}": recall_k,
        f"f1@{k}": harmonic_mean(hit_k / float(k), recall_k),
        f"f1@{k}_flex": harmonic_mean(safe_ratio(hit_k, np.minimum(n_pred, k)), recall_k),
        "f1@M": all_pairs["f1"],
        "f1@O": harmonic_mean(safe_ratio(hit_o, np.minimum(n_pred, n_gt)), recall_o),
        "r_precision": recall_o,
    }


def present_metrics(
    n_gt_present: np.ndarray, n_gt: np.ndarray, review: np.ndarray, position: np.ndarray, present: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    """Recall split by whether the matched GT keyword occurs in the review's own text (`present` per matched pair).

    - ``recall_present`` = |{(i,j) ∈ M : j present}| / |G_present|
    - ``recall_absent`` = |{(i,j) ∈ M : j absent}| / |G_absent|
    - ``f1@k_present``: F1 of |{(i,j) ∈ M : i < k, j present}| / k and that count / |G_present|.

    All predictions take part (no filtering of predictions by presence; the
    protocol presets that filter them do so themselves).  The matched counts
    come along (``n_matched_present``, ``n_matched_absent``) for micro ratios.
    """
    n_gt_present = np.asarray(n_gt_present, dtype="int64")
    n_reviews = len(n_gt_present)
    review = np.asarray(review, dtype="int64")
    present = np.asarray(present, dtype=bool)
    hit_present = np.bincount(review[present], minlength=n_reviews).astype("float64")
    hit_absent = np.bincount(review[~present], minlength=n_reviews).astype("float64")
    hit_present_k = np.bincount(review[present & (np.asarray(position) < k)], minlength=n_reviews).astype("float64")
    recall_present_k = safe_ratio(hit_present_k, n_gt_present)
    return {
        "recall_present": safe_ratio(hit_present, n_gt_present),
        f"f1@{k}_present": harmonic_mean(hit_present_k / float(k), recall_present_k),
        "recall_absent": safe_ratio(hit_absent, np.asarray(n_gt, dtype="int64") - n_gt_present),
        "n_matched_present": hit_present,
        "n_matched_absent": hit_absent,
    }
