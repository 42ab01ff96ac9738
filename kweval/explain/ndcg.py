"""Step-by-step nDCG: the numbers behind one nDCG value, for the dashboard's worked examples.

Every number comes from the core: matching and one-to-one assignment from
`kweval.evaluate` (a one-review dataset is evaluated for keyword examples),
relevance from `kweval.metrics.weighted.relevance` (graded by GT rank, 1 for unranked GT), gains, discounts and the
totals from `kweval.metrics.ranking`.  This module only lays them out as a table of
terms (position, keyword, matched GT keyword, gain, discount, contribution)
plus DCG, IDCG and nDCG, and the LaTeX of the sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.metrics import ranking
from kweval.metrics.cutoff import check_k
from kweval.metrics.weighted import relevance


@dataclass(frozen=True)
class Steps:
    """The terms of DCG@k and IDCG@k and the resulting nDCG@k.

    ``terms``: one row per ranked item: position (0-based), item, gain,
    discount, contribution (0 beyond k or when unmatched), counted (position < k);
    keyword examples add gt_keyword and gt_rank (-1: unmatched).
    ``ideal``: the ideal list's terms (the IDCG sum).
    """

    terms: pd.DataFrame
    ideal: pd.DataFrame
    dcg: float
    idcg: float
    ndcg: float
    k: int
    gain: str
    discount: str

    def latex(self, decimals: int = 4) -> dict[str, str]:
        """LaTeX of the DCG and IDCG sums and of the nDCG quotient (KaTeX strings for the dashboard)."""
        return {
            "dcg": _sum_latex(r"\mathrm{DCG}", self.k, self.terms, self.dcg, decimals),
            "idcg": _sum_latex(r"\mathrm{IDCG}", self.k, self.ideal, self.idcg, decimals),
            "ndcg": (
                rf"\mathrm{{nDCG}}@{self.k} = \frac{{\mathrm{{DCG}}@{self.k}}}{{\mathrm{{IDCG}}@{self.k}}}"
                rf" = \frac{{{self.dcg:.{decimals}f}}}{{{self.idcg:.{decimals}f}}} = {self.ndcg:.{decimals}f}"
            ),
        }


def formulas(gain: str = "linear", discount: str = "log2", graded: bool = True) -> dict[str, str]:
    """LaTeX of the gain and discount definitions in force (docs/metrics.md §3)."""
    rel = r"\frac{1}{\log_2(j+2)}" if graded else r"\mathrm{rel}_i"
    g = rel if gain == "linear" else rf"2^{{{rel}}} - 1"
    d = (
        r"\frac{1}{\log_2(i+2)}"
        if discount == "log2"
        else r"\begin{cases}1 & i = 0\\ \frac{1}{\log_2(i+1)} & i \ge 1\end{cases}"
    )
    return {
        "gain": (r"\mathrm{gain}(j) = " if graded else r"\mathrm{gain}_i = ") + g,
        "discount": r"\mathrm{disc}(i) = " + d,
    }


def _sum_latex(name: str, k: int, table: pd.DataFrame, total: float, decimals: int) -> str:
    rows = table[table["contribution"] != 0]
    # each term braced: one unbreakable group, so a narrow page wraps the sum between terms, never inside one
    parts = [rf"{{{g:.{decimals}f}\cdot{d:.{decimals}f}}}" for g, d in zip(rows["gain"], rows["discount"])]
    body = " + ".join(parts) if parts else "0"
    return rf"{name}@{k} = {body} = {total:.{decimals}f}"


def discounts(n: int, discount: str = "log2") -> np.ndarray:
    """disc(i) for positions 0..n-1 (`kweval.metrics.ranking.discount_weights`)."""
    return ranking.discount_weights(max(int(n), 0), discount)


def _gains(relevance: np.ndarray, gain: str) -> np.ndarray:
    return np.asarray(ranking.apply_gain(np.asarray(relevance, dtype="float64"), gain), dtype="float64")


def relevance_steps(
    relevances: Sequence[float],
    ideal: Sequence[float] | None = None,
    k: int | None = None,
    gain: str = "linear",
    discount: str = "log2",
) -> Steps:
    """Steps for a plain relevance list (seeds 002 and 004).

    `ideal` defaults to `relevances`; either way it is sorted best first, as
    in the seeds.  `k` defaults to the list's length.
    """
    rel = np.asarray(list(relevances), dtype="float64")
    ideal_rel = -np.sort(-np.asarray(list(ideal) if ideal is not None else rel, dtype="float64"))
    k = check_k(k if k is not None else max(len(rel), len(ideal_rel), 1))
    n = max(len(rel), len(ideal_rel))
    disc = discounts(max(n, 1), discount)

    def table(values: np.ndarray) -> pd.DataFrame:
        pos = np.arange(len(values))
        g = _gains(values, gain)
        d = disc[: len(values)]
        counted = pos < k
        return pd.DataFrame(
            {
                "position": pos,
                "relevance": values,
                "gain": g,
                "discount": d,
                "contribution": np.where(counted, g * d, 0.0),
                "counted": counted,
            }
        )

    terms, ideal_terms = table(rel), table(ideal_rel)
    dcg = float(ranking.dcg(rel[None, :], k=k, gain=gain, discount=discount)[0]) if len(rel) else 0.0
    idcg = float(ranking.dcg(ideal_rel[None, :], k=k, gain=gain, discount=discount)[0]) if len(ideal_rel) else 0.0
    width = max(len(rel), len(ideal_rel))
    pad = lambda v: np.pad(v, (0, width - len(v)))[None, :]  # noqa: E731
    ndcg = float(ranking.ndcg(pad(rel), k=k, ideal=pad(ideal_rel), gain=gain, discount=discount)[0]) if width else 0.0
    return Steps(terms, ideal_terms, dcg, idcg, ndcg, k, gain, discount)


def keyword_steps(
    keywords: pd.DataFrame,
    ground_truth: Sequence[str],
    k: int = 5,
    gain: str = "linear",
    discount: str = "log2",
    ranked: bool = True,
) -> Steps:
    """Steps for one review × model from its rows of `Evaluation.keywords` and the GT list it was scored against.

    `keywords` needs position, keyword, gt_rank, gt_keyword (the one-to-one
    matches the evaluation made); `ground_truth` is the review's GT (the
    movie's list, or a document's own) in rank order.  `ranked` False: the GT
    is unranked and every GT keyword has relevance 1 (binary-relevance nDCG,
    as `kweval.metrics.weighted.relevance` gives the evaluation).
    """
    k = check_k(k)
    kw = keywords.sort_values("position")
    pos = kw["position"].to_numpy(dtype="int64")
    gt_rank = kw["gt_rank"].to_numpy(dtype="int64")
    matched = gt_rank >= 0
    n = int(pos.max()) + 1 if len(pos) else 0
    disc = discounts(max(n, min(k, len(ground_truth)), 1), discount)
    flags = np.full(len(gt_rank), ranked)
    gains = np.where(matched, _gains(relevance(np.where(matched, gt_rank, 0), flags), gain), 0.0)
    counted = pos < k
    terms = pd.DataFrame(
        {
            "position": pos,
            "keyword": pd.Series(kw["keyword"].to_numpy(dtype=object), dtype=object),
            "gt_keyword": pd.Series([g if m else None for g, m in zip(kw["gt_keyword"], matched)], dtype=object),
            "gt_rank": gt_rank,
            "gain": gains,
            "discount": disc[pos] if len(pos) else np.zeros(0),
            "contribution": np.where(counted & matched, gains * (disc[pos] if len(pos) else 0.0), 0.0),
            "counted": counted,
        }
    )
    n_ideal = min(k, len(ground_truth))
    j = np.arange(n_ideal)
    ideal_rel = relevance(j, np.full(n_ideal, ranked))
    ideal_gain = _gains(ideal_rel, gain)
    ideal = pd.DataFrame(
        {
            "position": j,
            "keyword": list(ground_truth)[:n_ideal],
            "gt_keyword": list(ground_truth)[:n_ideal],
            "gt_rank": j,
            "gain": ideal_gain,
            "discount": disc[:n_ideal],
            "contribution": ideal_gain * disc[:n_ideal],
            "counted": np.ones(n_ideal, dtype=bool),
        }
    )
    # the totals and the quotient exactly as kweval.metrics.ranked computes them (one review's relevance row)
    # (as wide as the lists, not k: positions past them are non-relevant, so any k costs nothing)
    width = max(n, n_ideal, 1)
    rel = np.zeros((1, width))
    top = matched & counted
    rel[0, pos[top]] = relevance(gt_rank[top], flags[top])
    ideal_row = np.zeros((1, width))
    ideal_row[0, :n_ideal] = ideal_rel
    dcg = float(ranking.dcg(rel, k=k, gain=gain, discount=discount)[0])
    idcg = float(ranking.dcg(ideal_row, k=k, gain=gain, discount=discount)[0])
    ndcg = float(ranking.ndcg(rel, k=k, ideal=ideal_row, gain=gain, discount=discount)[0])
    return Steps(terms, ideal, dcg, idcg, ndcg, k, gain, discount)


def ndcg_steps(
    predictions: Sequence[str],
    ground_truth: Sequence[str],
    k: int = 5,
    gain: str = "linear",
    discount: str = "log2",
    match: str = "approx",
) -> Steps:
    """Steps for a ranked keyword list against a ranked GT list (the seed 000 example).

    The list is scored by `kweval.evaluate` as a one-review dataset, so the
    cleaning, matching and assignment are the evaluation's own; the nDCG it
    reports equals ``Steps.ndcg``.
    """
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    k = check_k(k)
    preds = [p for p in predictions]
    rows: list[tuple[str, str, str, int, str | None, float]] = [
        ("example", "r", "example", i, p if isinstance(p, str) else None, math.nan) for i, p in enumerate(preds)
    ]
    if not rows:
        rows = [("example", "r", "example", 0, None, math.nan)]
    dataset = Dataset(
        movies=pd.DataFrame({"movie": ["example"], "title": ["example"]}),
        reviews=pd.DataFrame(
            {"movie": ["example"], "review_id": ["r"], "text": [None], "title": [None], "rating": [math.nan]}
        ),
        predictions=pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"]).astype(
            {"score": "float64"}
        ),
        ground_truth=pd.DataFrame(
            {
                "movie": "example",
                "rank": range(len(ground_truth)),
                "keyword": list(ground_truth),
                "helpful": math.nan,
                "not_helpful": math.nan,
            }
        ),
        models=pd.DataFrame({"model": ["example"], "score_direction": ["higher"]}),
    )
    ev = evaluate(dataset, EvalOptions(k=k, gain=gain, discount=discount, match=match))
    gt = ev.ground_truth["keyword"].tolist()
    return keyword_steps(ev.keywords, gt, k, gain, discount)


# The worked examples of the seeds (docs/metrics.md §3 test vectors).
SEED_000 = {
    "ground_truth": ["fraud", "poverty", "scam"],
    "predictions": ["scam", "family", "poverty", "cinematography", "fraud"],
}
SEED_002 = {
    "classic": {"relevances": [2, 4, 5, 3, 1, 1]},
    "versus_ideal": {"relevances": [4, 3, 3, 4, 2, 2, 0, 0], "ideal": [4, 3, 3, 4, 2, 2, 2, 1]},
}
# Seed 004 (graded, Järvelin discount): the gains of each ranking and of its ideal list.
SEED_004 = {
    "q1": {"relevances": [1, 2, 0, 3, 0, 0, 0, 0, 0, 0], "ideal": [3, 2, 1]},
    "q2": {"relevances": [2, 1, 0, 3, 0, 0, 0, 1, 3, 0], "ideal": [3, 3, 2, 1, 1]},
    "q3": {"relevances": [3, 2, 3, 2, 0, 1, 0, 1, 0, 0], "ideal": [3, 3, 2, 2, 1, 1]},
    "rA": {"relevances": [0, 3, 0, 0, 2, 3, 1, 0, 0, 0], "ideal": [3, 3, 2, 1]},
    "rB": {"relevances": [1, 2, 3, 0, 0, 3, 0, 0, 0, 0], "ideal": [3, 3, 2, 1]},
}

# What the examples are, in words a reader outside the project understands (the page's headings).
EXAMPLE_TITLES = {
    "seed000": "Three GT keywords, five predicted keywords (the worked example of docs/metrics.md)",
    "classic": "Six results with graded relevance 2, 4, 5, 3, 1, 1 (the textbook example)",
    "versus_ideal": "Eight results scored against a given ideal list",
    "q1": "Query 1: three relevant results, all in the top 4 but the best one fourth",
    "q2": "Query 2: five relevant results, two of them found only at positions 7 and 8",
    "q3": "Query 3: six relevant results, most of them near the top",
    "rA": "System A on a query with four relevant results: the first one at position 1",
    "rB": "System B on the same query: relevant results earlier",
}
GAIN_LABELS = {
    "linear": "GT-rank gain 1/log2(j+2)",
    "exponential": "exponential GT-rank gain 2^gain − 1",
}
