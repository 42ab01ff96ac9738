"""Judgments on DNLP: the judged evaluation's cost beside the reference one, and the store's write rate.

Judged evaluation is the same pipeline on G' (docs/metrics.md §11); a review
judged on its own gets a copy of its movie's list (272-449 keywords on DNLP),
so its cost grows with the number of reviews judged.  The store's figure is
judgments written per second by 2 processes at once (each a `BEGIN IMMEDIATE`
transaction), with the total checked: nothing lost.

    python bench/bench_judgments.py [--data $KWEVAL_SHARED/data/dnlp/Dataset] [--reviews 500] [--writes 200]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kweval.data import load_dataset  # noqa: E402
from kweval.evaluation.pipeline import EvalOptions, evaluate  # noqa: E402
from kweval.judgments import JudgmentStore, checked, judged_evaluation, read_store  # noqa: E402
from kweval.text.normalize import normalize  # noqa: E402

DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"


def _judgments(evaluation, n_reviews: int) -> pd.DataFrame:
    """Grade 2 for the top unmatched prediction of `n_reviews` reviews, and 0 for each movie's first GT keyword."""
    kw = evaluation.keywords
    top = kw[(kw["position"] == 0) & (kw["gt_rank"] < 0)].drop_duplicates(["movie", "review_id"]).head(n_reviews)
    rows = [(m, r, k, 2, "bench") for m, r, k in zip(top["movie"], top["review_id"], top["keyword"])]
    first = evaluation.ground_truth.drop_duplicates("movie")
    rows += [(m, None, k, 0, "bench") for m, k in zip(first["movie"], first["keyword"])]
    frame = pd.DataFrame(rows, columns=["movie", "review_id", "keyword", "grade", "annotator"]).astype(
        {"review_id": object}
    )
    frame.insert(0, "id", range(1, len(frame) + 1))
    return frame.assign(norm=[normalize(k) for k in frame["keyword"]], side="prediction", time="")


def _write(path: str, who: str, n: int) -> None:
    store = JudgmentStore(path, "bench")
    for i in range(n):
        store.add("m", f"r{i}", f"k {who} {i}", i % 4, who)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DNLP))
    parser.add_argument("--reviews", type=int, default=500)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    dataset = load_dataset(args.data)
    options = EvalOptions(k=5)
    start = time.perf_counter()
    reference = evaluate(dataset, options, keywords=True)
    ref_s = time.perf_counter() - start
    start = time.perf_counter()
    kept, problems = checked(_judgments(reference, args.reviews), dataset, "bench")
    check_s = time.perf_counter() - start
    start = time.perf_counter()
    judged, ground_truth = judged_evaluation(dataset, kept, options)
    judged_s = time.perf_counter() - start
    print(f"reference evaluate: {ref_s:.1f} s ({len(reference.scores):,} review x model rows)")
    print(f"check {len(kept):,} judgments: {check_s:.1f} s ({len(problems)} problem line(s))")
    print(f"judged evaluate ({ground_truth.n_used} used, G' {len(ground_truth.table):,} rows): {judged_s:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "j.sqlite")
        JudgmentStore(path, "bench")
        ctx = multiprocessing.get_context("spawn")
        workers = [ctx.Process(target=_write, args=(path, f"w{i}", args.writes)) for i in range(2)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        write_s = time.perf_counter() - start
        n = len(read_store(path, "bench"))
        print(f"store: {n} of {2 * args.writes} judgments kept, {n / write_s:.0f} writes/s (2 processes, incl. start)")


if __name__ == "__main__":
    main()
