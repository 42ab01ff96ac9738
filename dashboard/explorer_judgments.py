"""The explorer's judgments (docs/metrics.md §11): a reader grades a predicted keyword 0–3 or marks a GT keyword
wrong (0), for one review or its whole movie, under an annotator name; undo; the review's judged metrics beside the
reference ones.  The store is `kweval.judgments.JudgmentStore` (SQLite beside the kweval cache, one file per dataset
content hash; every write its own transaction, so two browser sessions grading at once lose nothing)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.escape import md
from dashboard.state import Ctx
from kweval import judgments
from kweval.data.vocabulary import vocabulary

SIDE_LABELS = {"prediction": "a predicted keyword (grade 0–3)", "gt": "a GT keyword (mark it wrong: 0)"}
GRADE_LABELS = {0: "0 · wrong", 1: "1 · related", 2: "2 · good", 3: "3 · exact"}


def _store(ctx: Ctx) -> judgments.JudgmentStore | None:
    try:  # the data's content hash is known already (`Ctx.data_hash`): not hashed again per rerun
        return judgments.JudgmentStore(judgments.default_path(ctx.data_hash), ctx.data_hash)
    except judgments.JudgmentsError as exc:
        st.error(f"Judgments unavailable: {md(exc)}")
        return None


def annotator() -> str:
    """The annotator name (a sidebar text field, kept by the session)."""
    return st.sidebar.text_input(
        "Annotator (for judgments)", key="annotator", max_chars=60, help="Your judgments are stored under this name."
    ).strip()


def judge_panel(ctx: Ctx, movie: str, review: str, model: str | None, keywords: pd.DataFrame) -> None:
    """The judging form of one review: what to judge, the grade, this review or the whole movie; save, undo; the
    judgments that apply to the review; its judged metrics under a toggle.  `keywords`: the explorer's keyword rows."""
    who = annotator()
    words = vocabulary(ctx.dataset)
    with st.expander("Judge the keywords (your grades correct the reference)", expanded=False):
        # the SQLite file is made on the first save (viewing a review writes nothing)
        store = _store(ctx) if judgments.default_path(ctx.data_hash).exists() else None
        side = st.radio("Judge", list(SIDE_LABELS), format_func=SIDE_LABELS.get, horizontal=True, key="judge_side")
        if side == "prediction":
            rows = keywords.loc[[(movie, review)]] if (movie, review) in keywords.index else keywords.iloc[0:0]
            rows = rows[rows["model"] == model] if model else rows
            options = list(dict.fromkeys(str(k) for k in rows["keyword"] if isinstance(k, str) and k.strip()))
        else:
            options = list(dict.fromkeys(ctx.own_gt(movie, review)["keyword"].astype(str)))
        c1, c2, c3 = st.columns([3, 2, 2])
        keyword = c1.selectbox("Keyword", options, key="judge_keyword", format_func=md)
        grade = c2.selectbox(
            "Grade", [0, 1, 2, 3] if side == "prediction" else [0], format_func=GRADE_LABELS.get, key="judge_grade"
        )
        scope = c3.radio(
            "For",
            ["review", "movie"],
            format_func=lambda s: (
                f"this {words.review.lower()}" if s == "review" else f"the whole {words.movie.lower()}"
            ),
            key="judge_scope",
        )
        b1, b2 = st.columns(2)
        if b1.button("Save the judgment", key="judge_save", type="primary", disabled=not options):
            if not who:
                st.warning("Enter your annotator name in the sidebar first.")
            else:
                store = store or _store(ctx)
                saved = store is not None and _run(
                    lambda: store.add(movie, review if scope == "review" else None, keyword, grade, who, side)
                )
                if saved is not False:
                    st.success(f"Saved: {md(keyword)} → {GRADE_LABELS[grade]}, by {md(who)}.")
        if b2.button("Undo my last judgment", key="judge_undo", disabled=not who):
            undone = _run(lambda: store.undo(annotator=who)) if store is not None else None
            if undone is None:
                st.info("Nothing of yours to undo.")
            elif undone:
                st.success(f"Undone: {md(undone['keyword'])} ({undone['grade']}).")
        mine = _run(lambda: store.list(movie, review)) if store is not None else None
        if isinstance(mine, pd.DataFrame) and len(mine):
            st.dataframe(
                mine[["keyword", "side", "grade", "review_id", "annotator", "time"]],
                hide_index=True,
                key="judgments_table",
            )
        if store is not None and st.toggle("Judged metrics beside the reference ones", key="judged_toggle"):
            _judged_metrics(ctx, store, movie, review)


def _run(call):
    """`call()`, a store error shown as one line (nothing else happens)."""
    try:
        return call()
    except judgments.JudgmentsError as exc:
        st.error(md(exc))
        return False


@st.cache_data(show_spinner="Evaluating against the judged reference…", max_entries=16)
def _judged(key: tuple, stamp: tuple, _ctx: Ctx, _frame: pd.DataFrame) -> tuple[pd.DataFrame, int, list[str]]:
    usable, problems = judgments.checked(_frame, _ctx.dataset, "judgments")
    judged, gt = judgments.judged_evaluation(_ctx.dataset, usable, _ctx.options)
    return judged.scores, gt.n_used, [str(p) for p in problems]


def _judged_metrics(ctx: Ctx, store: judgments.JudgmentStore, movie: str, review: str) -> None:
    frame = _run(lambda: store.list())
    if not isinstance(frame, pd.DataFrame):
        return
    stamp = (len(frame), int(frame["id"].max()) if len(frame) else 0, tuple(frame["id"].tolist()[-50:]))
    judged, n_used, problems = _judged(ctx.key, stamp, ctx, frame)
    for problem in problems:
        st.warning(md(problem))
    metrics = [ctx.ndcg_at_k, f"p@{ctx.options.k}", "recall", "f1"]
    keys = ["movie", "review_id", "model"]
    mine = ctx.evaluation.scores
    pick = (mine["movie"] == movie) & (mine["review_id"] == review) & mine["model"].isin(ctx.selection.models)
    left = mine[pick][keys + [m for m in metrics if m in mine.columns]].astype({k: object for k in keys})
    right = judged[(judged["movie"] == movie) & (judged["review_id"] == review)]
    right = right[keys + [m for m in metrics if m in right.columns]].astype({k: object for k in keys})
    table = left.merge(right, on=keys, how="left", suffixes=("", "_judged"))
    order = ["model"] + [c for m in metrics for c in (m, m + "_judged") if c in table.columns]
    st.caption(f"{n_used} judged item(s) in use across the data (several annotators' grades combined per §11).")
    st.dataframe(table[order], hide_index=True, key="judged_metrics")


@st.cache_data(show_spinner="Evaluating against the judged reference…", max_entries=16)
def _judged_table(key: tuple, how: str, stamp: tuple, _ctx: Ctx, _frame: pd.DataFrame, _summary: pd.DataFrame):
    usable, problems = judgments.checked(_frame, _ctx.dataset, "judgments")
    judged, gt = judgments.judged_evaluation(_ctx.dataset, usable, _ctx.options)
    return judgments.judged_summary(_summary, judged, gt, how), [str(p) for p in problems]


def judged_summary_table(ctx: Ctx, summary: pd.DataFrame) -> None:
    """The Summary's toggle: every metric with its `_judged` twin beside it and `n_judgments`, when the dataset's
    store holds judgments (nothing is shown without any)."""
    path = judgments.default_path(ctx.data_hash)
    if not path.exists():  # nobody judged this data yet: no file is made by viewing the Summary
        return
    try:
        frame = judgments.JudgmentStore(path, ctx.data_hash).list()
    except judgments.JudgmentsError as exc:
        st.caption(f"Judgments unavailable: {md(exc)}")
        return
    if frame.empty:
        return
    label = f"Judged metrics beside the reference ones ({len(frame):,} judgment(s) stored)"
    if not st.toggle(label, key="summary_judged_toggle"):
        return
    stamp = (len(frame), int(frame["id"].max()), tuple(frame["id"].tolist()[-50:]))
    table, problems = _judged_table(ctx.key, ctx.selection.agg, stamp, ctx, frame, summary)
    for problem in problems:
        st.warning(md(problem))
    st.dataframe(table, hide_index=True, key="summary_judged_table")
