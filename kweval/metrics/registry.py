"""The metric registry: what every reported number means, in one place.

Each column kweval reports (per-review metrics, movie-level coverage, the
semantic and sentiment metrics, the summary's counts and the columns of a
paired comparison) has one `MetricInfo`: its label, a one-line definition,
its range, which direction is better and the section of docs/metrics.md
that defines it.  The CLI's ``--help``, the dashboard's column help and
docs/metrics.md all read this table, so they cannot disagree.

Metrics cut off at k are registered once as a template (``ndcg@k``);
`info("ndcg@5")` fills in k.  Adding a metric is one `register(...)` call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

HIGHER, LOWER, NEITHER = "higher", "lower", "neither"

# docs/metrics.md section anchors the entries cite
SECTIONS = {
    "inputs": "1-inputs-and-cleaning",
    "matching": "2-matching",
    "set": "3-per-review-metrics",
    "ranking": "3-per-review-metrics",
    "coverage": "3-per-review-metrics",
    "semantic": "4-semantic-metrics",
    "sentiment": "5-sentiment-alignment",
    "aggregation": "6-aggregation",
    "statistics": "7-comparing-two-models",
    "keyphrase": "9-keyphrase-benchmarks",
    "dataset": "1-inputs-and-cleaning",
}


@dataclass(frozen=True)
class MetricInfo:
    """One reported column: ``name`` as in the tables (``{k}`` stands for the cut-off in templates)."""

    name: str
    label: str
    definition: str
    range: str
    better: str
    group: str
    reference: str = ""

    @property
    def section(self) -> str:
        """The docs/metrics.md anchor that defines this column."""
        return SECTIONS[self.group]

    @property
    def doc_link(self) -> str:
        return f"docs/metrics.md#{self.section}"

    def help(self) -> str:
        """One line for a table's column help: definition, range, better direction."""
        direction = {HIGHER: "higher is better", LOWER: "lower is better"}.get(self.better, "")
        return " · ".join(part for part in (self.definition, f"range {self.range}", direction) if part)

    def for_k(self, k: int | str) -> MetricInfo:
        """A template entry with its cut-off filled in."""
        return replace(
            self,
            name=self.name.replace("{k}", str(k)),
            label=self.label.replace("{k}", str(k)),
            definition=self.definition.replace("{k}", str(k)),
        )


_REGISTRY: dict[str, MetricInfo] = {}


def register(entry: MetricInfo) -> MetricInfo:
    """Add (or replace) an entry; names with ``{k}`` are templates matched by `info`."""
    _REGISTRY[entry.name] = entry
    return entry


def entries() -> list[MetricInfo]:
    """Every entry, in registration order (templates unfilled)."""
    return list(_REGISTRY.values())


def _template_pattern(name: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(name).replace(re.escape("{k}"), r"(\d+)") + "$")


def info(column: str) -> MetricInfo | None:
    """The entry of a column name (``ndcg@10`` resolves the ``ndcg@{k}`` template), or None."""
    if column in _REGISTRY:
        return _REGISTRY[column]
    for name, entry in _REGISTRY.items():
        if "{k}" in name:
            m = _template_pattern(name).match(column)
            if m:
                return entry.for_k(int(m.group(1)))
    return None


def column_help(columns: Iterable[str]) -> dict[str, str]:
    """{column: one-line help} for every registered column among `columns`."""
    out = {}
    for col in columns:
        entry = info(col)
        if entry is not None:
            out[col] = entry.help()
    return out


def better(column: str) -> str:
    """``higher``, ``lower`` or ``neither`` (unknown columns: neither)."""
    entry = info(column)
    return entry.better if entry is not None else NEITHER


def help_text(
    k: int | str = "k", groups: Iterable[str] = ("set", "ranking", "coverage", "semantic", "sentiment", "keyphrase")
) -> str:
    """The metric list for the CLI's ``--help`` (templates with `k` filled in; the letter k by default)."""
    wanted = set(groups)
    lines = []
    for entry in entries():
        if entry.group in wanted:
            e = entry.for_k(k)
            lines.append(f"  {e.name:<16} {e.definition}")
    return "\n".join(lines)


def markdown_table(groups: Iterable[str] | None = None) -> str:
    """The registry as a Markdown table (templates shown with k), for docs/metrics.md."""
    wanted = set(groups) if groups is not None else None
    rows = ["| column | label | definition | range | better | defined in |", "| --- | --- | --- | --- | --- | --- |"]
    for e in entries():
        if wanted is not None and e.group not in wanted:
            continue
        cells = [
            f"`{e.name.replace('{k}', 'k')}`",
            e.label.replace("{k}", "k"),
            e.definition.replace("{k}", "k"),
            e.range,
            e.better,
            f"[§](#{e.section})" + (f" {e.reference}" if e.reference else ""),
        ]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _add(
    name: str,
    label: str,
    definition: str,
    group: str,
    range_: str = "[0, 1]",
    better_: str = HIGHER,
    reference: str = "",
) -> None:
    register(MetricInfo(name, label, definition, range_, better_, group, reference))


# ---- per-review lexical metrics (docs/metrics.md §3)
_add("precision", "Precision", "matched predictions / predictions (0 without predictions)", "set")
_add("recall", "Recall", "matched GT keywords / GT keywords of the movie", "set")
_add("f1", "F1", "harmonic mean of precision and recall", "set")
_add(
    "w_precision",
    "Weighted precision",
    "model scores of the matched predictions / all its scores (confidence-weighted)",
    "set",
)
_add(
    "w_recall",
    "Weighted recall",
    "GT-rank gains of the matched GT keywords / gains of every GT keyword (importance-weighted)",
    "set",
)
_add("w_f1", "Weighted F1", "harmonic mean of w_precision and w_recall", "set")
_add(
    "ndcg@{k}",
    "nDCG@{k}",
    "DCG@{k} / IDCG@{k}: GT-rank gain of each matched keyword, discounted by its position, over the GT's own top {k}",
    "ranking",
    reference="Järvelin & Kekäläinen 2002",
)
_add("p@{k}", "P@{k}", "matched predictions among the first {k} / {k}", "ranking")
_add(
    "ap@{k}",
    "AP@{k}",
    "average precision over the first {k}: Σ precision at each matched position / min({k}, |GT|)",
    "ranking",
)
_add(
    "rr",
    "Reciprocal rank",
    "1 / (position + 1) of the first matched prediction within k (0 if none); its mean is MRR@k",
    "ranking",
)
_add(
    "gt_coverage",
    "GT coverage",
    "share of the movie's GT keywords matched in at least one of its reviews (movie level)",
    "coverage",
)
# ---- semantic (§4) and sentiment (§5)
_add(
    "sem_precision",
    "Semantic precision",
    "predictions whose nearest GT keyword has cosine > τ / predictions",
    "semantic",
)
_add("sem_recall", "Semantic recall", "GT keywords whose nearest prediction has cosine > τ / GT keywords", "semantic")
_add("sem_f1", "Semantic F1", "harmonic mean of sem_precision and sem_recall", "semantic")
_add(
    "sas_keywords",
    "SAS (GT keywords)",
    "1 − |mean VADER value of the predictions − mean value of the GT keywords|",
    "sentiment",
    reference="Hutto & Gilbert 2014 (VADER)",
)
_add(
    "sas_text",
    "SAS (review text)",
    "1 − |mean VADER value of the predictions − value of the review text|",
    "sentiment",
    reference="Hutto & Gilbert 2014 (VADER)",
)
# ---- the keyphrase field's metrics (§9; --keyphrase, --present; on by default for per-document GT)
_add("r@{k}", "R@{k}", "matched GT keywords among the first {k} predictions / |G|", "keyphrase")
_add(
    "f1@{k}",
    "F1@{k}",
    "F1 of hard P@{k} (matched among the first {k} / {k}, the field's usual cut-off) and R@{k}",
    "keyphrase",
    reference="Meng et al. 2017",
)
_add(
    "f1@{k}_flex",
    "F1@{k} (flexible)",
    "F1 of flexible P@{k} (matched among the first {k} / min({k}, |P|)) and R@{k}",
    "keyphrase",
)
_add(
    "f1@M",
    "F1@M",
    "F1 over all predictions, |M| / |P| and |M| / |G| (the same number as f1)",
    "keyphrase",
    reference="Yuan et al. 2020",
)
_add(
    "f1@O",
    "F1@O",
    "F1 at the oracle cut-off c = |G|: matched among the first c / min(c, |P|) and / |G|",
    "keyphrase",
    reference="Yuan et al. 2020",
)
_add(
    "r_precision",
    "R-precision",
    "matched among the first |G| predictions / |G|",
    "keyphrase",
    reference="Zesch & Gurevych 2009",
)
_add(
    "recall_present",
    "Recall (present)",
    "matched GT keywords that occur in the review's text / GT keywords that do",
    "keyphrase",
)
_add(
    "f1@{k}_present",
    "F1@{k} (present)",
    "F1 of matched present GT keywords among the first {k} / {k} and / present GT keywords",
    "keyphrase",
)
_add(
    "recall_absent",
    "Recall (absent)",
    "matched GT keywords that do not occur in the review's text / GT keywords that do not",
    "keyphrase",
)
# ---- summary counts (§6)
_add("n_reviews", "Reviews", "reviews evaluated for this row", "aggregation", "0, 1, 2, …", NEITHER)
_add("n_skipped", "Skipped", "reviews skipped (no output from the model for them)", "aggregation", "0, 1, 2, …", LOWER)
# ---- what was loaded and evaluated, per movie and per model (§1; the dashboard's Data page)
_add("reviews", "Reviews", "reviews of the movie in the data (evaluated or not)", "dataset", "0, 1, 2, …", NEITHER)
_add(
    "gt_keywords",
    "GT keywords",
    "the movie's GT keywords after cleaning (normalized; empty and repeated ones dropped)",
    "dataset",
    "0, 1, 2, …",
    NEITHER,
)
_add(
    "evaluated_pairs",
    "Evaluated pairs",
    "review × model pairs of the movie that were scored",
    "dataset",
    "0, 1, 2, …",
    NEITHER,
)
_add(
    "skipped_pairs",
    "Skipped pairs",
    "review × model pairs of the movie without output from the model",
    "dataset",
    "0, 1, 2, …",
    LOWER,
)
_add(
    "score_direction",
    "Score direction",
    "whether the model's keyword scores are better high (higher) or low (lower, e.g. YAKE)",
    "dataset",
    "higher / lower",
    NEITHER,
)
_add(
    "keywords",
    "Keywords",
    "the model's predicted keywords after cleaning (normalized; empty and repeated ones dropped)",
    "dataset",
    "0, 1, 2, …",
    NEITHER,
)
_add("evaluated_reviews", "Evaluated reviews", "reviews the model was scored on", "dataset", "0, 1, 2, …", NEITHER)
_add("skipped_reviews", "Skipped reviews", "reviews without output from the model", "dataset", "0, 1, 2, …", LOWER)
_add("reason", "Reason", "why the review × model pair was not scored", "dataset", "text", NEITHER)
# ---- paired comparison of model A with model B (§7)
_add(
    "n",
    "Pairs",
    "reviews both models were evaluated on (where the metric is defined on both)",
    "statistics",
    "0, 1, 2, …",
    NEITHER,
)
_add("mean_a", "Mean A", "model A's mean of the metric over the paired reviews", "statistics", "as the metric", NEITHER)
_add("mean_b", "Mean B", "model B's mean of the metric over the paired reviews", "statistics", "as the metric", NEITHER)
_add(
    "diff",
    "Difference B − A",
    "model B's mean minus model A's over the paired reviews (positive: B higher)",
    "statistics",
    "[−1, 1]",
    NEITHER,
)
_add(
    "ci_low",
    "CI low",
    "lower end of the 95 % paired-bootstrap interval of the difference",
    "statistics",
    "[−1, 1]",
    NEITHER,
    "Efron & Tibshirani 1993",
)
_add(
    "ci_high",
    "CI high",
    "upper end of the 95 % paired-bootstrap interval of the difference",
    "statistics",
    "[−1, 1]",
    NEITHER,
    "Efron & Tibshirani 1993",
)
_add(
    "p_randomization",
    "p (randomization)",
    "paired randomization (sign-flip) test of the mean difference, two-sided",
    "statistics",
    "[0, 1]",
    LOWER,
    "Smucker et al. 2007",
)
_add("p_ttest", "p (t-test)", "paired t-test of the mean difference, two-sided", "statistics", "[0, 1]", LOWER)
_add(
    "p_randomization_holm",
    "p (randomization, Holm)",
    "p_randomization adjusted by Holm–Bonferroni across the metrics compared",
    "statistics",
    "[0, 1]",
    LOWER,
    "Holm 1979",
)
_add(
    "p_ttest_holm",
    "p (t-test, Holm)",
    "p_ttest adjusted by Holm–Bonferroni across the metrics compared",
    "statistics",
    "[0, 1]",
    LOWER,
    "Holm 1979",
)
_add(
    "significant",
    "Significant (Holm, α = 0.05)",
    "p_randomization_holm < 0.05: the difference is unlikely to be chance",
    "statistics",
    "yes / no",
    NEITHER,
)
_add("wins", "Wins", "reviews where the first model scores higher than the second", "statistics", "0, 1, 2, …", NEITHER)
_add("ties", "Ties", "reviews where both models score the same", "statistics", "0, 1, 2, …", NEITHER)
_add(
    "losses",
    "Losses",
    "reviews where the first model scores lower than the second",
    "statistics",
    "0, 1, 2, …",
    NEITHER,
)


# ---- docs/metrics.md's generated part

DOC_MARKER = (
    "<!-- generated from kweval/metrics/registry.py by `python -m kweval.metrics.registry "
    "docs/metrics.md`; edit the registry, not below -->"
)
_GROUP_TITLES = {
    "set": "Set-based and weighted",
    "ranking": "Ranking (cut off at k)",
    "coverage": "Movie level",
    "semantic": "Semantic (--semantic)",
    "sentiment": "Sentiment (--sentiment)",
    "keyphrase": "Keyphrase benchmarks (--keyphrase, --present)",
    "aggregation": "Summary counts",
    "dataset": "Dataset overview (the dashboard's Data page)",
    "statistics": "Comparison of model A with model B",
}


def doc_reference() -> str:
    """The generated column reference of docs/metrics.md: one table per group."""
    parts = [DOC_MARKER, ""]
    for group, title in _GROUP_TITLES.items():
        parts += [f"### {title}", "", markdown_table([group])]
    return "\n".join(parts)


def with_doc_reference(document: str) -> str:
    """`document` (docs/metrics.md) with everything after the marker replaced by `doc_reference()`."""
    head = document.split(DOC_MARKER, 1)[0]
    return head.rstrip("\n") + "\n\n" + doc_reference()


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if len(sys.argv) != 2:
        print("usage: python -m kweval.metrics.registry docs/metrics.md", file=sys.stderr)
        raise SystemExit(2)
    path = Path(sys.argv[1])
    path.write_text(with_doc_reference(path.read_text(encoding="utf-8")), encoding="utf-8")
