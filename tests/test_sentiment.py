"""kweval.evaluation.sentiment: VADER values and SAS (METRICS.md §5) on a tiny hand-made case."""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd
import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from kweval.evaluation.sentiment import sas_metrics, sentiment_value

ANALYZER = SentimentIntensityAnalyzer()


def v(text: str) -> float:
    s = ANALYZER.polarity_scores(text)
    return 1.0 * s["pos"] + 0.5 * s["neu"] + 0.0 * s["neg"]


def test_sentiment_value_matches_vader():
    words = ["great", "terrible plot", "cinematography", "not good", "GREAT movie!!!", "great movie", "great"]
    got = sentiment_value(words)
    assert got.dtype == np.float64
    assert got.tolist() == pytest.approx([v(w) for w in words], abs=0)
    assert got.tolist() == pytest.approx([1.0, 0.122, 0.5, 0.147, 0.9255, 0.902, 1.0], abs=1e-12)
    assert np.isnan(sentiment_value([None, 3.0])).all()
    assert sentiment_value([]).shape == (0,)


@pytest.fixture()
def scored(monkeypatch) -> list[str]:
    """The texts kweval.evaluation.sentiment hands to VADER from now on (the real analyzer still scores them)."""
    from kweval.evaluation import sentiment

    seen: list[str] = []
    real = sentiment._analyzer()

    class Recording:
        def polarity_scores(self, text):
            seen.append(text)
            return real.polarity_scores(text)

    recording = Recording()
    monkeypatch.setattr(sentiment, "_analyzer", lambda: recording)
    return seen


def test_sentiment_value_scores_each_distinct_string_once(scored):
    sentiment_value(["good", "bad", "good", "good", "bad"])
    assert scored == ["good", "bad"]


def test_sas_formulas_on_a_tiny_case():
    pred = pd.DataFrame(
        [
            # movie, review, model, raw keyword, norm
            ("m1", "r1", "x", "GREAT movie!!!", "great movie"),
            ("m1", "r1", "x", "terrible plot", "terrible plot"),
            ("m1", "r2", "x", "cinematography", "cinematography"),
            ("m1", "r1", "y", None, ""),  # no usable keyword: NaN everywhere
            ("m2", "r3", "x", "scam", "scam"),  # movie without GT keywords
        ],
        columns=["movie", "review_id", "model", "keyword", "norm"],
    )
    gt = pd.DataFrame({"movie": ["m1", "m1", "m1"], "keyword": ["Redemption", "not good", "great"]})
    reviews = pd.DataFrame(
        {
            "movie": ["m1", "m1", "m2"],
            "review_id": ["r1", "r2", "r3"],
            "text": ["A wonderful, moving film. Loved it!", None, "   "],
        }
    )
    out = sas_metrics(pred, gt, reviews)
    assert out[["movie", "review_id", "model"]].values.tolist() == [
        ["m1", "r1", "x"],
        ["m1", "r2", "x"],
        ["m1", "r1", "y"],
        ["m2", "r3", "x"],
    ]
    gt_mean = (v("Redemption") + v("not good") + v("great")) / 3
    s1 = (v("GREAT movie!!!") + v("terrible plot")) / 2  # raw keywords, not the normalized ones
    s2 = v("cinematography")
    assert out.loc[0, "sent_pred"] == pytest.approx(s1)
    assert out.loc[0, "sas_keywords"] == pytest.approx(1 - abs(s1 - gt_mean))
    assert out.loc[0, "sas_text"] == pytest.approx(1 - abs(s1 - v("A wonderful, moving film. Loved it!")))
    assert out.loc[1, "sent_pred"] == pytest.approx(0.5)
    assert out.loc[1, "sas_keywords"] == pytest.approx(1 - abs(s2 - gt_mean))
    assert np.isnan(out.loc[1, "sas_text"])  # review without text
    assert out.loc[2, ["sent_pred", "sas_keywords", "sas_text"]].isna().all()
    assert out.loc[3, "sent_pred"] == pytest.approx(0.0)  # "scam" is all negative
    assert np.isnan(out.loc[3, "sas_keywords"]) and np.isnan(out.loc[3, "sas_text"])  # no GT; blank text
    # the hand numbers: s1 = (0.9255 + 0.122) / 2
    assert s1 == pytest.approx(0.52375)


def test_sas_uses_norm_without_a_keyword_column():
    pred = pd.DataFrame({"movie": ["m"], "review_id": ["r"], "model": ["x"], "norm": ["great movie"]})
    gt = pd.DataFrame({"movie": ["m"], "norm": ["great"]})
    reviews = pd.DataFrame({"movie": ["m"], "review_id": ["r"], "text": ["great"]})
    out = sas_metrics(pred, gt, reviews)
    assert out.loc[0, "sent_pred"] == pytest.approx(0.902)
    assert out.loc[0, "sas_keywords"] == pytest.approx(1 - (1.0 - 0.902))
    assert out.loc[0, "sas_text"] == pytest.approx(0.902)
    empty = sas_metrics(pred.iloc[:0], gt, reviews)
    assert empty.empty and {"sent_pred", "sas_keywords", "sas_text"} <= set(empty.columns)


def test_explorer_helpers_use_the_strings_sas_scores():
    """keyword_values / text_value / gt_mean_value: the pieces sas_metrics combines, for the explorer's sentiment
    view."""
    from kweval.evaluation.sentiment import gt_mean_value, keyword_values, text_value

    pred = pd.DataFrame(
        {
            "movie": "m1",
            "review_id": "r1",
            "model": "x",
            "keyword": ["GREAT movie!!!", None],
            "norm": ["great movie", "awful"],
        }
    )
    gt = pd.DataFrame({"movie": ["m1", "m1"], "keyword": ["Redemption", "not good"], "norm": ["redemption", "good"]})
    text = "A wonderful, moving film. Loved it!"
    values = keyword_values(pred)
    assert values.tolist() == pytest.approx([v("GREAT movie!!!"), v("awful")])  # raw first, norm as the fallback
    assert gt_mean_value(gt) == pytest.approx((v("Redemption") + v("not good")) / 2)  # raw GT keywords
    assert text_value(text) == pytest.approx(v(text)) and np.isnan(text_value("  ")) and np.isnan(text_value(None))
    out = sas_metrics(
        pred, gt[["movie", "keyword"]], pd.DataFrame({"movie": ["m1"], "review_id": ["r1"], "text": [text]})
    )
    sent = values.mean()
    assert out.loc[0, "sent_pred"] == pytest.approx(sent)
    assert out.loc[0, "sas_keywords"] == pytest.approx(1 - abs(sent - gt_mean_value(gt)))
    assert out.loc[0, "sas_text"] == pytest.approx(1 - abs(sent - text_value(text)))
    assert np.isnan(gt_mean_value(gt.iloc[:0]))


def test_sentiment_values_are_remembered_per_analyzer(scored):
    """A re-evaluation (another k, match mode or τ in the dashboard) does not rescore the review texts."""
    first = sentiment_value(["A wonderful film.", "dull", None])
    again = sentiment_value(["dull", "A wonderful film.", "new"])
    assert scored == ["A wonderful film.", "dull", "new"]
    assert again[:2].tolist() == [first[1], first[0]] and again[0] == pytest.approx(v("dull"))


def test_vader_values_persist_across_processes(tmp_path, monkeypatch):
    """Turning sentiment on again (a new server, a new CLI run) reads VADER's scores from the store."""
    from kweval.evaluation import sentiment

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    # a fresh process memo, as in a new process: texts an earlier test scored here would otherwise not be stored
    monkeypatch.setattr(sentiment, "_MEMO", weakref.WeakKeyDictionary())
    texts = ["A wonderful film.", "dull", "GREAT!", "great"]
    first = sentiment_value(texts, sentiment.vader_store())
    store = sentiment.vader_store()
    assert len(store) == 4 and store.precision == "fp64" and store.backend == "vader"

    seen: list[str] = []

    class Recording:  # a fresh analyzer: an empty process memo, as in a new process
        def polarity_scores(self, text):
            seen.append(text)
            return {"pos": 0.0, "neu": 0.0, "neg": 1.0}  # would change every value if it were asked

    monkeypatch.setattr(sentiment, "_analyzer", lambda: Recording())
    again = sentiment_value(texts + ["new one"], sentiment.vader_store())
    assert seen == ["new one"]  # only the unseen text is scored
    np.testing.assert_array_equal(again[:4], first)  # the very same float64 values
    assert again[4] == 0.0


def test_sas_metrics_with_an_unusable_store_still_scores(tmp_path, monkeypatch):
    from kweval.evaluation import sentiment

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(blocker / "cache"))
    notes: list[str] = []
    store = sentiment.vader_store(on_note=notes.append)
    pred = pd.DataFrame({"movie": ["m"], "review_id": ["r"], "model": ["x"], "keyword": ["great"], "norm": ["great"]})
    out = sas_metrics(
        pred,
        pd.DataFrame({"movie": ["m"], "keyword": ["awful"]}),
        pd.DataFrame({"movie": ["m"], "review_id": ["r"], "text": ["fine"]}),
        store=store,
    )
    assert out.loc[0, "sent_pred"] == pytest.approx(v("great")) and len(notes) == 1


@pytest.mark.parametrize("per_document", [False, True], ids=["movie-level GT", "per-document GT"])
def test_sentiment_as_an_add_on_equals_evaluating_with_it(demo_dataset, tmp_path, monkeypatch, per_document):
    """The dashboard turns sentiment on by adding its columns to the cached lexical evaluation (issue 11 item 7):
    the same table as evaluating with sentiment, whatever k / match mode the sentiment scores were taken from."""
    from dataclasses import replace

    from kweval.data.synth import synthesize
    from kweval.evaluation.pipeline import EvalOptions, evaluate, sentiment_scores, with_sentiment

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    dataset = synthesize(2, 40, 3, seed=3, gt="per-document") if per_document else demo_dataset
    options = EvalOptions(k=7, match="word", keyphrase=per_document)
    lexical = evaluate(dataset, options)
    sas = sentiment_scores(evaluate(dataset, EvalOptions(k=2, match="exact")), dataset)  # other k and match mode
    added = with_sentiment(lexical, sas)
    whole = evaluate(dataset, replace(options, sentiment=True))

    assert added.options == whole.options
    pd.testing.assert_frame_equal(added.scores, whole.scores)
    assert added.scores["sas_keywords"].notna().any() and added.problems == whole.problems
    assert "sas_text" not in lexical.scores.columns  # the cached lexical evaluation is left as it was
    with pytest.raises(ValueError, match="without sentiment"):
        with_sentiment(whole, sas)


def test_texts_scored_without_a_store_are_persisted_by_the_next_call_with_one(scored, tmp_path, monkeypatch):
    """The store is asked only for texts the process memo lacks, yet nothing scored is left out of it."""
    from kweval.evaluation import sentiment

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    first = sentiment_value(["a fine film", "awful", "a fine film"])  # no store: the process memo only
    assert len(sentiment.vader_store()) == 0
    again = sentiment_value(["awful", "a fine film", "new", None], sentiment.vader_store())
    assert scored == ["a fine film", "awful", "new"]  # nothing scored twice
    store = sentiment.vader_store()
    assert len(store) == 3
    stored, found = store.get_many(["a fine film", "awful"])
    assert found.all() and stored[0].tolist() == pytest.approx(
        [ANALYZER.polarity_scores("a fine film")[k] for k in ("pos", "neu", "neg")]
    )
    assert again[:2].tolist() == [first[1], first[0]] and np.isnan(again[3])
