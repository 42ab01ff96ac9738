"""TREC run and qrels from an evaluation, for trec_eval, pytrec_eval and ranx (`kweval export --format trec`).

One query per movie × review (``movie/review_id``, percent-encoded), one run
file per model.  The "documents" are keywords: a predicted keyword that
kweval matched to GT keyword j is written as that GT keyword's document id,
so the TREC tools see kweval's own matching (whatever the match mode), and an
unmatched one gets an id no qrel names.  Qrels grade each GT keyword of the
list the review was scored against (its own list on per-document GT, else
its movie's) by its gain (docs/metrics.md §3: 1/log2(j + 2) for ranked GT,
1 for unranked GT; a judged GT's own relevances, §11) as an integer, scaled by
GRADE_SCALE, because trec_eval reads integer grades; nDCG does not change
with the scale.  Run scores are n − position, so every tool ranks as kweval.

What the tools compute equals kweval's `ndcg@k` (linear gain, log2 discount)
and `p@k`; their AP@k divides by all relevant documents (|G|) where kweval's
`ap@k` divides by min(k, |G|): kweval's = theirs × |G| / min(k, |G|).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import numpy as np

from kweval.metrics.weighted import graded_relevance

GRADE_SCALE = 1_000_000


def query_id(movie: object, review: object) -> str:
    return f"{quote(str(movie), safe='')}/{quote(str(review), safe='')}"


def _gt_doc(rank: int, norm: str) -> str:
    return f"g{rank}:{quote(norm, safe='')}"


GtList = dict[int, str]  # one GT list: rank -> normalized keyword


def gt_lists(evaluation) -> tuple[dict[tuple[str, str], GtList], dict[str, GtList]]:
    """(each document's own GT list by (movie, review), each movie's movie-level list): what kweval scored against.

    A review with a list of its own (per-document GT, a `review_id` in the GT
    table) is scored against that list only; the others against their movie's.
    """
    gt = evaluation.ground_truth
    own: dict[tuple[str, str], GtList] = {}
    movie_level: dict[str, GtList] = {}
    reviews = gt["review_id"] if "review_id" in gt.columns else [None] * len(gt)
    for movie, review, rank, norm in zip(gt["movie"], reviews, gt["rank"], gt["norm"]):
        if isinstance(review, str) or review is not None and review == review:  # not None, not NaN
            own.setdefault((str(movie), str(review)), {})[int(rank)] = str(norm)
        else:
            movie_level.setdefault(str(movie), {})[int(rank)] = str(norm)
    return own, movie_level


def _list_of(own, movie_level, movie: object, review: object) -> GtList:
    return own.get((str(movie), str(review))) or movie_level.get(str(movie), {})


def trec_qrels(evaluation, ranked: Mapping[str, bool] | None = None) -> list[str]:
    """`qid 0 docid grade` lines: every GT keyword of the list each review was scored against, with its gain.

    Ranked GT is graded by rank (1/log2(j + 2), scaled); unranked GT (`ranked[movie]` False: the keyphrase
    collections) grades every keyword 1 (GRADE_SCALE), as kweval's nDCG does (docs/metrics.md §3).
    """
    ranked = ranked or {}
    own, movie_level = gt_lists(evaluation)
    explicit = _explicit_relevance(evaluation.ground_truth)
    lines: list[str] = []
    queries = evaluation.scores[["movie", "review_id"]].drop_duplicates()
    for movie, review in zip(queries["movie"], queries["review_id"]):
        qid = query_id(movie, review)
        graded = ranked.get(str(movie), True)
        list_key = (str(movie), str(review) if (str(movie), str(review)) in own else None)
        for rank, norm in sorted(_list_of(own, movie_level, movie, review).items()):
            gain = float(graded_relevance(np.array([rank]))[0]) if graded else 1.0
            gain = explicit.get((*list_key, rank), gain) if explicit else gain
            lines.append(f"{qid} 0 {_gt_doc(rank, norm)} {int(round(gain * GRADE_SCALE))}")
    return lines


def _explicit_relevance(gt) -> dict[tuple[str, str | None, int], float]:
    """(movie, review_id or None, rank) -> relevance, for a judged GT (docs/metrics.md §11: explicit relevances,
    `kweval.judgments`); empty for a reference GT, whose gains follow the rank."""
    if "relevance" not in gt.columns:
        return {}
    reviews = gt["review_id"] if "review_id" in gt.columns else [None] * len(gt)
    return {
        (str(m), str(r) if isinstance(r, str) else None, int(rank)): float(value)
        for m, r, rank, value in zip(gt["movie"], reviews, gt["rank"], gt["relevance"])
    }


def trec_runs(evaluation) -> dict[str, list[str]]:
    """{model: `qid Q0 docid rank score model` lines}, in kweval's order of each list.

    A matched keyword is named by the GT keyword it matched, in the list its own review was scored against.
    """
    kw = evaluation.keywords
    own, movie_level = gt_lists(evaluation)
    runs: dict[str, list[str]] = {}
    for (movie, review, model), group in kw.groupby(["movie", "review_id", "model"], sort=False):
        qid = query_id(movie, review)
        n = len(group)
        gt = _list_of(own, movie_level, movie, review)
        lines = runs.setdefault(str(model), [])
        for position, norm, gt_rank in zip(group["position"], group["norm"], group["gt_rank"]):
            if gt_rank >= 0:
                doc = _gt_doc(int(gt_rank), gt[int(gt_rank)])
            else:
                doc = f"p{int(position)}:{quote(str(norm), safe='')}"
            lines.append(f"{qid} Q0 {doc} {int(position) + 1} {n - int(position)} {quote(str(model), safe='')}")
    return runs


def write_trec(evaluation, folder: Path, ranked: Mapping[str, bool] | None = None) -> list[Path]:
    """Write `qrels.txt` and `run.<model>.txt` into `folder`; returns the paths.

    `ranked`: movie -> whether its GT is ranked (`kweval.evaluation.clean.ranked_movies`; ranked when absent).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "qrels.txt"]
    written[0].write_text("\n".join(trec_qrels(evaluation, ranked)) + "\n", encoding="utf-8")
    for model, lines in trec_runs(evaluation).items():
        path = folder / f"run.{quote(model, safe='')}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written
