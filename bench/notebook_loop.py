"""The seed notebooks' own evaluation loop, restated as one script: the baseline kweval is timed against.

What runs, for every movie (Extracted_Keywords/kw_<Movie>.pkl) × every model
(keywords_<model> column), exactly as the notebooks do it:

- seed 000 ("Evaluation Across All Movies" cell): iterrows over the reviews,
  normalize each predicted keyword, drop repeats; build the notebook's
  flat/unique/max-score side tables; then `evaluate_keywords_weighted` and
  `compute_global_ndcg` (global weighted P/R/F1 and nDCG@5), called with the
  movie's GT list as the notebook calls them;
- seed 001 ("Evaluation Across All Movies" cell, lexical part): iterrows again,
  and per review `evaluate_keywords` (P/R/F1 by approximate matching, GT
  re-normalized on every call), averaged over reviews.

The helper functions keep the notebooks' per-call structure (a regex
`normalize_kw` per keyword per call, `is_approx_match` loops) and therefore
their numbers, defects included (see METRICS.md §7).  This file is a
benchmark baseline only: nothing in kweval imports it.

With --per-review-weighted, seed 001's loop also computes its per-review
weighted P/R/F1 (`evaluate_keywords_weighted` of its weighted-metrics cell, as
its all-movies cell does).  That is not part of the issue-2 baseline; the
benchmark reports it separately, for information.

Seed 001's all-movies cell skips a review whose scores are not Python
floats/ints (`isinstance(score, (float, int))`): the reranker's np.float32
scores on SW_Episode6, so that pair has no per-review rows (NaN), as there.

Usage: python bench/notebook_loop.py [DATASET_DIR] [--per-review-weighted]   (default ../shared/data/dnlp/Dataset beside
the checkout)
"""

from __future__ import annotations

import math
import os
import re
import sys
import time

import numpy as np
import pandas as pd

DEFAULT_DATASET = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "dnlp", "Dataset")
)


# --- seed 000 / 001 helpers (same semantics and per-call structure) ---------------------------------


def normalize_kw(kw):
    kw = kw.lower()
    kw = re.sub(r"[^a-zA-Z0-9\s]", "", kw)
    return kw.strip()


def is_approx_match(kw, gt_keywords):
    for gt in gt_keywords:
        if kw == gt or kw in gt or gt in kw:
            return True
    return False


def evaluate_keywords_weighted(all_predicted_kw_score, all_gt_keywords):
    """Seed 000: global weighted precision/recall/F1 over reviews."""
    total_score = 0.0
    match_score = 0.0
    total_gt = 0
    for pred_kw_score, gt_kw in zip(all_predicted_kw_score, all_gt_keywords):
        gt_kw = [normalize_kw(k) for k in gt_kw]
        pred_kw_score = [(normalize_kw(kw), score) for kw, score in pred_kw_score if isinstance(kw, str)]
        total_score += sum(score for _, score in pred_kw_score)
        total_gt += len(gt_kw)
        matched_gts = set()
        for kw, score in pred_kw_score:
            for gt in gt_kw:
                if gt not in matched_gts and is_approx_match(kw, [gt]):
                    match_score += score
                    matched_gts.add(gt)
                    break
    precision = match_score / total_score if total_score > 0 else 0
    recall = match_score / total_gt if total_gt > 0 else 0
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) > 0 else 0
    return precision, recall, f1


def compute_global_ndcg(all_predicted_kw_score, all_gt_keywords, k=5):
    """Seed 000: mean nDCG@k over reviews (graded relevance from the earliest matching GT keyword)."""
    total_ndcg = 0.0
    count = 0
    for pred_kw_score, gt_kw in zip(all_predicted_kw_score, all_gt_keywords):
        gt_keywords_norm = [normalize_kw(k) for k in gt_kw]
        pred_keywords_norm = [normalize_kw(kw) for kw, _ in pred_kw_score[:k]]
        relevance = []
        for pk in pred_keywords_norm:
            match_ranks = [i for i, gk in enumerate(gt_keywords_norm) if is_approx_match(pk, [gk])]
            if match_ranks:
                best_rank = min(match_ranks)
                rel = 1 / math.log2(best_rank + 2)
            else:
                rel = 0
            relevance.append(rel)
        dcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(relevance))
        ideal_relevance = [1 / math.log2(i + 2) for i in range(min(k, len(gt_keywords_norm)))]
        idcg = sum(ideal_relevance)
        if idcg > 0:
            total_ndcg += dcg / idcg
            count += 1
    return total_ndcg / count if count > 0 else 0.0


def evaluate_keywords_weighted_review(predicted_kw_score, gt_keywords):
    """Seed 001 (cell "Score-Aware Evaluation: Weighted Metrics"): weighted P/R/F1 of one review."""
    gt_keywords = [normalize_kw(k) for k in gt_keywords]
    pred_keywords = [(normalize_kw(kw), score) for kw, score in predicted_kw_score if isinstance(kw, str)]
    total_score = sum(score for _, score in pred_keywords)
    if total_score == 0:
        return 0, 0, 0
    match_score = sum(score for kw, score in pred_keywords if is_approx_match(kw, gt_keywords))
    precision = match_score / total_score
    recall = match_score / len(gt_keywords) if gt_keywords else 0
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) else 0
    return precision, recall, f1


def evaluate_keywords(pred_keywords, gt_keywords):
    """Seed 001: per-review P/R/F1 by approximate matching."""
    pred_keywords = [normalize_kw(k) for k in pred_keywords]
    gt_keywords = [normalize_kw(k) for k in gt_keywords]
    match_count = sum([is_approx_match(k, gt_keywords) for k in pred_keywords])
    precision = match_count / len(pred_keywords) if pred_keywords else 0
    recall = match_count / len(gt_keywords) if gt_keywords else 0
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) else 0
    return precision, recall, f1


# --- the two notebooks' all-movies loops ---------------------------------------------------------------


def seed000_movie(selected_film, gt_keywords, models):
    """Seed 000's per-movie body: collect normalized, de-duplicated predictions per model, then score."""
    all_predicted_kw_score = {model: [] for model in models}
    for _, row in selected_film.iterrows():
        for model in models:
            pred_col = f"keywords_{model}"
            if pred_col in row and isinstance(row[pred_col], list):
                predicted_kw_score = [(normalize_kw(kw), score) for kw, score in row[pred_col] if isinstance(kw, str)]
                seen = set()
                unique_pred = [(kw, score) for kw, score in predicted_kw_score if kw not in seen and not seen.add(kw)]
                all_predicted_kw_score[model].append(unique_pred)
    out = {}
    for model in models:
        flat_kw = [kw for review in all_predicted_kw_score[model] for kw, _ in review]
        unique_pred_keywords = list(set(flat_kw))  # noqa: F841  (computed and unused, as in the notebook)
        kw_score_max = {}
        for review in all_predicted_kw_score[model]:
            for kw, score in review:
                if kw not in kw_score_max or score > kw_score_max[kw]:
                    kw_score_max[kw] = score
        sorted_kw_score = sorted(kw_score_max.items(), key=lambda x: x[1], reverse=True)  # noqa: F841
        pred_kw_score_list = all_predicted_kw_score[model]
        keyword_only_list = [[kw for kw, _ in review] for review in pred_kw_score_list]  # noqa: F841
        wp, wr, wf = evaluate_keywords_weighted(pred_kw_score_list, gt_keywords)
        ndcg = compute_global_ndcg(pred_kw_score_list, gt_keywords, k=5)
        out[model] = {
            "Weighted Precision": round(wp, 4),
            "Weighted Recall": round(wr, 4),
            "Weighted F1-score": round(wf, 4),
            "nDCG@5": round(ndcg, 4),
        }
    return out


def seed001_movie(selected_film, gt_keywords, models, weighted=False):
    """Seed 001's per-movie body, lexical part: per-review P/R/F1 (and, with `weighted`, its per-review weighted
    P/R/F1), averaged per model."""
    results = {model: [] for model in models}
    for _, row in selected_film.iterrows():
        for model in models:
            pred_col = f"keywords_{model}"
            if pred_col not in row or not isinstance(row[pred_col], list):
                continue
            predicted_kw_score = row[pred_col]
            pred_kw_only = [kw for kw, _ in predicted_kw_score if isinstance(kw, str)]
            predicted_kw_structured = [
                {"keyword": kw, "sentiment_score": float(score)}
                for kw, score in predicted_kw_score
                if isinstance(kw, str) and isinstance(score, (float, int))
            ]
            if not pred_kw_only or not predicted_kw_structured:
                continue
            precision, recall, f1 = evaluate_keywords(pred_kw_only, gt_keywords)
            metrics_row = {"precision": precision, "recall": recall, "f1": f1}
            if weighted:
                w_precision, w_recall, w_f1 = evaluate_keywords_weighted_review(predicted_kw_score, gt_keywords)
                metrics_row.update({"w_precision": w_precision, "w_recall": w_recall, "w_f1": w_f1})
            results[model].append(metrics_row)
    out = {}
    for model in models:
        if results[model]:
            metrics_df = pd.DataFrame(results[model])
            out[model] = {
                "Avg_Precision": round(metrics_df["precision"].mean(), 4),
                "Avg_Recall": round(metrics_df["recall"].mean(), 4),
                "Avg_F1": round(metrics_df["f1"].mean(), 4),
            }
            if weighted:
                out[model].update(
                    {
                        "Avg_Weighted_Precision": round(metrics_df["w_precision"].mean(), 4),
                        "Avg_Weighted_Recall": round(metrics_df["w_recall"].mean(), 4),
                        "Avg_Weighted_F1": round(metrics_df["w_f1"].mean(), 4),
                    }
                )
    return out


def main(dataset: str = DEFAULT_DATASET, weighted: bool = False) -> pd.DataFrame:
    keywords_dir = os.path.join(dataset, "Extracted_Keywords")
    keywords_ground_truth = pd.read_pickle(os.path.join(dataset, "keywords_ground_truth.pkl"))
    rows = []
    for file in sorted(os.listdir(keywords_dir)):
        if not (file.endswith(".pkl") and file.startswith("kw_")):
            continue
        movie_name = file.replace("kw_", "").replace(".pkl", "")
        selected_film = pd.read_pickle(os.path.join(keywords_dir, file))
        selected_film_id = selected_film["Movie_ID"].iloc[0]
        kw_ground_truth = keywords_ground_truth[keywords_ground_truth["Movie_ID"] == selected_film_id]
        gt_keywords = kw_ground_truth["Keyword"].tolist()
        models = [
            c[len("keywords_") :] for c in selected_film.columns if isinstance(c, str) and c.startswith("keywords_")
        ]
        global_metrics = seed000_movie(selected_film, gt_keywords, models)
        review_metrics = seed001_movie(selected_film, gt_keywords, models, weighted)
        for model in models:
            rows.append({"Movie": movie_name, "Model": model, **global_metrics[model], **review_metrics.get(model, {})})
    return pd.DataFrame(rows).sort_values(["Movie", "Model"]).reset_index(drop=True)


if __name__ == "__main__":
    start = time.perf_counter()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    table = main(args[0] if args else DEFAULT_DATASET, weighted="--per-review-weighted" in sys.argv[1:])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False))
    print(
        f"notebook loop: {len(table)} movie x model rows in {time.perf_counter() - start:.2f} s (in-process)",
        file=sys.stderr,
    )
    _ = np  # numpy is imported by both notebooks
