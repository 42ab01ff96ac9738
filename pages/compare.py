"""Compare models: paired differences with CIs and tests per metric, per movie, and per review."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard.escape import esc, md
from dashboard.sidebar import open_page
from dashboard.style import jitter, metric_label, model_colors
from dashboard.tables import number_columns, text_columns
from kweval import stats
from kweval.stats import verdict

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
METRICS = [m for m in ev.metric_names if m != "gt_coverage"]


def paired(scores: pd.DataFrame, a: str, b: str, metric: str | None = None) -> pd.DataFrame:
    return stats.paired_scores(scores, a, b, METRICS, metric)


SIDES = {"mean_a": "mean A", "mean_b": "mean B"}


@st.cache_data(show_spinner="Bootstrap and randomization tests…", max_entries=32)
def _compare(key: tuple, movie: str, a: str, others: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for b in others:
        res = stats.compare_models(_scores, a, b, METRICS)
        parts.append(res.rename(columns=SIDES).assign(model=b))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


@st.cache_data(show_spinner="Per-movie tests…", max_entries=32)
def _per_movie(key: tuple, a: str, b: str, metric: str, _scores: pd.DataFrame) -> pd.DataFrame:
    both = paired(_scores, a, b)
    parts = []
    for movie, grp in both.groupby("movie", sort=False):
        res = stats.paired_comparison(
            grp[[f"{metric}_a"]].set_axis([metric], axis=1), grp[[f"{metric}_b"]].set_axis([metric], axis=1), [metric]
        )
        parts.append(res.rename(columns=SIDES).assign(movie=movie))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    out["p_randomization_holm"] = stats.holm(out["p_randomization"])  # across the movies shown
    out["p_ttest_holm"] = stats.holm(out["p_ttest"])
    return out


# Shared, not copied: the page only reads them (st.plotly_chart copies the figure).  A warm rerun (any widget) reuses
# them.
@st.cache_resource(show_spinner=False, max_entries=16)
def _per_review(
    key: tuple, movie: str, models: tuple, a: str, b: str, metric: str, params: tuple, _scores: pd.DataFrame
) -> tuple[pd.DataFrame, go.Figure, pd.DataFrame]:
    """(A's and B's `metric` per review, the scatter of them, the reviews by |B − A| with explorer links)."""
    both = paired(_scores, a, b, metric)
    both["movie "] = both["movie"].map(esc)  # plotly renders some HTML in hover labels: show escaped copies
    both["review "] = both["review_id"].map(esc)
    # many reviews share the same values (0, 1/k, ...): a little seeded jitter shows how many points sit on each
    both["x "] = jitter(both[f"{metric}_a"], 0.012, seed=1)
    both["y "] = jitter(both[f"{metric}_b"], 0.012, seed=2)
    label = metric_label(metric)
    fig = px.scatter(
        both,
        x="x ",
        y="y ",
        hover_data={
            "movie ": True,
            "review ": True,
            "difference": ":.4f",
            f"{metric}_a": ":.4f",
            f"{metric}_b": ":.4f",
            "x ": False,
            "y ": False,
        },
        opacity=0.45,
        labels={
            "x ": f"{label} of {esc(a)} (A)",
            "y ": f"{label} of {esc(b)} (B)",
            f"{metric}_a": f"{esc(a)} (A)",
            f"{metric}_b": f"{esc(b)} (B)",
        },
        custom_data=["movie", "review_id"],
    )
    fig.update_traces(marker=dict(color=model_colors(ctx.dataset.model_names).get(b), size=7))
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line=dict(dash="dot", color="grey"))
    fig.update_layout(height=460, margin=dict(t=40, b=10))
    listing = both.reindex(both["difference"].abs().sort_values(ascending=False, kind="stable").index)
    listing["open"] = ctx.urls("explorer", movie=listing["movie"].tolist(), review=listing["review_id"].tolist())
    return both, fig, listing


st.title("Compare models")
if len(sel.models) < 2:
    st.info("Select at least two models in the sidebar.")
    st.stop()
models = list(sel.models)
c1, c2, c3 = st.columns(3)
a = ctx.url_widget(
    c1.selectbox, "Reference model A", "a", models[0], parse=lambda s: s if s in models else None, options=models
)
others = [m for m in models if m != a]
b = ctx.url_widget(
    c2.selectbox,
    "Model B (scatter, per movie, reviews)",
    "b",
    others[0],
    parse=lambda s: s if s in others else None,
    options=others,
)
metric = ctx.url_widget(
    c3.selectbox,
    "Metric (scatter, per movie, reviews)",
    "metric",
    ctx.ndcg_at_k,
    parse=lambda s: s if s in METRICS else None,
    options=METRICS,
)
scores = ctx.scores()
st.caption(
    f"{md(ctx.movie_title(sel.movie))}: differences are B − A over the reviews both models were evaluated on "
    "(positive: B better). CI: paired bootstrap 95% (2000 resamples); p: paired randomization test (10 000 sign flips) "
    "and paired t-test, Holm-corrected across the metrics of each model; wins/ties/losses from B's side."
)

res = _compare(ctx.key, sel.movie, a, tuple(others), scores)
ALIASES = {"mean A": "mean_a", "mean B": "mean_b"}
res = verdict.with_significance(res) if not res.empty else res
st.subheader(f"Verdicts: each model against {md(a)}")
for b_model, rows in res.groupby("model", sort=False):
    said = verdict.verdicts(rows.rename(columns=ALIASES), a, b_model)
    lines = [("✅ " if sig else "▫️ ") + md(text) for text, sig in zip(said, rows["significant"])]
    st.markdown("\n".join(f"- {line}" for line in lines))
st.caption(f"Significant: Holm-adjusted randomization p < {verdict.ALPHA} across the metrics of each model pair.")
st.subheader(f"Every metric, each model against {md(a)}")
shown = res[
    [
        "model",
        "metric",
        "n",
        "mean A",
        "mean B",
        "diff",
        "ci_low",
        "ci_high",
        "p_randomization_holm",
        "significant",
        "p_ttest_holm",
        "p_randomization",
        "p_ttest",
        "wins",
        "ties",
        "losses",
    ]
]
num = number_columns([c for c in shown.columns if c.startswith(("mean", "diff", "ci_"))], aliases=ALIASES)
num |= number_columns([c for c in shown.columns if c.startswith("p_")], fmt="%.2g")
num |= number_columns(["n", "wins", "ties", "losses"], fmt="%d")
num |= text_columns(["significant"])
st.dataframe(shown, hide_index=True, column_config=num, key="compare_table")

st.subheader(f"{metric} per movie: {md(b)} − {md(a)}")
per_movie = _per_movie(ctx.key, a, b, metric, ev.scores[ev.scores["model"].isin([a, b])])
if not per_movie.empty:
    st.dataframe(
        per_movie[
            [
                "movie",
                "n",
                "mean A",
                "mean B",
                "diff",
                "ci_low",
                "ci_high",
                "p_randomization_holm",
                "p_ttest_holm",
                "wins",
                "ties",
                "losses",
            ]
        ],
        hide_index=True,
        column_config=num,
        key="per_movie_table",
    )
    st.caption("Holm correction here is across the movies.")

st.subheader(f"Per review: {metric} of {md(a)} (x) vs {md(b)} (y)")
both, fig, listing = _per_review(
    ctx.key, sel.movie, tuple(sel.models), a, b, metric, tuple(ctx.params().items()), scores
)
event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key="scatter", config={"displaylogo": False})
points = event.selection.points if event and event.selection else []
if points:
    movie, review = points[0]["customdata"][:2]
    st.switch_page(ctx.pages["explorer"], query_params=ctx.params(movie=movie, review=review))
st.caption(
    "Points are jittered slightly (±0.012) so that reviews with equal values stay visible; hover shows the exact "
    "values. "
    "Click a point to open that review in the explorer."
)

st.subheader("Reviews by difference (B − A)")
st.dataframe(
    listing[["open", "movie", "review_id", f"{metric}_a", f"{metric}_b", "difference"]],
    hide_index=True,
    key="review_diffs",
    column_config={
        "open": st.column_config.LinkColumn("open", display_text="explorer ↗"),
        f"{metric}_a": st.column_config.NumberColumn(f"{a} (A)", format="%.4f"),
        f"{metric}_b": st.column_config.NumberColumn(f"{b} (B)", format="%.4f"),
        "difference": st.column_config.NumberColumn("B − A", format="%+.4f"),
    },
)

ctx.finish()
