"""The Failures page's words, bars and links, from `kweval.explain.failures` tables (plain functions, no streamlit).

Nothing here decides a category: the counts come from `failure_summary`, the
reviews of a segment from `reviews_with`; this module only names, orders and
escapes them.  Everything user-made (model names, keywords) is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dashboard.escape import esc, md
from kweval.data.vocabulary import Vocabulary
from kweval.metrics.categories import CATEGORIES, GT, PREDICTION

LABELS = {c.name: c.label for c in CATEGORIES}
SIDE_CATEGORIES = {side: [c.name for c in CATEGORIES if c.side == side] for side in (PREDICTION, GT)}
LOSSES = [c for c in SIDE_CATEGORIES[PREDICTION] if c not in ("hit",)]  # where a slot goes instead of a hit
# category colors: hits green, near misses amber, the rest grey/red (the same in every chart)
COLORS = {
    "hit": "#2e7d32",
    "hit_beyond_k": "#81c784",
    "taken": "#8d6e63",
    "near_lexical": "#ffb300",
    "near_semantic": "#ffe082",
    "off_reference": "#9e9e9e",
    "duplicate": "#ab47bc",
    "invalid": "#e53935",
    "found": "#2e7d32",
    "found_beyond_k": "#81c784",
    "missed_present": "#ffb300",
    "missed_absent": "#9e9e9e",
    "missed_no_text": "#e0e0e0",
    "missed": "#bdbdbd",
}
MARKS = {
    "found": "✓",
    "found_beyond_k": "✓",
    "missed_present": "●",
    "missed_absent": "○",
    "missed_no_text": "○",
    "missed": "✗",
}


def bar_frame(summary: pd.DataFrame, side: str, models: Sequence[str]) -> pd.DataFrame:
    """The rows of `failure_summary(table, by=["model"])` for one side, models in `models` order and categories in
    the spec's order, with a readable ``label`` and ``percent`` (share × 100): the data of one stacked bar chart."""
    order = SIDE_CATEGORIES[side]
    rows = summary[(summary["side"] == side) & summary["model"].isin(list(models))].copy()
    rows["model"] = pd.Categorical(rows["model"], categories=list(models))
    rows["category"] = pd.Categorical(rows["category"], categories=order)
    rows = rows.sort_values(["model", "category"]).reset_index(drop=True)
    rows["label"] = rows["category"].map(LABELS).astype(str)
    rows["percent"] = rows["share"] * 100
    return rows


def headline(summary: pd.DataFrame, models: Sequence[str], reviews_word: str = "reviews") -> str:
    """The short answer first, one sentence per model (Markdown, escaped): where its slots go besides hits and how
    many GT keywords it could not have found (absent from the text)."""
    parts = []
    for model in models:
        pred = summary[(summary["model"] == model) & (summary["side"] == PREDICTION)].set_index("category")
        gt = summary[(summary["model"] == model) & (summary["side"] == GT)].set_index("category")
        total = int(pred["count"].sum())
        if total == 0:
            parts.append(f"**{md(model)}** predicted no keyword in these {reviews_word}.")
            continue
        losses = pred.loc[[c for c in LOSSES if c in pred.index], "count"]
        worst = str(losses.idxmax()) if len(losses) and losses.max() > 0 else None
        hits = int(pred["count"].get("hit", 0))
        text = f"**{md(model)}**: {share(hits, total)} of its keywords are hits within k"
        if worst is not None:
            text += f"; it loses most of its keywords to *{LABELS[worst]}* ({share(int(losses[worst]), total)})"
        n_gt = int(gt["count"].sum())
        if n_gt:
            absent = int(gt["count"].get("missed_absent", 0)) + int(gt["count"].get("missed_no_text", 0))
            text += (
                f"; {share(absent, n_gt)} of the GT keywords never occur in the text (no extractive model finds them)"
                if absent
                else "; every GT keyword occurs in the text"
            )
        parts.append(text + ".")
    return "\n\n".join(parts)


def share(part: int, whole: int) -> str:
    """`part` of `whole` as a percentage that never reads 0% (or 100%) for a share that is not: "<1%", ">99%"."""
    value = part / whole
    if 0 < value < 0.005:
        return "<1%"
    if 0.995 <= value < 1:
        return ">99%"
    return f"{value:.0%}"


def off_reference_sentences(grades: pd.DataFrame, models: Sequence[str]) -> str:
    """With grounding, one sentence per model (Markdown, escaped) telling its off-the-reference keywords apart: present
    in the text (a possible gap in the reference), supported by it, or unsupported (a candidate hallucination)."""
    parts = []
    for model in models:
        mine = grades[grades["model"] == model].set_index("grounding")
        total = int(mine["count"].sum()) if len(mine) else 0
        if total == 0:
            continue
        part = {g: share(int(mine["count"].get(g, 0)), total) for g in ("present", "supported", "unsupported")}
        parts.append(
            f"**{md(model)}**: of its {total:,} keywords off the reference, {part['present']} are present in "
            f"the text (possible gaps in the reference), {part['supported']} supported by it and "
            f"{part['unsupported']} unsupported (candidate hallucinations)."
        )
    return "\n\n".join(parts)


def segment_links(
    summary: pd.DataFrame, models: Sequence[str], urls: Sequence[str], side: str
) -> list[tuple[str, str, str, int]]:
    """(model, category, url, count) of every non-empty segment of one side's bars: `urls[i]` is the explorer link of
    the i-th (model, category) pair of `segment_keys`."""
    keys = segment_keys(models, side)
    counts = summary.set_index(["model", "side", "category"])["count"]
    out = []
    for (model, category), url in zip(keys, urls):
        n = int(counts.get((model, side, category), 0))
        if n:
            out.append((model, category, url, n))
    return out


def segment_keys(models: Sequence[str], side: str) -> list[tuple[str, str]]:
    """Every (model, category) of one side, in the bars' order."""
    return [(m, c) for m in models for c in SIDE_CATEGORIES[side]]


def links_markdown(links: Sequence[tuple[str, str, str, int]], unit: str = "keyword") -> str:
    """A Markdown list of segment links: ``model · category (n keywords)`` per line (names escaped)."""
    return "\n".join(
        f"- [{md(model)} · {md(LABELS[category])} ({n:,} {unit}{'s' if n != 1 else ''})]({url})"
        for model, category, url, n in links
    )


def gt_marks_html(rows: pd.DataFrame, ranked: bool) -> str:
    """A review's whole GT list for one model with found (✓) / missed, in the text (●) / missed, absent (○) marks.

    `rows`: the GT rows of `failure_table` for one review × model (position, keyword, category, detail), rank
    order.  Ranks are shown only for ranked GT (an unranked list is a set)."""
    if rows.empty:
        return '<div class="kw-gt-all"><em>no GT keywords</em></div>'
    items = []
    for row in rows.sort_values("position").to_dict("records"):
        cat = str(row["category"])
        rank = f'<span style="opacity:0.7">{int(row["position"])}.</span> ' if ranked else ""
        note = row.get("detail")
        detail = f' <span style="opacity:0.7">({esc(note)})</span>' if isinstance(note, str) and note else ""
        items.append(
            f'<li class="kw-gt-{esc(cat)}" title="{esc(LABELS.get(cat, cat))}">{MARKS.get(cat, "?")} {rank}'
            f"{esc(row['keyword'])}{detail}</li>"
        )
    legend = "✓ found · ● missed, in the text · ○ missed, not in the text"
    if "missed" in set(rows["category"].astype(str)):  # a preset without a present rule (pke)
        legend = "✓ found · ✗ missed (the preset has no present rule)"
    return (
        f'<div class="kw-gt-all" style="font-size:0.85em"><div style="opacity:0.75">{legend}</div>'
        f'<ul style="list-style:none;margin:0;padding-left:0;columns:14rem">{"".join(items)}</ul></div>'
    )


def slice_features_words(features: Sequence[str], words: Vocabulary) -> str:
    """The slice features searched, in words ("collection, text length, GT list size")."""
    said = {
        "movie": words.movie.lower(),
        "rating": "rating band",
        "text_len": "text length",
        "gt_size": "GT list size",
        "present_share": "share of present GT",
        "pred_len": "prediction length",
        "disagreement": "disagreement between models",
    }
    return ", ".join(said.get(f, f) for f in features)


def slices_caption(found: pd.DataFrame, model: str, metric: str, words: Vocabulary, preset: str | None = None) -> str:
    """What the slices table shows (Markdown, escaped): the features searched (those this data has), the model's
    overall value, the slices left out because their CI contains it, and under a keyphrase `preset` whose values
    were searched."""
    overall = found.iloc[0]
    units = words.reviews.lower()
    unclear = int(found.attrs.get("not_clear", 0))
    left_out = (
        f" {unclear} other slice(s) SliceLine found are not listed: their CI contains the overall value."
        if unclear
        else ""
    )
    return (
        f"SliceLine over the {units}' own columns ({slice_features_words(found.attrs.get('features', []), words)}); "
        f"{md(model)}'s {md(metric)} over all its {words.count(int(overall['n_reviews']))} is "
        f"{overall['value']:.3f}. Listed: the slices worse than that beyond their 95% bootstrap CI, the largest gap "
        f"first; each link opens the explorer on the slice.{left_out}{_under_preset(preset, units)}"
    )


def _under_preset(preset: str | None, units: str) -> str:
    """The slices caption's sentence under a keyphrase preset ("" under kweval)."""
    if not preset:
        return ""
    return (
        f" Under the {md(preset)} preset the values searched are its per-document ones "
        f"(`kweval evaluate --protocol {md(preset)} --per-review`); the columns describing the {units} are the same."
    )


def category_caption(category: str, model: str | None, n_reviews: int, words: Vocabulary) -> str:
    """The explorer's line for a category filter (Markdown, escaped; "1 review", "3 documents")."""
    who = f" of **{md(model)}**" if model else ""
    return f"Filtered: {words.count(n_reviews)} with keywords{who} in *{md(LABELS.get(category, category))}*."
