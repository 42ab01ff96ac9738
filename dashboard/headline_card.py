"""The Summary's headline card, one for every view: the whole story in plain words (who leads each key metric, by
how much, who leads elsewhere, who is clearly behind), the statistics one click away in an expander.

The kweval view passes the evaluation's headline (`caches.summary_headline`); a keyphrase preset's view passes the
headline of the preset's per-document scores (`caches.protocol_headline`, `kweval.io.report_protocol`).  A view may
add lines of its own under the story (`extra`): on per-document data each view passes its headline through
`caches.headline_across_presets` first, and `across_lines` says, per F1@k verdict, whether it holds under every
preset.  The markers are Material icons, which Streamlit ships with its own font: they render in a browser without
an emoji font.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard.escape import md
from kweval.data.vocabulary import Vocabulary
from kweval.stats.families import families_in
from kweval.stats.paired import N_PERM
from kweval.stats.story import story_lines

MARKS = {True: ":green[:material/check_circle:]", False: ":gray[:material/radio_button_unchecked:]"}
LEGEND = f"{MARKS[True]} significant · {MARKS[False]} may be chance (not significant)"
ACROSS_MARKS = {True: ":green[:material/done_all:]", False: ":orange[:material/warning:]"}
ACROSS_NOTE = (
    "Each keyphrase preset (kweval, pke, kpeval, meng: docs/protocols.md) scores the same predictions with its own "
    "conventions; a preset's verdict in the line on every preset is the one its own Summary view shows (its "
    "headline, Holm-corrected within its families)."
)


def significance_caption(units: str, metrics: Sequence[str], family_words: Sequence[str] | None = None) -> str:
    """How sure the card's lines are, said once: the test, the family Holm corrects within, the intervals' level
    (`units`: "reviews", "documents"; `metrics`: the metrics the view compares)."""
    families = ", ".join(family_words if family_words is not None else families_in(metrics))
    return (
        f"Each line compares two models on the {units} both were evaluated on: a paired randomization test "
        f"({N_PERM:,} swaps), Holm-corrected within each family of metrics ({families}), the same test and family as "
        "on Compare, in the report and in `kweval compare`. Each interval is the paired bootstrap at its Holm step's "
        "level, so interval and verdict agree. Levels are the Summary's values; a margin is the paired difference "
        f"on the shared {units}."
    )


def card_lines(top: pd.DataFrame, words: Vocabulary) -> list[str]:
    """The card's Markdown lines: each line of `kweval.stats.story.story_lines` with its marker, escaped."""
    return [f"{MARKS[line['significant']]} {md(line['text'])}" for line in story_lines(top.to_dict("records"), words)]


def across_lines(top: pd.DataFrame | None) -> list[str]:
    """The card's extra lines on the other presets (per-document data): per headline row that has one, whether its
    verdict holds under every keyphrase preset (`kweval.stats.across_presets`, computed by
    `dashboard.caches.headline_across_presets`), so that no reader repeats a win that exists under one convention
    only; [] without them."""
    if top is None or "across_presets" not in top.columns:
        return []
    return [
        f"{ACROSS_MARKS[bool(row['holds_under_every_preset'])]} **{md(row['label'])}**: {md(row['across_presets'])}"
        for row in top.to_dict("records")
        if isinstance(row["across_presets"], str) and row["across_presets"]
    ]


def show_headline_card(
    title: str,
    top: pd.DataFrame | None,
    caption: str,
    words: Vocabulary,
    extra: Sequence[str] = (),
) -> None:
    """The card "At a glance — `title`" (`title` already escaped): the story of `top` (HEADLINE_COLUMNS) in plain
    lines, then `extra` Markdown lines, then "How sure" (the statistical sentences and `caption`) in an expander;
    `top` None: fewer than two models are selected."""
    with st.container(border=True, key="headline_card"):
        st.markdown(f"#### At a glance — {title}")
        if top is None:
            st.markdown("One model selected: nothing to compare. Select two or more in the sidebar (Models).")
            return
        if top.empty:
            st.markdown("No key metric has values for two models here.")
            return
        st.markdown("\n".join(f"- {line}" for line in [*card_lines(top, words), *extra]))
        st.caption(LEGEND)
        with st.expander("How sure: the statistics behind each line", icon=":material/query_stats:"):
            st.markdown("\n".join(f"- {MARKS[bool(s)]} {md(t)}" for t, s in zip(top["sentence"], top["significant"])))
            st.caption(caption + (f" {ACROSS_NOTE}" if across_lines(top) else ""))
