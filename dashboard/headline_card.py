"""The Summary's headline card, one for every view: per key metric one sentence a stakeholder can repeat
(`kweval.stats.headline` rows), the significant ones marked, and what "significant" means here.

The kweval view passes the evaluation's headline (`caches.summary_headline`); a keyphrase preset's view passes the
headline of the preset's per-document scores (`caches.protocol_headline`, `kweval.io.report_protocol`).
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
        st.caption(caption)
