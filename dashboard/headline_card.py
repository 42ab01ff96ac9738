"""The Summary's headline card, one for every view: per key metric one sentence a stakeholder can repeat
(`kweval.stats.headline` rows), the significant ones marked, and what "significant" means here.

The kweval view passes the evaluation's headline (`caches.summary_headline`); a keyphrase preset's view passes the
headline of the preset's per-document scores (`caches.protocol_headline`, `kweval.io.report_protocol`).  On
per-document data each passes it through `caches.headline_across_presets` first: the card then says, per F1@k
verdict, whether it holds under every preset.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.escape import md


def significance_caption(units: str, n_metrics: int) -> str:
    """What ✅ means: the test, its correction and the intervals' level (`units`: "reviews", "documents")."""
    return (
        f"✅ significant: paired randomization test on the {units} both models were evaluated on, Holm-corrected "
        f"across these {n_metrics} metrics; each interval is the paired bootstrap at its Holm step's level, so "
        "interval and verdict agree. Every pair of models: Compare."
    )


def show_headline_card(title: str, top: pd.DataFrame | None, caption: str) -> None:
    """The card "At a glance — `title`" (`title` already escaped) with one line per row of `top` (HEADLINE_COLUMNS),
    then `caption`; `top` None: fewer than two models are selected."""
    with st.container(border=True, key="headline_card"):
        st.markdown(f"#### At a glance — {title}")
        if top is None:
            st.markdown("One model selected: nothing to compare. Select two or more in the sidebar (Models).")
            return
        if top.empty:
            st.markdown("No key metric has values for two models here.")
            return
        lines = [("✅ " if row["significant"] else "▫️ ") + md(row["sentence"]) for row in top.to_dict("records")]
        st.markdown("\n".join(f"- {line}" for line in lines))
        show_across_presets(top)
        st.caption(caption)


def show_across_presets(top: pd.DataFrame) -> None:
    """Per headline row that has one, whether its verdict holds under every keyphrase preset (per-document data:
    `kweval.stats.across_presets`, computed by `dashboard.caches.headline_across_presets`), so that no reader repeats
    a win that exists under one convention only."""
    if "across_presets" not in top.columns:
        return
    rows = [row for row in top.to_dict("records") if isinstance(row["across_presets"], str) and row["across_presets"]]
    if rows:
        lines = [
            f"- {'🟰' if row['holds_under_every_preset'] else '⚠️'} **{md(row['label'])}**: {md(row['across_presets'])}"
            for row in rows
        ]
        st.markdown("\n".join(lines), help=ACROSS_HELP)


ACROSS_HELP = (
    "Each keyphrase preset (kweval, pke, kpeval, meng: docs/protocols.md) scores the same predictions with its own "
    "conventions; each preset's verdict is the one its own Summary view shows (its headline, Holm-corrected across "
    "its key metrics)."
)
