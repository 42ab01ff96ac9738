"""nDCG worked example: the seed examples and any review, term by term (numbers from kweval.explain.ndcg)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.escape import md
from dashboard.highlight import matched_tooltips, review_html
from dashboard.selection import K_MAX
from dashboard.sidebar import open_page
from dashboard.url_state import query_param
from kweval.explain import ndcg as explain

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
WORDS = ctx.words  # Movie/Review or Collection/Document (kweval.data.vocabulary)
TERM_FORMAT = {c: st.column_config.NumberColumn(c, format="%.4f") for c in ("gain", "discount", "contribution")}


def formula(*tex: str, whole: bool = False) -> None:
    """Formulas in display style that reflow: inline KaTeX wraps at +, = and between formulas on a narrow screen,
    where st.latex (a display block) would scroll sideways (issue 23, 400 px). `whole`: break only between the
    formulas (short definitions, each kept on one line)."""
    st.markdown(" &emsp; ".join(rf"$\displaystyle {{{t}}}$" if whole else rf"$\displaystyle {t}$" for t in tex))


def show(steps: explain.Steps, key: str, columns: list[str]) -> None:
    """The table of terms, then DCG, IDCG and nDCG as formulas."""
    st.dataframe(steps.terms[columns], hide_index=True, column_config=TERM_FORMAT, key=f"terms_{key}")
    tex = steps.latex()
    formula(tex["dcg"])
    with st.expander("Ideal ordering (IDCG terms)"):
        st.dataframe(steps.ideal[columns], hide_index=True, column_config=TERM_FORMAT, key=f"ideal_{key}")
    formula(tex["idcg"])
    formula(tex["ndcg"])


st.title("nDCG, step by step")
if ctx.preset is not None:  # the links carry a preset (Summary's choice), which has no nDCG
    st.info(
        f"nDCG is not among the {ctx.preset} preset's metrics ({ctx.preset}, like the keyphrase field's other tools, "
        f"reports P, R and F1 only): this page shows kweval's nDCG, {md(ctx.match_text('kweval'))}. The "
        f"{ctx.preset} preset's numbers and match decisions of each document are in the explorer.",
        icon=":material/info:",
    )
c1, c2, c3 = st.columns(3)
k = ctx.url_widget(
    c1.slider,
    "k",
    "ek",
    sel.k,
    parse=int,
    min_value=1,
    max_value=K_MAX,
    help="Starts at the sidebar's k (a change of the sidebar's k resets it).",
)
gain = ctx.url_widget(
    c2.radio,
    "Gain",
    "gain",
    "linear",
    options=["linear", "exponential"],
    horizontal=True,
    format_func=explain.GAIN_LABELS.get,
    help="A matched keyword earns the GT-rank gain of the GT keyword it matched: 1/log2(j+2) for GT rank j "
    "(the top GT keyword earns 1); the exponential variant uses 2^gain − 1.",
)
discount = ctx.url_widget(
    c3.radio,
    "Discount",
    "disc",
    "log2",
    options=["log2", "jarvelin"],
    horizontal=True,
    format_func=lambda d: {"log2": "log2", "jarvelin": "Järvelin"}[d],
)
f = explain.formulas(gain, discount)
formula(f["gain"], f["discount"], whole=True)
formula(
    r"\mathrm{DCG}@k = \sum_{(i,j)\in M,\ i<k} \mathrm{gain}(j)\,\mathrm{disc}(i)",
    r"\mathrm{IDCG}@k = \sum_{j<\min(k,|G|)} \mathrm{gain}(j)\,\mathrm{disc}(j)",
    whole=True,
)

KW_COLUMNS = ["position", "keyword", "gt_keyword", "gt_rank", "gain", "discount", "contribution"]
st.header(explain.EXAMPLE_TITLES["seed000"])
st.markdown(
    f"GT (rank 0 first): **{', '.join(explain.SEED_000['ground_truth'])}** · predictions: "
    f"**{', '.join(explain.SEED_000['predictions'])}**. "
    "Each prediction takes the best-ranked GT keyword it matches that is still free (one-to-one); "
    "its GT-rank gain comes from that GT rank j, its discount from its own position i."
)
show(explain.ndcg_steps(**explain.SEED_000, k=k, gain=gain, discount=discount, match=sel.match), "seed000", KW_COLUMNS)

st.header(f"A {WORDS.review.lower()} from the data")
models = list(sel.models)
model = ctx.url_widget(st.selectbox, "Model", "model", models[0], options=models)
scores = ctx.scores()
scores = scores[scores["model"] == model]
ids = list(dict.fromkeys(zip(scores["movie"], scores["review_id"])))
if not ids:
    st.info(f"This model has no evaluated {WORDS.review.lower()} for the selected {WORDS.movie.lower()}.")
else:
    labels = {f"{m}/{r}": (m, r) for m, r in ids}
    titles = {
        m: ctx.movie_title(m) for m in dict.fromkeys(m for m, _ in ids)
    }  # once per movie: ALL lists thousands of reviews
    wanted = query_param("review")
    default = next((lbl for lbl, (m, r) in labels.items() if r == wanted), next(iter(labels)))
    choice = ctx.url_widget(
        st.selectbox,
        WORDS.review,
        "rv",
        default,
        options=list(labels),
        format_func=lambda lbl: f"{titles[labels[lbl][0]]} · {WORDS.review.lower()} {labels[lbl][1]}",
    )
    movie, review = labels[choice]
    kw = ev.keywords[
        (ev.keywords["movie"] == movie) & (ev.keywords["review_id"] == review) & (ev.keywords["model"] == model)
    ]
    own = ctx.own_gt(movie, review)  # the document's own list (per-document GT) or the movie's
    gt = own["keyword"].tolist()
    ranked = ctx.gt_ranked(movie)
    text = ctx.dataset.reviews.loc[
        (ctx.dataset.reviews["movie"] == movie) & (ctx.dataset.reviews["review_id"] == review), "text"
    ]
    st.html(review_html(text.iloc[0] if len(text) else None, matched_tooltips(kw, model=model), max_height=180))
    st.caption(
        f"The {WORDS.review.lower()}'s text; marked: the words of {md(model)}'s keywords that matched a GT keyword "
        f"({md(ctx.match_text('kweval'))})."
    )
    whose = (
        f"its own GT ({len(gt)} keywords)"
        if own["review_id"].notna().any()
        else f"the GT of {md(ctx.movie_title(movie))} ({len(gt)} keywords)"
    )
    if ranked:
        st.markdown(f"Scored against {whose}, top {min(k, len(gt))}: " + ", ".join(f"*{md(g)}*" for g in gt[:k]))
    else:
        st.markdown(
            f"Scored against {whose}, unranked: every GT keyword has gain 1 (binary relevance), and the ideal list is "
            f"min(k, |GT|) = {min(k, len(gt))} of them: " + ", ".join(f"*{md(g)}*" for g in gt)
        )
        formula(explain.formulas(gain, discount, graded=False)["gain"], r"\mathrm{rel}_i = 1", whole=True)
    steps = explain.keyword_steps(kw, gt, k=k, gain=gain, discount=discount, ranked=ranked)
    show(steps, "review", KW_COLUMNS if ranked else [c for c in KW_COLUMNS if c != "gt_rank"])
    st.page_link(
        ctx.pages["explorer"],
        label=f"Open this {WORDS.review.lower()} in the explorer",
        icon="🔍",
        query_params=ctx.params(review=review, movie=movie),
    )

st.header("Textbook examples: ranked results with graded relevance")
st.markdown(
    "Each result has a relevance grade (0: not relevant); the gain is the grade itself (or 2^grade − 1). "
    "The six-result list gives nDCG 0.852342 over the whole list; the eight-result list scored against its given ideal "
    "gives 0.899662 (linear gain) and 0.915492 (exponential). The query and system examples use the Järvelin discount "
    "and are shown at k = 5 and k = 10 (query 1: 0.799 at both)."
)
rows = []
for name, ex in explain.SEED_002.items():
    for g in ("linear", "exponential"):
        s = explain.relevance_steps(**ex, gain=g)
        rows.append(
            {
                "example": explain.EXAMPLE_TITLES[name],
                "gain": g,
                "discount": "log2",
                "k": s.k,
                "DCG": s.dcg,
                "IDCG": s.idcg,
                "nDCG": s.ndcg,
            }
        )
for name, ex in explain.SEED_004.items():
    for kk in (5, 10):
        s = explain.relevance_steps(**ex, k=kk, discount="jarvelin")
        rows.append(
            {
                "example": explain.EXAMPLE_TITLES[name],
                "gain": "linear",
                "discount": "jarvelin",
                "k": kk,
                "DCG": s.dcg,
                "IDCG": s.idcg,
                "nDCG": s.ndcg,
            }
        )
st.dataframe(
    pd.DataFrame(rows),
    hide_index=True,
    key="seed_table",
    column_config={c: st.column_config.NumberColumn(c, format="%.6f") for c in ("DCG", "IDCG", "nDCG")},
)
examples = {f"002 {n}": ex for n, ex in explain.SEED_002.items()} | {
    f"004 {n}": ex for n, ex in explain.SEED_004.items()
}
name = ctx.url_widget(
    st.selectbox,
    "Step through (with the k, gain and discount above)",
    "ex",
    "002 classic",
    options=list(examples),
    format_func=lambda key: explain.EXAMPLE_TITLES[key.split(" ", 1)[1]],
)
show(
    explain.relevance_steps(**examples[name], k=k, gain=gain, discount=discount),
    "relevance",
    ["position", "relevance", "gain", "discount", "contribution"],
)

ctx.finish()
