"""The evaluation's GT rows split per list once (the explorer asks for many reviews' lists per run)."""

from __future__ import annotations

import pandas as pd
import streamlit as st


@st.cache_resource(show_spinner=False, max_entries=8)
def _gt_lists(key: tuple, _gt: pd.DataFrame) -> dict[tuple[str, object], pd.DataFrame]:
    at: dict[tuple[str, object], list[int]] = {}
    for i, (movie, review) in enumerate(zip(_gt["movie"].tolist(), _gt["review_id"].tolist())):
        at.setdefault((movie, None if pd.isna(review) else review), []).append(i)
    return {list_key: _gt.iloc[rows] for list_key, rows in at.items()}


def gt_lists(key: tuple, gt: pd.DataFrame) -> dict[tuple[str, object], pd.DataFrame]:
    """The evaluation's GT rows (`gt`, of the evaluation `key`) split per list, in their order: (movie, review_id)
    for a document's own list, (movie, None) for a movie's.  Reference: the rows
    ``gt[(gt.movie == movie) & (gt.review_id == review)]`` (``review_id.isna()`` for None)."""
    return _gt_lists(key, gt)
