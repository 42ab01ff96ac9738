"""The failure categories (docs/metrics.md §10): the one table of their names, sides and rules.

Every predicted keyword (before cleaning) and every GT keyword of a review ×
model gets exactly one category: the first rule of its side that applies, in
the order below.  `kweval.explain.failures` assigns them; docs/metrics.md's
§10 table is generated from `CATEGORIES` (`kweval.metrics.docs_table`), so the
code and the document cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

PREDICTION, GT = "prediction", "gt"
SIDES = (PREDICTION, GT)


@dataclass(frozen=True)
class Category:
    """One failure category: its side (prediction or GT keyword), name, label and rule (first match wins)."""

    side: str
    name: str
    label: str
    rule: str


CATEGORIES: tuple[Category, ...] = (
    Category(PREDICTION, "invalid", "invalid", "not a string, or empty after `norm`; dropped by §1"),
    Category(
        PREDICTION,
        "duplicate",
        "duplicate",
        "a later repeat of an earlier prediction's normalized keyword, dropped by §1 (detail: the position it repeats)",
    ),
    Category(PREDICTION, "hit", "hit", "in `M` at position `i < k` (counts in p@k)"),
    Category(PREDICTION, "hit_beyond_k", "hit beyond k", "in `M` at position `i ≥ k`"),
    Category(
        PREDICTION,
        "taken",
        "GT already taken",
        "matches some `g_j` under the match mode, but each such `g_j` was taken by an earlier prediction "
        "(detail: the GT keyword and the position holding it)",
    ),
    Category(
        PREDICTION,
        "near_lexical",
        "near (another match mode)",
        "matches no `g_j` under the match mode but one under another lexical mode, tried in the order "
        "exact, stem, word, approx (detail: the mode and the GT keyword)",
    ),
    Category(
        PREDICTION,
        "near_semantic",
        "near (semantic)",
        "(`--semantic` only) no lexical match in any mode, but cosine ≥ τ to some GT keyword "
        "(detail: the nearest GT keyword and the cosine)",
    ),
    Category(
        PREDICTION,
        "off_reference",
        "off the reference",
        "none of the above (with `--semantic` the detail names the nearest GT keyword and its cosine; with "
        "`--grounding` its grade, §12: present in the text, a possible gap in the reference, or supported, or "
        "unsupported, a candidate hallucination)",
    ),
    Category(GT, "found", "found", "in `M`, matched by a prediction at `i < k` (detail: that prediction)"),
    Category(GT, "found_beyond_k", "found beyond k", "in `M`, matched at `i ≥ k`"),
    Category(
        GT,
        "missed_present",
        "missed, in the text",
        "not in `M`; occurs in the review's text (the present rule of §9, under the match mode)",
    ),
    Category(
        GT,
        "missed_absent",
        "missed, not in the text",
        "not in `M`; does not occur in the review's text (no extractive model can find it)",
    ),
    Category(GT, "missed_no_text", "missed, no text", "not in `M`; the review has no text"),
    Category(
        GT,
        "missed",
        "missed",
        "not in `M`, under a keyphrase preset without a present rule (pke: docs/protocols.md), which has no "
        "present / absent split",
    ),
)

PREDICTION_CATEGORIES = tuple(c.name for c in CATEGORIES if c.side == PREDICTION)
GT_CATEGORIES = tuple(c.name for c in CATEGORIES if c.side == GT)
CATEGORY_NAMES = PREDICTION_CATEGORIES + GT_CATEGORIES
LABELS = {c.name: c.label for c in CATEGORIES}
NEAR_MODES = ("exact", "stem", "word", "approx")  # the other lexical modes, in the order near_lexical tries them


def markdown_table() -> str:
    """The categories as a Markdown table (side, category, rule), for docs/metrics.md §10."""
    rows = ["| side | category | rule |", "| --- | --- | --- |"]
    for c in CATEGORIES:
        rows.append(f"| {c.side} | `{c.name}` | {c.rule.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
