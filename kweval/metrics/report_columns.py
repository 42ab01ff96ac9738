"""The columns kweval reports beside the metrics: summary counts, the dataset overview, comparisons of two models.

Rows of (name, label, definition, group, range, better direction, reference) that
`kweval.metrics.registry` registers after the metrics, so `info`, the column help
and docs/metrics.md explain them as they explain the metrics.  Plain data: this
module imports nothing.
"""

from __future__ import annotations

COLUMNS: tuple[tuple[str, ...], ...] = (
    # ---- summary counts (§6)
    ("n_reviews", "Reviews", "reviews evaluated for this row", "aggregation", "0, 1, 2, …", "neither", ""),
    (
        "n_skipped",
        "Skipped",
        "reviews skipped (no output from the model for them)",
        "aggregation",
        "0, 1, 2, …",
        "lower",
        "",
    ),
    # ---- judged metrics (§11): each metric's `<metric>_judged` twin reads as the metric
    (
        "n_judgments",
        "Judgments used",
        "judged items (a keyword for a review or a whole movie, annotators combined) that changed or confirmed a "
        "scored GT list of this row; each metric's `<metric>_judged` column is that metric against the judged GT",
        "judgments",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    # ---- what was loaded and evaluated, per movie and per model (§1; the dashboard's Data page)
    (
        "reviews",
        "Reviews",
        "reviews of the movie in the data (evaluated or not)",
        "dataset",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "gt_keywords",
        "GT keywords",
        "the movie's GT keywords after cleaning (normalized; empty and repeated ones dropped)",
        "dataset",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "evaluated_pairs",
        "Evaluated pairs",
        "review × model pairs of the movie that were scored",
        "dataset",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "skipped_pairs",
        "Skipped pairs",
        "review × model pairs of the movie without output from the model",
        "dataset",
        "0, 1, 2, …",
        "lower",
        "",
    ),
    (
        "score_direction",
        "Score direction",
        "whether the model's keyword scores are better high (higher) or low (lower, e.g. YAKE)",
        "dataset",
        "higher / lower",
        "neither",
        "",
    ),
    (
        "keywords",
        "Keywords",
        "the model's predicted keywords after cleaning (normalized; empty and repeated ones dropped)",
        "dataset",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "evaluated_reviews",
        "Evaluated reviews",
        "reviews the model was scored on",
        "dataset",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "skipped_reviews",
        "Skipped reviews",
        "reviews without output from the model",
        "dataset",
        "0, 1, 2, …",
        "lower",
        "",
    ),
    ("reason", "Reason", "why the review × model pair was not scored", "dataset", "text", "neither", ""),
    # ---- paired comparison of model A with model B (§7)
    (
        "n",
        "Pairs",
        "reviews both models were evaluated on (where the metric is defined on both)",
        "statistics",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    (
        "mean_a",
        "Mean A",
        "model A's mean of the metric over the paired reviews",
        "statistics",
        "as the metric",
        "neither",
        "",
    ),
    (
        "mean_b",
        "Mean B",
        "model B's mean of the metric over the paired reviews",
        "statistics",
        "as the metric",
        "neither",
        "",
    ),
    (
        "diff",
        "Difference B − A",
        "model B's mean minus model A's over the paired reviews (positive: B higher)",
        "statistics",
        "[−1, 1]",
        "neither",
        "",
    ),
    (
        "ci_low",
        "CI low",
        "lower end of the 95 % paired-bootstrap interval of the difference",
        "statistics",
        "[−1, 1]",
        "neither",
        "Efron & Tibshirani 1993",
    ),
    (
        "ci_high",
        "CI high",
        "upper end of the 95 % paired-bootstrap interval of the difference",
        "statistics",
        "[−1, 1]",
        "neither",
        "Efron & Tibshirani 1993",
    ),
    (
        "ci_level_holm",
        "CI level (Holm)",
        "confidence level of Holm's step for this metric: 1 − 0.05/(m − r + 1), r the rank of its p among the m "
        "metrics of its family compared (equal p-values: the first's step)",
        "statistics",
        "[0.95, 1)",
        "neither",
        "Holm 1979",
    ),
    (
        "ci_low_holm",
        "CI low (Holm)",
        "lower end of the paired-bootstrap interval of the difference at ci_level_holm (the interval that goes with "
        "p_randomization_holm)",
        "statistics",
        "[−1, 1]",
        "neither",
        "",
    ),
    (
        "ci_high_holm",
        "CI high (Holm)",
        "upper end of the paired-bootstrap interval of the difference at ci_level_holm",
        "statistics",
        "[−1, 1]",
        "neither",
        "",
    ),
    (
        "p_randomization",
        "p (randomization)",
        "paired randomization (sign-flip) test of the mean difference, two-sided",
        "statistics",
        "[0, 1]",
        "lower",
        "Smucker et al. 2007",
    ),
    ("p_ttest", "p (t-test)", "paired t-test of the mean difference, two-sided", "statistics", "[0, 1]", "lower", ""),
    (
        "p_randomization_holm",
        "p (randomization, Holm)",
        "p_randomization adjusted by Holm–Bonferroni within the metric's family (the family column)",
        "statistics",
        "[0, 1]",
        "lower",
        "Holm 1979",
    ),
    (
        "p_ttest_holm",
        "p (t-test, Holm)",
        "p_ttest adjusted by Holm–Bonferroni within the metric's family (the family column)",
        "statistics",
        "[0, 1]",
        "lower",
        "Holm 1979",
    ),
    (
        "family",
        "Family",
        "the metrics Holm's correction counts together: set (set-based and weighted), ranking (at k), keyphrase, "
        "keyphrase:present, semantic, sentiment, or a preset's (kweval.stats.families); the same on every surface",
        "statistics",
        "text",
        "neither",
        "Holm 1979",
    ),
    (
        "significant",
        "Significant (Holm, α = 0.05)",
        "p_randomization_holm < 0.05: the difference is unlikely to be chance",
        "statistics",
        "yes / no",
        "neither",
        "",
    ),
    (
        "wins",
        "Wins",
        "reviews where the first model scores higher than the second",
        "statistics",
        "0, 1, 2, …",
        "neither",
        "",
    ),
    ("ties", "Ties", "reviews where both models score the same", "statistics", "0, 1, 2, …", "neither", ""),
    (
        "losses",
        "Losses",
        "reviews where the first model scores lower than the second",
        "statistics",
        "0, 1, 2, …",
        "neither",
        "",
    ),
)


UNDEFINED = {  # a preset's split without such gold: (the count, why), in a document's words
    "_present": (
        "n_gt_present",
        "no gold phrase of the {review} occurs in its text (by the preset's rule); the tools' presets score 0 there",
    ),
    "_absent": (
        "n_gt_absent",
        "every gold phrase of the {review} occurs in its text (by the preset's rule): none is absent; the tools' "
        "presets score 0 there",
    ),
}


def _preset_rows() -> tuple[tuple[str, ...], ...]:
    """A keyphrase preset's columns that are no kweval metric (`kweval evaluate --protocol pke|kpeval|meng`,
    docs/protocols.md): P and R over all predictions (M) and at the oracle cut-off |G| (O), the same on the present
    gold with the present predictions (`_present`), and recall of the absent gold (`_absent`).  A present (absent)
    recall or F1 has no value for a document without present (absent) gold: the row's last two items are the count
    and the reason (`MetricInfo.undefined_when`)."""
    cuts = {"{k}": "the first {k} predictions", "M": "all predictions", "O": "the first |G| predictions (oracle)"}
    sides = {
        "": "",
        "_present": ", present gold against present predictions (in the text, by the preset's rule)",
        "_absent": ", absent gold (not in the text, by the preset's rule)",
    }
    rows = []
    for side, on in sides.items():
        for cut, over in cuts.items():
            for kind, what in (("p", "precision"), ("r", "recall"), ("f1", "F1")):
                name = f"{kind}@{cut}{side}"
                taken = name in ("p@{k}", "r@{k}", "f1@{k}", "f1@M", "f1@O", "f1@{k}_present")  # kweval's own
                if taken or (side == "_absent" and (kind != "r" or cut == "O")):
                    continue
                label = f"{'F1' if kind == 'f1' else kind.upper()}@{cut}" + (f" ({side[1:]})" if side else "")
                empty = UNDEFINED[side] if side and kind != "p" else ()
                rows.append(
                    (
                        name,
                        label,
                        f"under a preset: {what} over {over}{on}",
                        "keyphrase",
                        "[0, 1]",
                        "higher",
                        "",
                        *empty,
                    )
                )
    return tuple(rows)


COLUMNS += _preset_rows()
