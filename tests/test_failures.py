"""kweval.explain.failures (docs/metrics.md §10): the failure category of every keyword, its vector and its sums.

The categories must add up against the per-review table, which no other code
path computes the same way: per review × model, hit rows = p@k·k, hit +
hit_beyond_k = found + found_beyond_k = n_matched, the kept predictions are
n_pred, the GT rows n_gt, and the missed present GT keywords are the present
ones the evaluation did not match.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kweval.data import load_dataset
from kweval.data.dataset import Dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain.failures import COLUMNS, EXTRA_COLUMNS, failure_summary, failure_table
from kweval.metrics.categories import CATEGORIES, CATEGORY_NAMES, GT_CATEGORIES, PREDICTION_CATEGORIES
from kweval.text.matching import MATCH_MODES
from tests.helpers import DNLP, make_dataset


def _table(gt, preds, texts=None, **options):
    ds = make_dataset({"m": gt}, preds, texts=texts)
    ev = evaluate(ds, EvalOptions(**options))
    return ds, ev, failure_table(ds, ev)


def _rows(table, side):
    t = table[table["side"] == side]
    keywords = [None if pd.isna(k) else k for k in t["keyword"].astype(object)]
    return list(zip(keywords, t["category"].astype(str), t["detail"].astype(str)))


def test_the_spec_vector():
    """docs/metrics.md §10's vector: §3's first case with a duplicate, k = 3, approx."""
    preds = ["scam", "family", "poverty", "cinematography", "fraud", "Scam!"]
    _, _, t = _table(["fraud", "poverty", "scam"], {("m", "r", "a"): [(p, 1.0) for p in preds]}, k=3)
    assert list(t.columns) == COLUMNS + EXTRA_COLUMNS
    assert [c for _, c, _ in _rows(t, "prediction")] == [
        "hit",
        "off_reference",
        "hit",
        "off_reference",
        "hit_beyond_k",
        "duplicate",
    ]
    assert [(k, c) for k, c, _ in _rows(t, "gt")] == [
        ("fraud", "found_beyond_k"),
        ("poverty", "found"),
        ("scam", "found"),
    ]
    assert t["position"].tolist() == [0, 1, 2, 3, 4, -1, 0, 1, 2]
    details = [d for _, _, d in _rows(t, "prediction")]
    assert details[0] == "GT ‘scam’ (rank 2)" and details[5] == "repeats #0"
    assert [d for _, _, d in _rows(t, "gt")] == ["#4 ‘fraud’", "#2 ‘poverty’", "#0 ‘scam’"]


def test_taken_names_the_gt_keyword_and_its_holder():
    _, _, t = _table(["comedy", "drama"], {("m", "r", "a"): [("dark comedy", 1), ("comedy", 1), ("thriller", 1)]})
    assert _rows(t, "prediction") == [
        ("dark comedy", "hit", "GT ‘comedy’ (rank 0)"),
        ("comedy", "taken", "GT ‘comedy’ already taken by #0"),
        ("thriller", "off_reference", ""),
    ]


@pytest.mark.parametrize(
    ("mode", "pred", "gt", "detail"),
    [
        ("exact", "jazz soundtrack", "soundtrack", "word: GT ‘soundtrack’"),
        ("exact", "lightsaber duels", "lightsaber duel", "stem: GT ‘lightsaber duel’"),
        ("word", "wars", "war", "stem: GT ‘war’"),
        ("stem", "wars", "star wars", "word: GT ‘star wars’"),
        ("word", "award", "war", "approx: GT ‘war’"),
    ],
)
def test_near_lexical_names_the_first_mode_that_matches(mode, pred, gt, detail):
    _, _, t = _table([gt, "other"], {("m", "r", "a"): [(pred, 1.0)]}, match=mode)
    assert _rows(t, "prediction") == [(pred, "near_lexical", detail)]


def test_cleaning_losses_and_empty_lists():
    preds = {("m", "r", "a"): [("!!", 1.0), (None, 0.5), ("fraud", 1.0), ("FRAUD", 1.0)], ("m", "r2", "a"): []}
    _, ev, t = _table(["fraud"], preds)
    assert _rows(t, "prediction") == [
        ("!!", "invalid", "empty after normalization"),
        (None, "invalid", "not a string"),
        ("fraud", "hit", "GT ‘fraud’ (rank 0)"),
        ("FRAUD", "duplicate", "repeats #0"),
    ]
    # the empty list is a real, empty prediction: no prediction row, its GT keyword missed
    r2 = t[t["review_id"] == "r2"]
    assert r2["side"].astype(str).tolist() == ["gt"] and r2["category"].astype(str).tolist() == ["missed_no_text"]


def test_gt_missed_present_absent_and_no_text():
    texts = {("m", "r"): "A heist about a scam, with no family.", ("m", "r2"): "   "}
    preds = {("m", "r", "a"): [("heist", 1.0)], ("m", "r2", "a"): [("x", 1.0)]}
    _, _, t = _table(["fraud", "scam", "heist"], preds, texts=texts)
    got = {(r, k): c for r, k, c, s in zip(t["review_id"], t["keyword"], t["category"], t["side"]) if s == "gt"}
    assert got == {
        ("r", "fraud"): "missed_absent",
        ("r", "scam"): "missed_present",
        ("r", "heist"): "found",
        ("r2", "fraud"): "missed_no_text",
        ("r2", "scam"): "missed_no_text",
        ("r2", "heist"): "missed_no_text",
    }


def test_near_semantic_at_tau_with_the_cosine_and_nearest_gt():
    vectors = {"fraud": [1.0, 0.0], "swindle": [0.8, 0.6], "sunset": [0.0, 1.0], "poverty": [0.6, -0.8]}
    ds = make_dataset({"m": ["fraud", "poverty"]}, {("m", "r", "a"): [("swindle", 1.0), ("sunset", 1.0)]})
    ev = evaluate(ds, EvalOptions())
    ev = replace(ev, options=replace(ev.options, semantic=True, threshold=0.8))
    t = failure_table(ds, ev, vectors=vectors)
    assert _rows(t, "prediction") == [
        ("swindle", "near_semantic", "GT ‘fraud’, cosine 0.800"),
        ("sunset", "off_reference", "nearest GT ‘fraud’, cosine 0.000"),
    ]
    assert t["cosine"].iloc[0] == pytest.approx(0.8, abs=1e-6)
    ev = replace(ev, options=replace(ev.options, threshold=0.81))
    assert failure_table(ds, ev, vectors=vectors)["category"].astype(str).iloc[0] == "off_reference"


def test_summary_counts_every_category_with_zeros():
    preds = ["scam", "family", "poverty", "cinematography", "fraud", "Scam!"]
    _, _, t = _table(["fraud", "poverty", "scam"], {("m", "r", "a"): [(p, 1.0) for p in preds]}, k=3)
    s = failure_summary(t)
    assert s["category"].tolist() == list(CATEGORY_NAMES)
    counts = dict(zip(s["category"], s["count"]))
    assert counts == {
        **dict.fromkeys(CATEGORY_NAMES, 0),
        "hit": 2,
        "off_reference": 2,
        "hit_beyond_k": 1,
        "duplicate": 1,
        "found": 2,
        "found_beyond_k": 1,
    }
    assert s.loc[s["side"] == "gt", "share"].sum() == pytest.approx(1.0)


def test_one_table_of_categories():
    assert PREDICTION_CATEGORIES == (
        "invalid",
        "duplicate",
        "hit",
        "hit_beyond_k",
        "taken",
        "near_lexical",
        "near_semantic",
        "off_reference",
    )
    # `missed`: a keyphrase preset without a present rule (pke; kweval.keyphrase.fates), never kweval's own
    assert GT_CATEGORIES == ("found", "found_beyond_k", "missed_present", "missed_absent", "missed_no_text", "missed")
    assert all(c.rule for c in CATEGORIES)


def _check_sums(ds: Dataset, ev, table: pd.DataFrame) -> None:
    """The categories add up against the per-review table, review × model by review × model."""
    key = ["movie", "review_id", "model"]
    t = table.astype({c: object for c in key + ["side", "category"]})
    counts = t.groupby(key + ["category"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(CATEGORY_NAMES), fill_value=0)
    scores = ev.scores.astype({c: object for c in key}).set_index(key)
    counts = counts.reindex(scores.index, fill_value=0)
    k = ev.options.k
    hit, beyond = counts["hit"].to_numpy(), counts["hit_beyond_k"].to_numpy()
    found, found_beyond = counts["found"].to_numpy(), counts["found_beyond_k"].to_numpy()
    np.testing.assert_array_equal(hit, np.rint(scores[f"p@{k}"].to_numpy() * k).astype(int))
    np.testing.assert_array_equal(hit + beyond, scores["n_matched"].to_numpy())
    np.testing.assert_array_equal(found + found_beyond, scores["n_matched"].to_numpy())
    np.testing.assert_array_equal(hit, found)
    kept = counts[[c for c in PREDICTION_CATEGORIES if c not in ("invalid", "duplicate")]].sum(axis=1)
    np.testing.assert_array_equal(kept.to_numpy(), scores["n_pred"].to_numpy())
    np.testing.assert_array_equal(counts[list(GT_CATEGORIES)].sum(axis=1).to_numpy(), scores["n_gt"].to_numpy())
    if "n_gt_present" in scores:  # the evaluation's present rule, the same texts
        with_text = scores["n_gt_present"].notna().to_numpy() & (counts["missed_no_text"].to_numpy() == 0)
        missed_present = counts["missed_present"].to_numpy()[with_text]
        expected = (scores["n_gt_present"] - scores["n_matched_present"]).to_numpy()[with_text]
        np.testing.assert_array_equal(missed_present, expected.astype(int))
    raw = ds.predictions.merge(scores.reset_index()[key], on=key)
    sizes = raw.groupby(key).size()
    marker = raw.groupby(key)["keyword"].apply(lambda s: len(s) == 1 and s.isna().all())
    n_raw = (sizes - marker.astype(int)).reindex(scores.index).fillna(0).astype(int).to_numpy()  # no rows: 0
    n_pred_rows = counts[list(PREDICTION_CATEGORIES)].sum(axis=1).to_numpy()
    np.testing.assert_array_equal(n_pred_rows, n_raw)


VOCAB = ["star war", "war", "wars", "star wars", "jedi", "Jedi!", "the force", "force", "dark side", "!!", "", None]
_kw = st.sampled_from(VOCAB)


def _dataset(gt_lists, pred_lists, texts, per_document: bool, ranked: bool) -> Dataset:
    """Tidy tables: one movie with reviews r0.. (their own GT lists when `per_document`), models a and b."""
    gt_rows, pred_rows, review_rows = [], [], []
    for r, (gt, text) in enumerate(zip(gt_lists, texts)):
        review = f"r{r}"
        review_rows.append(("m", review, text, None, np.nan))
        if per_document or r == 0:
            for j, kw in enumerate(gt):
                gt_rows.append(("m", j if ranked else 0, kw, np.nan, np.nan, review if per_document else None))
    for (r, model), preds in pred_lists.items():
        if preds is None:
            continue
        if not preds:
            pred_rows.append(("m", f"r{r}", model, 0, None, np.nan))
        for i, kw in enumerate(preds):
            pred_rows.append(("m", f"r{r}", model, i, kw, 1.0 / (i + 1)))
    return Dataset(
        movies=pd.DataFrame({"movie": ["m"], "title": ["m"], "ranked": [ranked]}),
        reviews=pd.DataFrame(review_rows, columns=["movie", "review_id", "text", "title", "rating"]),
        predictions=pd.DataFrame(pred_rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"]),
        ground_truth=pd.DataFrame(gt_rows, columns=["movie", "rank", "keyword", "helpful", "not_helpful", "review_id"]),
        models=pd.DataFrame({"model": ["a", "b"], "score_direction": ["higher", "higher"]}),
    )


@st.composite
def _cases(draw):
    n_reviews = draw(st.integers(1, 4))
    per_document = draw(st.booleans())
    gt_lists = [draw(st.lists(st.sampled_from(VOCAB[:9]), min_size=1, max_size=6)) for _ in range(n_reviews)]
    texts = [
        draw(st.sampled_from([None, "", "the star wars saga", "jedi and the dark force", "wars"]))
        for _ in range(n_reviews)
    ]
    preds = {
        (r, model): draw(st.one_of(st.none(), st.lists(_kw, max_size=8)))
        for r in range(n_reviews)
        for model in ("a", "b")
    }
    return _dataset(gt_lists, preds, texts, per_document, draw(st.booleans()))


@pytest.mark.slow  # 100 evaluations (~13 s)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.sampled_from(MATCH_MODES), st.integers(1, 6))
def test_categories_add_up_against_the_per_review_metrics(ds, mode, k):
    ev = evaluate(ds, EvalOptions(k=k, match=mode, present=True))
    table = failure_table(ds, ev)
    _check_sums(ds, ev, table)
    assert set(table["category"].astype(str)) <= set(CATEGORY_NAMES)


def test_demo_adds_up_in_every_mode(demo_dataset):
    for mode in MATCH_MODES:
        ev = evaluate(demo_dataset, EvalOptions(k=5, match=mode, present=True))
        _check_sums(demo_dataset, ev, failure_table(demo_dataset, ev))


@pytest.mark.dnlp
@pytest.mark.slow  # 13 million table rows (~15 s)
def test_dnlp_adds_up():
    ds = load_dataset(DNLP)
    ev = evaluate(ds, EvalOptions(k=5, present=True))
    table = failure_table(ds, ev)
    _check_sums(ds, ev, table)
    assert len(table) > 13_000_000
    s = failure_summary(table)
    assert (s.loc[s["category"] == "missed_absent", "share"] > 0.9).all()  # most GT keywords never occur in a review


def test_docs_show_the_one_table():
    from kweval.metrics import categories, docs_table
    from tests.helpers import REPO

    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert "## 10. Failure categories" in text and categories.markdown_table() in text
    assert docs_table.with_categories(text) == text


@pytest.mark.keyphrase
@pytest.mark.parametrize("match", ["approx", "stem"])
def test_semeval_per_document_adds_up(tmp_path, match):
    """SemEval2017: each document its own unranked GT list; predictions of word runs, repeats included."""
    import json

    from tests.helpers import SEMEVAL

    docs = sorted((SEMEVAL / "docsutf8").glob("*.txt"))[:80]
    path = tmp_path / "p.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i, doc in enumerate(docs):
            words = doc.read_text(encoding="utf-8").split()
            phrases = [" ".join(words[j : j + 1 + (j + i) % 3]) for j in range(0, 40, 2)]
            handle.write(json.dumps({"id": doc.stem, "keyphrases": phrases + phrases[:2] + ["--"]}) + "\n")
    ds = load_dataset(SEMEVAL, predictions={"runs": str(path)}).subset(models=["runs"])
    ev = evaluate(ds, EvalOptions(k=5, match=match, present=True, keyphrase=True))
    table = failure_table(ds, ev)
    _check_sums(ds, ev, table)
    categories = set(table["category"].astype(str))
    assert {"hit", "duplicate", "invalid", "found", "missed_present"} <= categories  # SemEval2017: extractive


def test_summary_by_model_and_the_reviews_of_a_segment(demo_dataset):
    from kweval.explain.failures import reviews_with

    ev = evaluate(demo_dataset, EvalOptions(k=5))
    table = failure_table(demo_dataset, ev)
    by_model = failure_summary(table, by=["model"])
    assert list(by_model.columns) == ["model", "side", "category", "count", "share"]
    per_movie = failure_summary(table).groupby(["model", "category"], sort=False)["count"].sum()
    assert by_model.set_index(["model", "category"])["count"].equals(
        per_movie.loc[by_model.set_index(["model", "category"]).index]
    )
    taken = reviews_with(table, "taken", model="keybert")
    assert set(taken["model"]) == {"keybert"} and (taken["count"] >= 1).all()
    assert taken["count"].sum() == ((table["category"] == "taken") & (table["model"] == "keybert")).sum()
    with pytest.raises(ValueError, match="unknown category"):
        reviews_with(table, "nope")


@pytest.mark.parametrize("options", [EvalOptions(k=5), EvalOptions(k=3, match="exact")])
def test_counts_from_the_parts_equal_the_counts_of_the_rows(demo_dataset, options):
    """The dashboard's speed path (counts per review × model × category, no rows laid out) against the table."""
    from kweval.explain.failures import failure_parts, parts_reviews_with, parts_summary, parts_table, reviews_with

    ev = evaluate(demo_dataset, options)
    parts = failure_parts(demo_dataset, ev)
    table = parts_table(parts)
    pd.testing.assert_frame_equal(table, failure_table(demo_dataset, ev))
    groups = parts.lists.groups
    two = groups["model"].isin(["keybert", "yake"]).to_numpy() & (groups["movie"] == groups["movie"].iloc[0]).to_numpy()
    scopes = {"all": None, "two models of one movie": two}
    for name, keep in scopes.items():
        rows = np.ones(len(table), dtype=bool)
        if keep is not None:
            keyed = table[["movie", "review_id", "model"]].astype(object)
            kept = set(map(tuple, groups.loc[keep, ["movie", "review_id", "model"]].astype(object).to_numpy()))
            rows = np.fromiter((tuple(r) in kept for r in keyed.to_numpy()), dtype=bool, count=len(table))
        for by in (["model"], ["movie", "model"]):
            pd.testing.assert_frame_equal(parts_summary(parts, by, keep), failure_summary(table[rows], by), obj=name)
        for category, model in (("taken", "keybert"), ("missed_present", None), ("hit", "yake")):
            want = reviews_with(table[rows], category, model)
            got = parts_reviews_with(parts, category, model, keep)
            pd.testing.assert_frame_equal(got, want, check_dtype=False, obj=f"{name}: {category}")


def test_the_reviews_of_a_prediction_category_need_no_gt_side(demo_dataset):
    """The explorer's filter by a prediction category reads the prediction side alone, and the counts of a GT
    category are made without the GT side's rows (`gt_category_counts`); both are the table's counts."""
    from kweval.explain.failures import failure_parts, parts_reviews_with, parts_summary, reviews_with

    ev = evaluate(demo_dataset, EvalOptions())
    parts = failure_parts(demo_dataset, ev)
    made = []
    side = parts.gt_side
    parts.gt_side = lambda: made.append(1) or side()
    table = failure_table(demo_dataset, ev)
    for category, model in (("taken", "keybert"), ("near_lexical", None), ("hit", "yake")):
        want = reviews_with(table, category, model)
        pd.testing.assert_frame_equal(parts_reviews_with(parts, category, model), want, check_dtype=False)
    assert made == []
    pd.testing.assert_frame_equal(parts_summary(parts, ["model"]), failure_summary(table, ["model"]))
    pd.testing.assert_frame_equal(
        parts_reviews_with(parts, "missed_present", None), reviews_with(table, "missed_present"), check_dtype=False
    )
    assert made == []  # the GT rows are laid out only for the table (a review's whole list)
    assert len(parts.gt.group) == int(parts.counts[:, len(PREDICTION_CATEGORIES) :].sum()) and made == [1]


def _gt_counts_both_ways(ds, options):
    """`gt_category_counts` (speed trick "counts by review") and its reference: bincount of `gt_categories`."""
    from kweval.explain.failure_gt import gt_categories, gt_category_counts, review_categories
    from kweval.explain.failure_lists import group_lists
    from kweval.explain.failure_predictions import CODE, prediction_categories

    ev = evaluate(ds, options)
    lists = group_lists(ev)
    pred = prediction_categories(ds, ev, lists)
    pairs = (pred.category == CODE["hit"]) | (pred.category == CODE["hit_beyond_k"])
    args = (options.k, pred.group[pairs].astype(np.int64), pred.gt_rank[pairs].astype(np.int64), pred.position[pairs])
    rows = gt_categories(ds, lists, options.k, options.match, *args[1:])
    n_cat = len(GT_CATEGORIES)
    want = np.bincount(rows.group.astype(np.int64) * n_cat + rows.category, minlength=len(lists.groups) * n_cat)
    got = gt_category_counts(lists, review_categories(ds, lists, options.match), *args)
    return got, want.reshape(-1, n_cat), args[1]


@pytest.mark.parametrize(
    "options", [EvalOptions(k=1), EvalOptions(k=2, match="exact"), EvalOptions(k=1, match="stem", present=True)]
)
def test_gt_counts_by_review_equal_the_counts_of_the_rows(demo_dataset, options):
    got, want, pair_group = _gt_counts_both_ways(demo_dataset, options)
    assert len(pair_group) and (want[:, GT_CATEGORIES.index("found_beyond_k")] > 0).any()  # matches beyond k too
    np.testing.assert_array_equal(got, want)


def test_gt_counts_by_review_per_document_with_blank_texts_and_no_gt(tmp_path):
    """Per-document GT (each document its own list), a blank text and a document without gold phrases."""
    from tests.helpers import edge_collection

    ds = load_dataset(edge_collection(tmp_path / "edge"))
    got, want, _ = _gt_counts_both_ways(ds, EvalOptions(k=3, keyphrase=True))
    np.testing.assert_array_equal(got, want)
    texts = {("m", "r"): "A heist about a scam.", ("m", "r2"): "   ", ("m", "r3"): "scam"}
    preds = {("m", "r", "a"): [("heist", 1.0), ("scam", 0.5)], ("m", "r2", "a"): [("x", 1.0)], ("n", "r4", "a"): []}
    ds = make_dataset({"m": ["fraud", "scam", "heist"]}, preds, texts=texts)
    got, want, _ = _gt_counts_both_ways(ds, EvalOptions(k=1))
    np.testing.assert_array_equal(got, want)
    assert want[:, GT_CATEGORIES.index("missed_no_text")].sum() == 3 and want.sum() == 6


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=200), st.integers(41, 200_000))
def test_dense_unique_is_np_unique(keys, space):
    from kweval.explain.failures import dense_unique

    key = np.asarray(keys, dtype=np.int64)
    used, codes = dense_unique(key, space)
    want_used, want_codes = np.unique(key, return_inverse=True)
    assert used.tolist() == want_used.tolist() and codes.tolist() == want_codes.reshape(-1).tolist()


@pytest.mark.parametrize("value", ["b", "zz", "a"])
def test_equals_on_codes_is_equals_on_the_text(value):
    from kweval.explain.failures import equals

    plain = pd.Series(["a", "b", None, "b", "c"], dtype=object)
    for column in (plain, plain.astype("category"), plain.astype(pd.CategoricalDtype(["c", "b", "a", "zz"]))):
        assert equals(column, value).tolist() == (plain.to_numpy() == value).tolist()


def test_without_nltk_stem_is_skipped_with_a_note(monkeypatch):
    import sys

    from kweval.text import normalize

    caches = [normalize._porter] + ([normalize._stem_word] if hasattr(normalize, "_stem_word") else [])
    for cache in caches:
        cache.cache_clear()
    monkeypatch.setitem(sys.modules, "nltk", None)
    monkeypatch.setitem(sys.modules, "nltk.stem.porter", None)
    try:
        _, _, t = _table(["soundtrack"], {("m", "r", "a"): [("jazz soundtrack", 1.0)]}, match="exact")
    finally:
        for cache in caches:
            cache.cache_clear()
    assert _rows(t, "prediction") == [("jazz soundtrack", "near_lexical", "word: GT ‘soundtrack’")]
    (note,) = t.attrs["notes"]
    assert "near_lexical not tested under stem" in note and "kweval[stem]" in note


_words = st.sampled_from(["star", "wars", "war", "jedi", "ars", "s", "dark side", "side", "xyz", "a"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_words, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=6),
    st.lists(st.one_of(st.none(), st.lists(_words, max_size=8).map(" ".join)), min_size=1, max_size=5),
    st.sampled_from(MATCH_MODES),
)
def test_shared_list_presence_equals_its_definition(keywords, texts, mode):
    """`present.occurrences` (with its token prefilter) against `present_flags`, text by text (the presence the
    GT categories read)."""
    from kweval.text import present

    kw_idx, text_idx = present.occurrences(present.searchable_keywords(keywords, mode), present.searchable(texts, mode))
    got = set(zip(kw_idx.tolist(), text_idx.tolist()))
    expected = {
        (k, t)
        for t, text in enumerate(texts)
        for k, flag in enumerate(present.present_flags(keywords, text, mode))
        if flag
    }
    assert got == expected
