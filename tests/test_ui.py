"""The dashboard's presentation modules without Streamlit: escaping, highlighting, URL state, explorer tables."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.escape import esc, md
from dashboard.highlight import highlight, match_spans, matched_tooltips, review_html
from dashboard.keyword_html import (
    gt_top_html,
    keyword_list_html,
    keyword_table_html,
    model_grid_start,
    records,
    sentiment_line,
    unmatched_html,
)
from dashboard.links import page_links, page_params
from dashboard.review_tables import filter_reviews, keyword_details, paginate, review_table
from dashboard.selection import SELECTION_KEYS, Selection, resolve_selection
from dashboard.style import FLAG_BACKGROUND, MODEL_PALETTE, axis_title, best_mask, best_styles, jitter, model_colors
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests.helpers import make_dataset
from tests.highlight_reference import regex_spans

XSS = "<img src=x onerror=alert(1)>"


def test_escaping():
    assert esc(XSS) == "&lt;img src=x onerror=alert(1)&gt;"
    assert esc(None) == "" and esc(float("nan")) == ""
    assert esc("\"a\" & 'b'") == "&quot;a&quot; &amp; &#x27;b&#x27;"
    m = md(XSS + " **bold** $x$ [l](javascript:x)")
    assert "<img" not in m and "&lt;img" in m
    assert r"\*\*bold\*\*" in m and r"\$x\$" in m and r"\[l\]\(javascript:x\)" not in m  # ':' escaped too
    assert r"\[l\]\(javascript\:x\)" in m


def test_highlight_case_insensitive_words_and_phrases():
    text = "Darth Vader rises. The dark side of VADER; darth-vader again."
    out = highlight(text, {"darth vader": "GT rank 0"})
    assert out.count("<mark") == 3  # "Darth Vader", "VADER", "darth-vader" (phrase), no stray partial words
    assert '<mark title="GT rank 0">Darth Vader</mark>' in out
    assert '<mark title="GT rank 0">VADER</mark>' in out
    assert '<mark title="GT rank 0">darth-vader</mark>' in out
    # words inside other words are not marked
    assert "<mark" not in highlight("invaders", ["vader"])
    # stopwords of a phrase are not marked alone
    assert highlight("the force, the end", ["the force"]).count("<mark") == 1


def test_highlight_escapes_text_keywords_and_tooltips():
    text = f"Nice {XSS} movie about fraud & <b>scams</b>"
    out = highlight(text, {"fraud": f"base: {XSS}", "img": "x"})
    assert "<img" not in out and "<b>" not in out
    assert "&lt;img" in out and "&amp;" in out
    assert 'title="base: &lt;img src=x onerror=alert(1)&gt;"' in out
    # a keyword that is itself markup is found in the text and stays escaped
    out2 = highlight(text, [XSS])
    assert "<img" not in out2 and "<mark" in out2


def test_overlapping_spans_merge():
    spans = match_spans("star wars saga", {"star wars": "a", "wars saga": "b"})
    assert spans == [(0, 14, "a; b")]
    assert highlight("", ["x"]) == "" and highlight(None, ["x"]) == ""
    assert "no text in this dataset" in review_html(None, [])


def test_keyword_list_html():
    rows = pd.DataFrame(
        {
            "position": [0, 1, 2],
            "keyword": ["scam", XSS, "fraud"],
            "gt_rank": [2, -1, 0],
            "gt_keyword": ["scam", None, "fraud"],
        }
    )
    out = keyword_list_html(rows, k=2)
    assert "GT rank 2" in out and "GT rank 0" in out and "unmatched" in out
    assert "<img" not in out and "&lt;img" in out
    assert out.count("beyond k") == 1
    assert "empty output" in keyword_list_html(rows.iloc[:0], 5)


def test_resolve_selection_precedence_and_validation():
    movies, models = ["m1", "m2"], ["base", "yake", "rr"]
    sel = resolve_selection(
        [{"movie": "m2", "models": "yake,nope,base", "k": "10", "agg": "micro", "match": "stem"}], movies, models
    )
    assert sel == Selection("m2", ("yake", "base"), 10, "micro", "stem")
    assert sel.params() == {
        "movie": "m2",
        "models": "yake,base",
        "k": "10",
        "agg": "micro",
        "match": "stem",
        "sem": "0",
        "tau": "0.75",
        "sas": "0",
        "present": "0",
        "backend": "auto",
        "grd": "0",
    }
    # invalid URL values fall back to the session, then to defaults, with a note
    sel = resolve_selection([{"movie": "zzz", "k": "0", "agg": "x"}, {"movie": "m1", "k": 7}], movies, models)
    assert (sel.movie, sel.models, sel.k, sel.agg, sel.match) == ("m1", tuple(models), 7, "macro", "approx")
    assert any("movie" in n for n in sel.notes) and any("k=" in n for n in sel.notes)
    assert resolve_selection([{"movie": ["m1", "ALL"]}], movies, models).movie == "ALL"
    assert resolve_selection([], [], []).movie == "ALL"
    assert page_params(sel, review="r1", q=None)["review"] == "r1"


def test_page_links_are_the_per_row_urlencoded_page_params():
    from urllib.parse import parse_qsl, urlencode

    sel = Selection("m 1", ("base", "ya&ke"), 5, "macro", "approx", semantic=True, threshold=0.8)
    movies = ["m/2", "m/2", "Amélie & co", "m1", "m1"]
    reviews = ["r 1", "r?2=x", "<img src=x>", "", None]  # an empty or missing value is dropped, as page_params drops it
    links = page_links("explorer", sel, movie=movies, review=reviews)
    assert links == [f"./explorer?{urlencode(page_params(sel, movie=m, review=r))}" for m, r in zip(movies, reviews)]
    assert dict(parse_qsl(links[1].split("?", 1)[1])) == {**sel.params(), "movie": "m/2", "review": "r?2=x"}
    assert "review" not in links[3] and "review" not in links[4]
    assert list(dict(parse_qsl(links[0].split("?", 1)[1]))) == list(
        page_params(sel, review="x")
    )  # movie keeps its place
    assert page_links("summary", sel) == [f"./summary?{urlencode(sel.params())}"]
    assert page_links("explorer", sel, movie=[], review=[]) == []


@pytest.fixture()
def evaluation():
    ds = make_dataset(
        {"m": ["fraud", "poverty", "scam"], "n": ["space"]},
        {
            ("m", "r1", "a"): [("scam", 0.9), ("family", 0.5)],
            ("m", "r1", "b"): [("family", 0.9)],
            ("m", "r2", "a"): [("poverty", 0.9)],
            ("m", "r2", "b"): [("poverty", 0.9), ("fraud", 0.2)],
            ("m", "r3", "a"): [("nothing", 0.9)],
            ("m", "r3", "b"): None,
            ("n", "s1", "a"): [("space", 1.0)],
        },
        texts={("m", "r1"): "A scam about a family.", ("m", "r2"): "Poverty and FRAUD.", ("m", "r3"): "Nothing here."},
    )
    return ds, evaluate(ds, EvalOptions(k=5))


def test_review_table_filter_sort_paginate(evaluation):
    ds, ev = evaluation
    t = review_table(ev.scores, ds.reviews, "m", ["a", "b"], "ndcg@5")
    assert t["review_id"].tolist() == ["r1", "r2", "r3"]
    assert t["length"].tolist() == [len("A scam about a family."), len("Poverty and FRAUD."), len("Nothing here.")]
    assert pd.isna(t.loc[2, "ndcg@5·b"])  # b skipped r3
    assert t.loc[0, "matched·b"] == 0 and t.loc[1, "matched·b"] == 2
    scores = ev.scores.set_index(["review_id", "model"])
    assert t.loc[1, "ndcg@5·a"] == pytest.approx(scores.loc[("r2", "a"), "ndcg@5"])
    assert filter_reviews(t, "ndcg@5", ["a", "b"], query="fraud")["review_id"].tolist() == ["r2"]
    assert filter_reviews(t, "ndcg@5", ["a", "b"], nothing_matched=True)["review_id"].tolist() == ["r3"]
    low = filter_reviews(t, "ndcg@5", ["a", "b"], sort="lowest nDCG")["review_id"].tolist()
    assert low[0] == "r3"
    dis = filter_reviews(t, "ndcg@5", ["a", "b"], sort="largest disagreement", pair=("a", "b"))["review_id"].tolist()
    assert dis == ["r2", "r1", "r3"]  # |a − b|: 0.38, 0.30; r3 (b skipped) last
    page, p, n = paginate(t, 5, 2)
    assert (p, n, page["review_id"].tolist()) == (2, 2, ["r3"])
    every = review_table(ev.scores, ds.reviews, "ALL", ["a"], "ndcg@5")
    assert set(every["movie"]) == {"m", "n"}


def test_matched_tooltips(evaluation):
    _, ev = evaluation
    kw = ev.keywords[ev.keywords["review_id"] == "r2"]
    tips = matched_tooltips(kw)
    assert tips["poverty"] == "a: poverty (GT rank 1), b: poverty (GT rank 1)"
    assert tips["fraud"] == "b: fraud (GT rank 0)"


def test_selection_semantic_threshold_sentiment_in_the_url():
    movies, models = ["m1"], ["a", "b"]
    sel = resolve_selection([{"sem": "1", "tau": "0.8", "sas": "true"}], movies, models)
    assert (sel.semantic, sel.threshold, sel.sentiment) == (True, 0.8, True)
    assert {k: sel.params()[k] for k in ("sem", "tau", "sas")} == {"sem": "1", "tau": "0.80", "sas": "1"}
    assert resolve_selection([sel.params()], movies, models) == sel  # round trip
    assert set(SELECTION_KEYS) == set(sel.params())
    # defaults: off, τ = 0.75 (METRICS.md §4)
    sel = resolve_selection([{}], movies, models)
    assert (sel.semantic, sel.threshold, sel.sentiment) == (False, 0.75, False)
    # the slider's step and range: rounded to 0.01, outside [0.50, 0.95] (or not a number) ignored with a note
    assert resolve_selection([{"tau": "0.8312"}], movies, models).threshold == 0.83
    for bad in ("0.2", "0.99", "abc", "nan", "inf"):
        sel = resolve_selection([{"tau": bad}, {"tau": 0.6}], movies, models)
        assert sel.threshold == 0.6 and any(n.startswith("ignored tau=") for n in sel.notes), bad
    sel = resolve_selection([{"sem": "maybe", "sas": "<b>"}, {"sem": "0", "sas": "1"}], movies, models)
    assert (sel.semantic, sel.sentiment) == (False, True) and len(sel.notes) == 2
    # an explicit "0" in the URL wins over the session's "1"
    assert resolve_selection([{"sem": "0"}, {"sem": "1"}], movies, models).semantic is False
    assert page_params(resolve_selection([{"sem": "1"}], movies, models), review="r1")["sem"] == "1"


def _vectors():
    # 2-d unit vectors at known angles: cos(a, b) = cos(θa − θb)
    import numpy as np

    angle = {"scam": 0.0, "fraud": 0.5, "poverty": 1.4, "family": 2.0, "money": 0.3}
    return {k: np.array([np.cos(t), np.sin(t)], dtype="float32") for k, t in angle.items()}


def test_keyword_details_nearest_gt_and_sentiment(evaluation):
    import numpy as np

    from kweval.evaluation import sentiment

    ds, ev = evaluation
    kw = ev.keywords[(ev.keywords["movie"] == "m") & (ev.keywords["review_id"] == "r1")]
    gt = ev.ground_truth[ev.ground_truth["movie"] == "m"]
    out = keyword_details(kw, gt, _vectors(), threshold=0.9, sentiment=True)
    row = out[(out["model"] == "a") & (out["keyword"] == "family")].iloc[0]
    assert row["nearest_gt"] == "poverty" and row["nearest_rank"] == 1  # 2.0 is nearest to 1.4
    assert row["cosine"] == pytest.approx(np.cos(0.6), abs=1e-6) and not row["above"]  # 0.825 < 0.9
    scam = out[(out["model"] == "a") & (out["keyword"] == "scam")].iloc[0]
    assert scam["nearest_gt"] == "scam" and scam["cosine"] == pytest.approx(1.0) and scam["above"]
    assert out["v"].tolist() == pytest.approx(sentiment.sentiment_value(out["keyword"].tolist()).tolist())
    assert out[["model", "position"]].values.tolist() == kw[["model", "position"]].values.tolist()
    # without vectors / sentiment: only the lexical columns
    plain = keyword_details(kw, gt)
    assert "cosine" not in plain and "v" not in plain


def test_keyword_table_html_marks_cosines_above_tau_and_escapes():
    rows = pd.DataFrame(
        {
            "position": [0, 1, 2],
            "keyword": ["scam", XSS, "family"],
            "gt_rank": [0, -1, -1],
            "gt_keyword": ["scam", None, None],
            "nearest_gt": ["scam", XSS, None],
            "nearest_rank": [0, 3, -1],
            "cosine": [0.91234, 0.5, float("nan")],
            "above": [True, False, False],
            "v": [0.25, 0.5, float("nan")],
        }
    )
    out = keyword_table_html(rows, k=2, semantic=True, sentiment=True, threshold=0.75)
    assert "<img" not in out and out.count("&lt;img") == 2  # the keyword and its nearest GT keyword
    assert "<th>nearest GT</th><th>cosine</th><th>v(x)</th>" in out
    assert '<mark class="kw-cos kw-above" title="cosine &gt; τ = 0.75">0.912 ✓</mark>' in out
    assert '<td class="kw-cos">0.500</td>' in out and '<td class="kw-cos">n/a</td>' in out
    assert '<td class="kw-v">0.250</td>' in out and '<td class="kw-v">n/a</td>' in out
    assert '<td class="kw-near">&lt;img src=x onerror=alert(1)&gt; (GT rank 3)</td>' in out
    assert out.count("beyond k") == 1 and '<tr class="kw-dim"><td>2 <span' in out  # dimmed by TABLE_STYLE
    assert "<td><b>scam</b> (GT rank 0)</td>" in out and '<td class="kw-unmatched">— unmatched</td>' in out
    only_sent = keyword_table_html(rows[["position", "keyword", "gt_rank", "gt_keyword", "v"]], 5, sentiment=True)
    assert "cosine" not in only_sent and "v(x)" in only_sent
    assert "empty output" in keyword_table_html(rows.iloc[:0], 5, True, True)
    line = sentiment_line(0.5123, float("nan"))
    assert "review text v = <b>0.512</b>" in line and "GT keywords mean v = <b>n/a</b>" in line


def test_an_unmatched_reason_reads_the_same_in_a_list_and_in_a_table_cell():
    """The keyword list styles the category inline; the table's cell carries classes only (its TABLE_STYLE styles
    them), with the same words, escaped."""
    row = {"category": "near_lexical", "detail": XSS}
    listed, cell = unmatched_html(row), unmatched_html(row, cell=True)
    words = "[near (another match mode): &lt;img src=x onerror=alert(1)&gt;]"
    assert listed.startswith('<span class="kw-unmatched">— unmatched</span> <span class="kw-category kw-near_lexical"')
    assert 'style="opacity:0.75;font-size:0.9em"' in listed and words in listed
    assert cell == f'<td class="kw-unmatched">— unmatched <span class="kw-category kw-near_lexical">{words}</span></td>'
    assert ".kw-table .kw-category{opacity:0.75;font-size:0.9em}" in keyword_table_html(pd.DataFrame([{}]).iloc[:0], 1)
    taken = {"status": "taken", "reason": "GT <b> already taken"}
    assert unmatched_html(taken, cell=True) == '<td class="kw-unmatched kw-taken">— GT &lt;b&gt; already taken</td>'


def test_records_equal_pandas_to_dict():
    """Speed trick "records": the same dicts as `DataFrame.to_dict("records")` (Python ints and floats, NaN and None
    kept, column order), for every dtype a keyword table has, and none for no rows."""
    rows = pd.DataFrame(
        {
            "position": [0, 1, 2],
            "keyword": ["scam", XSS, None],
            "gt_rank": pd.Series([0, -1, -1], dtype="int64"),
            "cosine": [0.91234, float("nan"), 0.5],
            "above": [True, False, False],
            "detail": [None, "x", float("nan")],
        }
    )
    got, want = records(rows), rows.to_dict("records")
    assert [list(r) for r in got] == [list(r) for r in want]
    for a, b in zip(got, want):
        assert {k: (type(v), str(v)) for k, v in a.items()} == {k: (type(v), str(v)) for k, v in b.items()}
    assert records(rows.iloc[:0]) == [] == rows.iloc[:0].to_dict("records")


def test_highlights_are_per_model_never_pooled(evaluation):
    ds, ev = evaluation
    kw = ev.keywords[ev.keywords["review_id"] == "r2"]
    text = "Poverty and FRAUD."
    only_a = highlight(text, matched_tooltips(kw, model="a"))
    only_b = highlight(text, matched_tooltips(kw, model="b"))
    assert "<mark" in only_a and ">FRAUD</mark>" not in only_a  # a never matched fraud: not lit under a
    assert ">FRAUD</mark>" in only_b and ">Poverty</mark>" in only_b
    assert matched_tooltips(kw, model="zzz") == {}


def test_directional_disagreement_sorts(evaluation):
    ds, ev = evaluation
    t = review_table(ev.scores, ds.reviews, "m", ["a", "b"], "ndcg@5")
    scores = ev.scores.set_index(["review_id", "model"])["ndcg@5"]
    a_worse = filter_reviews(t, "ndcg@5", ["a", "b"], sort="A worse than B", pair=("a", "b"))["review_id"].tolist()
    b_worse = filter_reviews(t, "ndcg@5", ["a", "b"], sort="B worse than A", pair=("a", "b"))["review_id"].tolist()
    assert a_worse == [r for r in ("r1", "r2") if scores[(r, "a")] < scores[(r, "b")]]
    assert b_worse == [r for r in ("r1", "r2") if scores[(r, "b")] < scores[(r, "a")]]
    assert a_worse and b_worse and not set(a_worse) & set(b_worse)  # a direction, not |A − B|
    # the pair's order decides which model is A
    assert (
        filter_reviews(t, "ndcg@5", ["a", "b"], sort="A worse than B", pair=("b", "a"))["review_id"].tolist() == b_worse
    )


def test_highlight_spans_equal_the_regex_reference():
    text = "Star Wars: the star war saga. Darth-Vader's fall; a WAR of stars, star  war again."
    keywords = ["star war", "war", "darth vader", "the fall", "saga of stars", "stars", "a", "x y z", "?!"]
    assert [(a, b) for a, b, _ in match_spans(text, keywords)] == regex_spans(text, keywords)


def test_highlight_cost_follows_the_text_not_the_keyword():
    # a 200,000-word keyword (hostile upload) against a short text: word lookups, no pattern per word
    huge = " ".join(f"w{i}" for i in range(200_000)) + " fraud"
    spans = match_spans("A fraud, w7 and w199999.", [huge])
    assert [s[:2] for s in spans] == [(2, 7), (9, 11), (16, 23)]
    assert match_spans("short", ["x" * 100_000]) == []


def _contrast(hex_a: str, hex_b: str) -> float:
    def lum(h):
        c = [int(h.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted([lum(hex_a), lum(hex_b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_model_colours_are_stable_and_legible_in_both_themes():
    colors = model_colors(["base", "reranker", "yake"])
    assert {
        m: model_colors(["base", "reranker", "yake", "new"])[m] for m in colors
    } == colors  # a new model shifts none
    assert len(set(colors.values())) == 3
    for c in MODEL_PALETTE:
        assert _contrast(c, "#FFFFFF") >= 3 and _contrast(c, "#0E1117") >= 3, c


def test_axis_titles_name_metric_and_aggregation():
    assert axis_title("ndcg@5", "micro") == "nDCG@5 (mean over reviews)"  # ranking metrics are means in both modes
    assert axis_title("f1", "micro") == "F1 (micro: from counts summed over reviews)"
    assert axis_title("f1", "macro") == "F1 (mean over reviews)"
    assert axis_title("gt_coverage", "macro") == "GT coverage (per movie)"
    assert axis_title("zzz", "macro") == "zzz (mean over reviews)"


def test_best_values_marked_per_movie():
    table = pd.DataFrame(
        {
            "movie": ["m", "m", "ALL", "ALL"],
            "model": ["a", "b", "a", "b"],
            "n_reviews": [2, 2, 4, 4],
            "f1": [0.1, 0.3, 0.5, 0.2],
            "p_ttest": [0.5, 0.01, 0.2, 0.3],
        },
        index=[10, 11, 12, 13],
    )
    mask = best_mask(table)
    assert mask["f1"].tolist() == [False, True, True, False] and mask["p_ttest"].tolist() == [False, True, True, False]
    assert not mask["n_reviews"].any() and list(mask.index) == [10, 11, 12, 13]
    assert best_styles(table).loc[11, "f1"] == "font-weight: 700"


def test_gt_top_and_model_grid(evaluation):
    _, ev = evaluation
    gt = ev.ground_truth[ev.ground_truth["movie"] == "m"].assign(keyword=["fraud", XSS, "scam"])
    kw = ev.keywords[ev.keywords["review_id"] == "r2"]
    html_ = gt_top_html(gt, 2, kw, model_colors(["a", "b"]))
    assert "Top 2 GT keywords" in html_ and "<b>fraud</b>" in html_ and "&lt;img" in html_ and "<img" not in html_
    assert "1 more GT keyword(s)" in html_ and html_.count(">b</span>") == 2 and html_.count(">a</span>") == 1
    grid = model_grid_start()
    assert "auto-fit" in grid and "minmax(min(16rem,100%),1fr)" in grid


def test_jitter_is_seeded_and_small():
    x = [0.5] * 100
    j = jitter(x, 0.01)
    assert j == jitter(x, 0.01) and len(set(j)) == 100 and max(abs(v - 0.5) for v in j) <= 0.01


def test_flag_background_is_translucent():
    # a solid light pink made the flipped parity rows unreadable in dark mode: the flag colour must let the theme
    # through
    import re

    alpha = float(re.fullmatch(r"rgba\(\d+, \d+, \d+, ([0-9.]+)\)", FLAG_BACKGROUND).group(1))
    assert 0 < alpha <= 0.3
