"""TREC run and qrels from an evaluation, for trec_eval, pytrec_eval and ranx (`kweval export --format trec`).

One query per movie × review (``movie/review_id``, percent-encoded), one run
file per model.  The "documents" are keywords: a predicted keyword that
kweval matched to GT keyword j is written as that GT keyword's document id,
so the TREC tools see kweval's own matching (whatever the match mode), and an
unmatched one gets an id no qrel names.  Qrels grade each GT keyword of the
list by its gain (docs/metrics.md §3: 1/log2(j + 2); a judged GT's explicit
relevance, §9) as an integer, scaled by
GRADE_SCALE, because trec_eval reads integer grades; nDCG does not change
with the scale.  Run scores are n − position, so every tool ranks as kweval.

What the tools compute equals kweval's `ndcg@k` (linear gain, log2 discount)
and `p@k`; their AP@k divides by all relevant documents (|G|) where kweval's
`ap@k` divides by min(k, |G|): kweval's = theirs × |G| / min(k, |G|).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import numpy as np

from kweval.metrics.weighted import graded_relevance

GRADE_SCALE = 1_000_000


def query_id(movie: object, review: object) -> str:
    return f"{quote(str(movie), safe='')}/{quote(str(review), safe='')}"


def _gt_doc(rank: int, norm: str) -> str:
    return f"g{rank}:{quote(norm, safe='')}"


def _gt_lists(gt) -> dict[tuple[object, object], list[tuple[int, str, float]]]:
    """(movie, review_id or None) -> its GT list as (rank, norm, relevance): the explicit relevance of a judged GT
    (docs/metrics.md §9), else 1/log2(j + 2) of the rank."""
    reviews = gt["review_id"].tolist() if "review_id" in gt.columns else [None] * len(gt)
    ranks = gt["rank"].to_numpy(dtype=np.int64)
    rel = gt["relevance"].to_numpy(dtype="float64") if "relevance" in gt.columns else graded_relevance(ranks)
    lists: dict[tuple[object, object], list[tuple[int, str, float]]] = {}
    for movie, review, rank, norm, value in zip(gt["movie"], reviews, ranks.tolist(), gt["norm"], rel.tolist()):
        key = (movie, None if review is None or review != review else str(review))
        lists.setdefault(key, []).append((rank, str(norm), value))
    return lists


def _list_of(lists: dict, movie: object, review: object) -> list[tuple[int, str, float]]:
    """The list a review is scored against: its own, else its movie's."""
    return lists.get((movie, str(review)), lists.get((movie, None), []))


def trec_qrels(evaluation) -> list[str]:
    """`qid 0 docid grade` lines: every GT keyword a review is scored against, graded by its gain."""
    lists = _gt_lists(evaluation.ground_truth)
    lines: list[str] = []
    queries = evaluation.scores[["movie", "review_id"]].drop_duplicates()
    for movie, review in zip(queries["movie"], queries["review_id"]):
        qid = query_id(movie, review)
        for rank, norm, value in _list_of(lists, movie, review):
            lines.append(f"{qid} 0 {_gt_doc(rank, norm)} {int(round(value * GRADE_SCALE))}")
    return lines


def trec_runs(evaluation) -> dict[str, list[str]]:
    """{model: `qid Q0 docid rank score model` lines}, in kweval's order of each list."""
    kw = evaluation.keywords
    lists = _gt_lists(evaluation.ground_truth)
    runs: dict[str, list[str]] = {}
    for (movie, review, model), group in kw.groupby(["movie", "review_id", "model"], sort=False):
        qid = query_id(movie, review)
        gt_norm = {rank: norm for rank, norm, _ in _list_of(lists, movie, review)}
        n = len(group)
        lines = runs.setdefault(str(model), [])
        for position, norm, gt_rank in zip(group["position"], group["norm"], group["gt_rank"]):
            if gt_rank >= 0:
                doc = _gt_doc(int(gt_rank), gt_norm[int(gt_rank)])
            else:
                doc = f"p{int(position)}:{quote(str(norm), safe='')}"
            lines.append(f"{qid} Q0 {doc} {int(position) + 1} {n - int(position)} {quote(str(model), safe='')}")
    return runs


def write_trec(evaluation, folder: Path) -> list[Path]:
    """Write `qrels.txt` and `run.<model>.txt` into `folder`; returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "qrels.txt"]
    written[0].write_text("\n".join(trec_qrels(evaluation)) + "\n", encoding="utf-8")
    for model, lines in trec_runs(evaluation).items():
        path = folder / f"run.{quote(model, safe='')}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written
