"""The pages' views under a keyphrase preset (pke, kpeval, meng; `Ctx.preset`), cached: the per-document scores of
`kweval evaluate DATA --protocol P --per-review` and every prediction's and gold phrase's fate behind them
(`kweval.keyphrase.fates`), in the layouts the explorer and the Failures page read for kweval's own numbers.

Nothing here decides a match or computes a metric: the scores come from `kweval.keyphrase.dataset_protocol`
(through `dashboard.caches`), the fates from `kweval.keyphrase.fates.preset_failure_table`; this module selects
and renames.  Keys: the data's content hash, the preset, k and the models.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import caches
from dashboard.state import Ctx
from kweval.keyphrase import fates
from kweval.metrics.categories import GT, PREDICTION


@st.cache_resource(show_spinner="Following every keyword through the preset's scorer…", max_entries=4)
def _fate_table(data_hash: str, protocol: str, k: int, models: tuple, _dataset) -> pd.DataFrame:
    # shared, read-only (`st.cache_resource`: not copied per rerun)
    table = fates.preset_failure_table(_dataset, protocol, k, list(models))
    for name in ("movie", "review_id", "model", "side", "category"):
        table[name] = table[name].astype("category")
    return table


def fate_table(ctx: Ctx) -> pd.DataFrame:
    """Every prediction's and gold phrase's fate under the preset (`kweval.keyphrase.fates.preset_failure_table`):
    every collection, the selected models (read only)."""
    sel = ctx.selection
    assert ctx.preset is not None
    return _fate_table(ctx.data_hash, ctx.preset, sel.k, tuple(sel.models), ctx.dataset)


def metric(ctx: Ctx) -> str:
    """The metric the explorer sorts and compares by under a preset: F1@k (nDCG is no preset's)."""
    return f"f1@{ctx.selection.k}"


def metrics(ctx: Ctx) -> list[str]:
    """The per-document metrics a card shows under the preset (the CLI's names; those it leaves undefined, such as
    pke's present / absent ones, left out)."""
    k = ctx.selection.k
    scores = scores_with_matches(ctx)
    names = [f"p@{k}", f"r@{k}", f"f1@{k}", "f1@M", "f1@O", f"f1@{k}_present", "r@50_absent"]
    return [m for m in names if m in scores.columns and scores[m].notna().any()]


@st.cache_data(show_spinner=False, max_entries=8)
def _with_matches(data_hash: str, protocol: str, k: int, models: tuple, _scores, _table) -> pd.DataFrame:
    counts = fates.matched_counts(_table)
    keys = zip(_scores["movie"], _scores["review_id"], _scores["model"])
    return _scores.assign(n_matched=[counts.get(key, 0) for key in keys])


def scores_with_matches(ctx: Ctx) -> pd.DataFrame:
    """The preset's per-document scores of the selection (`kweval evaluate --protocol P --per-review`'s values) with
    ``n_matched``, the predictions the preset counted as matches (the explorer's "nothing matched" and "most
    matched")."""
    sel = ctx.selection
    assert ctx.preset is not None
    scores = caches.protocol_scores(ctx, ctx.preset)
    return _with_matches(ctx.data_hash, ctx.preset, sel.k, (*sel.models, sel.movie), scores, fate_table(ctx))


def all_scores(ctx: Ctx) -> pd.DataFrame:
    """The preset's per-document scores of the selected models in every collection (the slices search them all)."""
    assert ctx.preset is not None
    return caches.protocol_scores(ctx, ctx.preset, every_movie=True)


@st.cache_resource(show_spinner=False, max_entries=8)
def _keywords(data_hash: str, protocol: str, k: int, models: tuple, movie: str, _table) -> pd.DataFrame:
    rows = _table[(_table["side"] == PREDICTION).to_numpy()]
    rows = rows if movie == "ALL" else rows[(rows["movie"] == movie).to_numpy()]
    matched = rows["category"].isin(["hit", "hit_beyond_k"]).to_numpy()
    out = pd.DataFrame(
        {
            "movie": rows["movie"].astype(object).to_numpy(),
            "review_id": rows["review_id"].astype(object).to_numpy(),
            "model": rows["model"].astype(object).to_numpy(),
            "position": rows["position"].to_numpy(),
            "keyword": rows["keyword"].to_numpy(),
            "gt_rank": rows["gt_rank"].where(matched, -1).to_numpy(),
            "gt_keyword": rows["other"].where(matched, "").to_numpy(),
            "status": ["matched" if m else "no match" for m in matched],
            "reason": rows["detail"].to_numpy(),
            "category": rows["category"].astype(object).to_numpy(),
            "detail": rows["detail"].to_numpy(),
        }
    )
    return out.set_index(["movie", "review_id"]).sort_index()


def keywords(ctx: Ctx) -> pd.DataFrame:
    """The selection's predictions under the preset in the explorer's layout (`Evaluation.keywords` with the reasons
    of `kweval.explain.why`): position in the preset's scored list (-1: dropped), the gold phrase a match found
    (``gt_rank``: its place in the document's gold list), the category and its detail; indexed by (movie,
    review_id)."""
    sel = ctx.selection
    assert ctx.preset is not None
    return _keywords(ctx.data_hash, ctx.preset, sel.k, tuple(sel.models), sel.movie, fate_table(ctx))


def gold(ctx: Ctx, movie: str, review: str) -> pd.DataFrame:
    """A document's gold phrases as the preset counts them (rank: place in the gold list, keyword, present: the
    preset's present rule, None without one), file order."""
    table = fate_table(ctx)
    rows = table[((table["side"] == GT) & (table["movie"] == movie) & (table["review_id"] == review)).to_numpy()]
    rows = rows.drop_duplicates("position")
    return pd.DataFrame(
        {"rank": rows["position"].to_numpy(), "keyword": rows["keyword"].to_numpy(), "present": rows["present"]}
    ).reset_index(drop=True)
