"""kweval.explain.why: the reason each keyword did or did not match, from the matching functions themselves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain import why
from kweval.text.matching import MATCH_MODES, keywords_match
from tests.helpers import make_dataset


def _reasons(gt, preds, mode="approx"):
    ds = make_dataset({"m": gt}, {("m", "r", model): [(p, 1.0) for p in kws] for model, kws in preds.items()})
    ev = evaluate(ds, EvalOptions(match=mode))
    return ev, why.match_reasons(ev.keywords, ev.ground_truth, mode)


def test_taken_gt_keyword_names_the_earlier_keyword():
    _, out = _reasons(["comedy", "drama"], {"a": ["dark comedy", "comedy", "thriller", "drama"]})
    assert out["status"].tolist() == [why.MATCHED, why.TAKEN, why.NO_MATCH, why.MATCHED]
    assert out["reason"].tolist() == [
        "matches GT ‘comedy’ (GT rank 0)",
        "GT ‘comedy’ already taken by #0",
        "no GT keyword matches (approx)",
        "matches GT ‘drama’ (GT rank 1)",
    ]
    assert out["taken_by"].tolist() == [-1, 0, -1, -1] and out["taken_gt_rank"].tolist() == [-1, 0, -1, -1]


def test_each_model_is_explained_on_its_own():
    # model b's "comedy" is first in its own list: matched, although model a's earlier keyword took comedy in a's list
    _, out = _reasons(["comedy"], {"a": ["dark comedy", "comedy"], "b": ["comedy", "comedy club"]})
    got = {(m, p): s for m, p, s in zip(out["model"], out["position"], out["status"])}
    assert got == {("a", 0): why.MATCHED, ("a", 1): why.TAKEN, ("b", 0): why.MATCHED, ("b", 1): why.TAKEN}
    assert out.loc[(out["model"] == "b") & (out["position"] == 1), "reason"].item() == "GT ‘comedy’ already taken by #0"


def test_the_best_ranked_blocked_gt_keyword_is_named():
    # "war" matches "star war" (rank 0) and "war drama" (rank 1); both taken by earlier keywords
    _, out = _reasons(["star war", "war drama"], {"a": ["war drama", "star war", "war"]})
    assert out["reason"].tolist()[2] == "GT ‘star war’ already taken by #1"


words = st.sampled_from(["war", "star", "star war", "wars", "drama", "war drama", "duel", "duels", "comedy"])


@settings(max_examples=40, deadline=None)
@given(
    gt=st.lists(words, min_size=1, max_size=5, unique=True),
    preds=st.lists(words, max_size=7),
    mode=st.sampled_from(MATCH_MODES),
)
def test_reasons_agree_with_keywords_match(gt, preds, mode):
    ev, out = _reasons(gt, {"a": preds}, mode)
    gt_norm = dict(zip(ev.ground_truth["rank"], ev.ground_truth["norm"]))
    owner = {r: p for p, r in zip(out["position"], out["gt_rank"]) if r >= 0}
    for row in out.to_dict("records"):
        if row["status"] == why.NO_MATCH:
            assert not any(keywords_match(row["norm"], g, mode) for g in gt_norm.values())
        elif row["status"] == why.TAKEN:
            j = row["taken_gt_rank"]
            assert keywords_match(row["norm"], gt_norm[j], mode) and owner[j] == row["taken_by"] < row["position"]
            # every GT keyword it matches is held by an earlier keyword: that is why it is unmatched
            assert all(
                owner.get(r, row["position"]) < row["position"]
                for r, g in gt_norm.items()
                if keywords_match(row["norm"], g, mode)
            )
        else:
            assert row["gt_rank"] >= 0 and keywords_match(row["norm"], gt_norm[row["gt_rank"]], mode)


def test_empty_keywords():
    ev, _ = _reasons(["x"], {"a": ["x"]})
    out = why.match_reasons(ev.keywords.iloc[0:0], ev.ground_truth)
    assert list(out.columns)[-6:] == ["status", "reason", "taken_gt_rank", "taken_by", "category", "detail"]
    assert out.empty


def test_why_reads_the_failure_categories(demo_dataset):
    """The explorer's reasons and `kweval failures` apply one rule: every kept keyword gets the same category."""
    from kweval.explain.failures import failure_table

    ev = evaluate(demo_dataset, EvalOptions(k=3, match="word"))
    table = failure_table(demo_dataset, ev)
    kept = table[(table["side"] == "prediction") & (table["position"] >= 0)]
    expected = dict(zip(zip(kept["review_id"], kept["model"], kept["position"]), kept["category"].astype(str)))
    got = {}
    for movie, rows in ev.keywords.groupby("movie"):
        out = why.match_reasons(rows, ev.ground_truth[ev.ground_truth["movie"] == movie], "word", k=3)
        got.update(zip(zip(out["review_id"], out["model"], out["position"]), out["category"]))
    assert got == expected
    assert {"hit", "hit_beyond_k", "taken", "near_lexical", "off_reference"} <= set(got.values())


def _one_list_at_a_time(keywords, gt, mode, k):
    """The reference of the vectorised `match_reasons`: each review × model list explained by a call of its own."""
    import pandas as pd

    parts = [why.match_reasons(rows, gt, mode, k) for _, rows in keywords.groupby(["review_id", "model"], sort=False)]
    return pd.concat(parts).loc[keywords.index]


@pytest.mark.slow  # every match mode and k over the demo, twice (~10 s)
@settings(max_examples=4, deadline=None)
@given(mode=st.sampled_from(MATCH_MODES), k=st.integers(1, 6))
def test_one_call_for_many_lists_equals_one_call_per_list(demo_dataset, mode, k):
    """Speed: the explorer explains a page's (or a movie's) lists in one call, with the same reasons as one by one."""
    import pandas as pd

    ev = evaluate(demo_dataset, EvalOptions(k=k, match=mode))
    for movie, rows in ev.keywords.groupby("movie"):
        gt = ev.ground_truth[ev.ground_truth["movie"] == movie]
        # every 3rd review's lists (10 reviews × 3 models against the movie's one GT list): the reasons are per list,
        # and the reference's call per list (all 540 of the demo, 4 times) took ~15 s of CPU
        rows = rows[rows["review_id"].isin(rows["review_id"].drop_duplicates().iloc[::3])]
        shuffled = rows.sample(frac=1.0, random_state=0)  # any row order: the answer follows the caller's
        pd.testing.assert_frame_equal(
            why.match_reasons(shuffled, gt, mode, k), _one_list_at_a_time(shuffled, gt, mode, k)
        )


def test_kept_categories_with_distinct_and_shared_lists_equal_one_call_per_group():
    """Groups sharing a GT list share its candidate table; each group still gets its own list's categories."""
    import numpy as np

    from kweval.explain.failure_predictions import kept_categories

    lists = [["star war", "war"], ["comedy", "drama"], ["star war", "war"]]
    norms = [["war", "star war", "wars"], ["dark comedy", "comedy", "war"], ["wars", "war"]]
    ranks = [[1, 0, -1], [0, -1, -1], [-1, 1]]
    group = np.repeat(np.arange(3), [len(n) for n in norms])
    flat = [n for ns in norms for n in ns]
    together = kept_categories(group, flat, np.array([r for rs in ranks for r in rs]), lists, "approx", 2)
    at = 0
    for g in range(3):
        alone = kept_categories(
            np.zeros(len(norms[g]), np.int64), norms[g], np.array(ranks[g]), [lists[g]], "approx", 2
        )
        part = slice(at, at + len(norms[g]))
        for name in ("category", "gt_rank", "holder", "mode", "position"):
            assert getattr(together, name)[part].tolist() == getattr(alone, name).tolist(), (g, name)
        at += len(norms[g])
