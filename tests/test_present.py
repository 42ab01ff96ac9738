"""Present / absent GT keywords (docs/metrics.md §9): the evaluation's vectorised path against the plain definition.

`evaluate` finds present GT keywords in bulk (texts normalized together, a
movie's shared list searched once in all its texts, a review's own list
tested pair by pair, a chunk of reviews at a time); `kweval.text.present.present_flags`
is the definition, one review at a time.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kweval.data.dataset import Dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.text.matching import MATCH_MODES
from kweval.text.normalize import normalize, stem_tokens
from kweval.text.present import has_text, present_flags, searchable, searchable_keywords
from tests.reference import clean_gt

presence_stage = importlib.import_module("kweval.evaluation.presence")

WORDS = ["Star", "star", "wars", "war", "running", "runs", "café", "CAFÉ", "b-c", "x!", "a", "Á", "z\x00z", "q\x1fq"]
phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
texts = st.one_of(
    st.none(),
    st.sampled_from(["", "   ", "!!!"]),
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from([" ", "  ", "\n", ", ", "\t"])), max_size=8).map(
        lambda parts: "".join(w + sep for w, sep in parts)
    ),
)


@st.composite
def per_document_data(draw):
    """Two movies, each with a movie list and reviews that have their own GT list or use the movie's (and a text, or
    none)."""
    gt_rows, reviews, preds = [], [], []
    for movie in ("m1", "m2"):
        for rank, kw in enumerate(draw(st.lists(phrases, min_size=1, max_size=4))):
            gt_rows.append((movie, rank, kw, None))
        for r in range(draw(st.integers(1, 4))):
            review = f"{movie}r{r}"
            if draw(st.booleans()):
                for rank, kw in enumerate(draw(st.lists(phrases, min_size=1, max_size=5))):
                    gt_rows.append((movie, rank, kw, review))
            if draw(st.integers(0, 5)):  # else the reviews table has no row for it: no text
                reviews.append((movie, review, draw(texts), None, math.nan))
            for model in ("p", "q"):
                for rank, kw in enumerate(draw(st.lists(phrases, max_size=4))):
                    preds.append((movie, review, model, rank, kw, 1.0 - rank / 10))
    ground_truth = pd.DataFrame(gt_rows, columns=["movie", "rank", "keyword", "review_id"])
    return Dataset(
        movies=pd.DataFrame({"movie": ["m1", "m2"], "title": ["m1", "m2"]}),
        reviews=pd.DataFrame(reviews, columns=["movie", "review_id", "text", "title", "rating"]),
        predictions=pd.DataFrame(preds, columns=["movie", "review_id", "model", "rank", "keyword", "score"]),
        ground_truth=ground_truth,
        models=pd.DataFrame({"model": ["p", "q"], "score_direction": ["higher", "higher"]}),
    )


def _gt_list(ground_truth: pd.DataFrame, movie: str, review: str) -> list[str]:
    """The review's cleaned GT list: its own when it has one, else its movie's."""
    rows = ground_truth[(ground_truth["movie"] == movie) & (ground_truth["review_id"] == review)]
    if rows.empty:
        rows = ground_truth[(ground_truth["movie"] == movie) & ground_truth["review_id"].isna()]
    return clean_gt(rows.sort_values("rank", kind="stable")["keyword"].tolist())


@pytest.mark.parametrize("match", MATCH_MODES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=per_document_data(), chunk=st.sampled_from([1, 2, 1 << 16]))
def test_present_counts_follow_present_flags_review_by_review(match, data, chunk):
    """Per review × model: |G_present| and the matched keywords found present are those `present_flags` gives."""
    saved = presence_stage._PRESENT_CHUNK
    presence_stage._PRESENT_CHUNK = chunk  # several chunks, as at scale
    try:
        ev = evaluate(data, EvalOptions(match=match, keyphrase=True, present=True))
    finally:
        presence_stage._PRESENT_CHUNK = saved
    text_of = {(m, r): t for m, r, t in data.reviews[["movie", "review_id", "text"]].itertuples(index=False)}
    matched = ev.keywords[ev.keywords["gt_rank"] >= 0]
    for row in ev.scores.itertuples(index=False):
        text = text_of.get((row.movie, row.review_id))
        gt = _gt_list(data.ground_truth, row.movie, row.review_id)
        flags = dict(zip(gt, present_flags(gt, text, match)))
        mine = matched[
            (matched["movie"] == row.movie) & (matched["review_id"] == row.review_id) & (matched["model"] == row.model)
        ]
        hits = sum(flags[normalize(g)] for g in mine["gt_keyword"])
        if not isinstance(text, str) or not text.strip():
            assert (row.n_gt_present, row.n_matched_present) == (0, 0.0) and math.isnan(row.recall_present)
        else:
            assert row.n_gt_present == sum(flags.values())
            assert row.n_gt_absent == len(gt) - sum(flags.values())
            assert row.n_matched_present == hits and row.n_matched_absent == len(mine) - hits


def test_a_review_given_twice_takes_its_last_text():
    """The reviews table is looked up by (movie, review_id); a repeated pair's last row wins, as a dict would give."""
    ds = Dataset(
        movies=pd.DataFrame({"movie": ["m"], "title": ["m"]}),
        reviews=pd.DataFrame(
            {
                "movie": ["m", "m"],
                "review_id": ["r", "r"],
                "text": ["nothing", "the star"],
                "title": [None, None],
                "rating": [np.nan, np.nan],
            }
        ),
        predictions=pd.DataFrame(
            {"movie": ["m"], "review_id": ["r"], "model": ["p"], "rank": [0], "keyword": ["star"], "score": [1.0]}
        ),
        ground_truth=pd.DataFrame(
            {"movie": ["m", "m"], "rank": [0, 1], "keyword": ["star", "moon"], "review_id": ["r", "r"]}
        ),
        models=pd.DataFrame({"model": ["p"], "score_direction": ["higher"]}),
    )
    row = evaluate(ds, EvalOptions(match="exact", keyphrase=True, present=True)).scores.iloc[0]
    assert (row["n_gt_present"], row["n_matched_present"], row["recall_absent"]) == (1, 1.0, 0.0)


@given(st.lists(st.one_of(st.none(), st.just(math.nan), st.text(alphabet=" \t\n\x85\u3000\x1fab", max_size=4))))
def test_has_text_is_a_non_blank_string(values):
    assert has_text(values).tolist() == [isinstance(v, str) and v.strip() != "" for v in values]


def _plain_searchable(text: object, mode: str) -> str:
    """`searchable`'s definition for one text: normalized, and under stem its tokens' Porter stems, padded by spaces."""
    norm = normalize(text) if isinstance(text, str) else ""
    if mode == "stem":
        return " " + " ".join(stem_tokens(tok)[0] for tok in norm.split()) + " " if norm else ""
    if mode in ("exact", "word"):
        return f" {norm} " if norm else ""
    return norm


@pytest.mark.parametrize("match", MATCH_MODES)
@settings(max_examples=150, deadline=None)
@given(values=st.lists(texts, max_size=6))
def test_searchable_texts_and_keywords_follow_their_definition_text_by_text(match, values):
    """Texts (and keywords) are normalized and stemmed all at once; the result is the one-text-at-a-time definition."""
    assert searchable(values, match) == [_plain_searchable(v, match) for v in values]
    norms = [n for n in (normalize(v) for v in values if isinstance(v, str)) if n]
    assert searchable_keywords(norms, match) == [_plain_searchable(n, match) for n in norms]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdeinorstuyz", min_size=1, max_size=12), min_size=1, max_size=6))
def test_memoised_stems_equal_porter_token_by_token(words):
    """The speed trick `_stem_word` (a memo) against its plain definition, NLTK's Porter stemmer itself."""
    from kweval.text.stemming import load_porter

    porter = load_porter()
    keyword = " ".join(words)
    assert stem_tokens(keyword) == tuple(porter(w) for w in words)
    assert stem_tokens(keyword) == stem_tokens(keyword)  # the second call is served by the memo


WORDS = st.sampled_from(["a", "ab", "b", "ba", "star", "wars", "star wars", "", " ", "é", "ars w"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=12), st.lists(st.lists(WORDS, max_size=8).map(" ".join), max_size=6))
def test_occurrences_by_automaton_equal_the_plain_scan(keywords, texts):
    """The speed trick (Aho–Corasick, pyahocorasick) against its plain definition: every (keyword, text) pair, each
    once, a repeated keyword at each of its indices, blank keywords never."""
    ahocorasick = pytest.importorskip("ahocorasick")
    from kweval.text.present import occurrences_automaton, occurrences_scan

    want = occurrences_scan(keywords, texts)
    got = occurrences_automaton(keywords, texts, ahocorasick)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
