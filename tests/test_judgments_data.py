"""Judged evaluation on the real data shapes: movie-level DNLP and per-document SemEval2017 (docs/metrics.md §11)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.judgments import checked, judged_evaluation
from kweval.text.normalize import normalize
from tests.helpers import DNLP, SEMEVAL

KEYS = ["movie", "review_id", "model"]


def judgment_rows(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["movie", "review_id", "keyword", "grade", "annotator"]).astype(
        {"review_id": object}
    )
    frame.insert(0, "id", range(1, len(frame) + 1))
    frame["norm"] = [normalize(k) for k in frame["keyword"]]
    frame["side"], frame["time"] = "prediction", ""
    return frame


def unmatched_top_prediction(evaluation) -> pd.Series:
    kw = evaluation.keywords
    return kw[(kw["position"] == 0) & (kw["gt_rank"] < 0)].iloc[0]


def check_judged(dataset, options: EvalOptions) -> None:
    """No judgments: every number as the reference; one added and one removed keyword move only their lists."""
    reference = evaluate(dataset, options, keywords=True)
    metrics = [c for c in reference.scores.columns if c not in KEYS]
    same, _ = judged_evaluation(dataset, judgment_rows([]), options)
    pd.testing.assert_frame_equal(reference.scores[metrics], same.scores[metrics], check_exact=False, rtol=1e-12)
    miss = unmatched_top_prediction(reference)
    gt = reference.ground_truth
    own = gt[(gt["movie"] == miss["movie"]) & (gt["review_id"].isna() | (gt["review_id"] == miss["review_id"]))]
    rows = [
        (miss["movie"], miss["review_id"], miss["keyword"], 3, "ann"),
        (miss["movie"], miss["review_id"], own["keyword"].iloc[0], 0, "ann"),
    ]
    kept, problems = checked(judgment_rows(rows), dataset, "j")
    assert problems == [] and len(kept) == 2
    judged, ground_truth = judged_evaluation(dataset, kept, options)
    assert ground_truth.n_used == 2
    both = reference.scores.merge(judged.scores, on=KEYS, suffixes=("", "_judged"))
    at = (both["movie"] == miss["movie"]) & (both["review_id"] == miss["review_id"]) & (both["model"] == miss["model"])
    row = both[at].iloc[0]
    assert row["rr"] < 1.0 and row["rr_judged"] == 1.0  # the top prediction, unmatched before, is now relevant
    assert row["n_gt_judged"] == row["n_gt"]  # one GT keyword out, one judged keyword in
    elsewhere = both[(both["movie"] != miss["movie"]) | (both["review_id"] != miss["review_id"])]
    assert len(elsewhere) and (elsewhere["ndcg@5"] - elsewhere["ndcg@5_judged"]).abs().max() < 1e-12


@pytest.mark.dnlp
def test_dnlp_judged():
    dataset = load_dataset(DNLP)
    dataset = dataset.subset(dataset.movie_ids[:3])
    check_judged(dataset, EvalOptions(k=5))


@pytest.mark.keyphrase
def test_semeval_per_document_judged(tmp_path):
    docs = sorted((SEMEVAL / "docsutf8").glob("*.txt"))[:40]
    lines = []
    for doc in docs:
        words = doc.read_text(encoding="utf-8").split()
        lines.append(json.dumps({"id": doc.stem, "keyphrases": [" ".join(words[j : j + 2]) for j in range(0, 24, 3)]}))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_dataset(SEMEVAL, predictions={"first": str(predictions)}).subset(models=["first"])
    dataset = dataset.subset(movies=sorted({m for m in dataset.predictions["movie"]}))
    check_judged(dataset, EvalOptions(k=5, match="exact"))
