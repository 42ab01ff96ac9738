"""Diversity (docs/metrics.md §12): dup_token_ratio and self_similarity equal a direct reading of KPEval's
metrics/diversity_metric.py on the same tokens and embeddings, to 1e-9.

`kpeval_reading` below is written from KPEval's definitions, not from kweval's
code: per list, the stemmed tokens of every phrase pooled,
``1 - len(set(tokens)) / len(tokens)`` (1 when there is no token), and the
mean of the upper triangle of the pairwise cosine matrix of the phrases'
embeddings (0 for none, 1 for one).
"""

from __future__ import annotations

import numpy as np
import pytest

from kweval.beyond import diversity
from kweval.embeddings import semantic
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.text.normalize import normalize_many, stem_tokens


def kpeval_reading(token_lists: list[list[str]], embeddings: np.ndarray) -> tuple[float, float]:
    """KPEval's score_corpus for one document: (dup_token_ratio, self_embed_similarity)."""
    stemmed_pred_token_list = [y for x in token_lists for y in x]
    if len(token_lists) == 0 or len(stemmed_pred_token_list) == 0:
        return 1.0, 0.0
    dup = 1 - (len(set(stemmed_pred_token_list)) / len(stemmed_pred_token_list))
    n_kps = len(embeddings)
    if n_kps == 1:
        return dup, 1.0
    embs = np.asarray(embeddings, dtype=np.float64)
    normed = embs / np.sqrt((embs**2).sum(axis=1))[:, None]  # sklearn's cosine_similarity
    similarities = normed @ normed.T
    return dup, float(np.mean(similarities[np.triu_indices(n_kps, k=1)]))


def test_the_fast_forms_equal_the_plain_definitions():
    rng = np.random.default_rng(7)
    group = np.sort(rng.integers(0, 60, 400))  # groups 60 and 61 (and any the draw missed) are empty
    vectors = rng.normal(size=(400, 24)).astype(np.float32)
    tokens = [tuple(rng.choice(list("abcdefghij"), rng.integers(1, 4))) for _ in range(400)]  # a phrase has a word
    fast = diversity.list_diversity(group, tokens, vectors, 62)
    for g in range(62):
        rows = np.flatnonzero(group == g)
        if not len(rows):  # undefined without a phrase
            assert np.isnan(fast["dup_token_ratio"][g]) and np.isnan(fast["self_similarity"][g])
            continue
        dup, sim = kpeval_reading([list(tokens[i]) for i in rows], vectors[rows])
        assert fast["dup_token_ratio"][g] == pytest.approx(diversity.dup_token_ratio([tokens[i] for i in rows]), abs=0)
        assert abs(fast["dup_token_ratio"][g] - dup) <= 1e-12
        assert abs(fast["self_similarity"][g] - sim) <= 1e-9
        assert abs(diversity.self_similarity(vectors[rows]) - sim) <= 1e-12


def test_the_size_buckets_cross_blocks_and_read_groups_in_any_order():
    """`bucketed_unit_sums` stacks the groups of one size in blocks of `SUM_BLOCK_ROWS` rows: sizes that fill
    several blocks, a group larger than a block, rows of a group not next to each other and a repeated vector."""
    rng = np.random.default_rng(11)
    sizes = [3] * 200 + [2] * 5 + [diversity.SUM_BLOCK_ROWS + 7, 1]  # 600 rows of size-3 groups: several blocks
    group = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))  # each group's rows scattered
    vectors = rng.normal(size=(50, 16)).astype(np.float32)
    index = rng.integers(0, 50, len(group))  # rows share vectors, as repeated phrases do
    fast = diversity.pair_mean_cosine(group, vectors, len(sizes) + 1, index)  # the last group has no row
    for g in range(len(sizes)):
        assert abs(fast[g] - diversity.self_similarity(vectors[index[group == g]])) <= 1e-12
    assert fast[-1] == diversity.EMPTY_SIMILARITY
    total, nonzero = diversity.bucketed_unit_sums(group, vectors, len(sizes) + 1, index)
    unit = vectors.astype(np.float64) / np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    for g in (0, 150, 203, 205):
        assert np.abs(total[g] - unit[index[group == g]].sum(axis=0)).max() <= 1e-12
    assert nonzero.tolist() == [*sizes, 0]
    total, nonzero = diversity.bucketed_unit_sums(np.array([0, 0]), np.array([[0.0, 0.0], [3.0, 4.0]]), 1)
    assert total[0] == pytest.approx([0.6, 0.8], abs=1e-15) and nonzero.tolist() == [1.0]  # a zero row adds nothing


def test_the_edge_cases_are_kpevals():
    assert diversity.dup_token_ratio([]) == 1.0 and diversity.self_similarity(np.zeros((0, 3))) == 0.0
    assert diversity.self_similarity(np.ones((1, 3))) == 1.0
    assert diversity.dup_token_ratio([("a", "b"), ("a",)]) == pytest.approx(1 - 2 / 3)
    same = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0]])
    assert diversity.self_similarity(same) == pytest.approx(1.0)


def test_the_pipeline_columns_equal_kpevals_reading_of_the_same_embeddings(demo_dataset):
    ev = evaluate(demo_dataset, EvalOptions(diversity=True))
    pred = demo_dataset.predictions.sort_values(["movie", "review_id", "model", "rank"], kind="stable")
    lists = {
        key: [k for k in rows["keyword"] if isinstance(k, str)]
        for key, rows in pred.groupby(["movie", "review_id", "model"])
    }
    checked = 0
    for row in ev.scores.itertuples(index=False):
        norms = [n for n in normalize_many(lists.get((row.movie, row.review_id, row.model), [])) if n]
        if not norms:
            assert np.isnan(row.dup_token_ratio) and np.isnan(row.self_similarity)
            continue
        vectors = semantic.embed_texts(norms) if norms else np.zeros((0, 384), np.float32)
        dup, sim = kpeval_reading([list(stem_tokens(n)) for n in norms], vectors)
        assert abs(row.dup_token_ratio - dup) <= 1e-9 and abs(row.self_similarity - sim) <= 1e-9
        checked += 1
    assert checked > 500


def test_a_list_without_predictions_is_undefined_not_repetitive():
    found = diversity.lists_diversity([[], ["—", ""], ["a b"]], lambda texts: np.ones((len(texts), 4), np.float32))
    assert np.isnan(found["dup_token_ratio"][:2]).all() and np.isnan(found["self_similarity"][:2]).all()
    assert found["dup_token_ratio"][2] == 0.0 and found["self_similarity"][2] == 1.0


def test_repeats_count_before_deduplication(demo_dataset, tmp_path):
    import json

    from kweval.data import load_dataset

    path = tmp_path / "rep.jsonl"
    path.write_text(json.dumps({"id": "m1-r01", "keyphrases": ["heist movie", "heist movie", "Heist  Movie!"]}) + "\n")
    ds = load_dataset(None, predictions={"rep": path}).subset(models=["rep"])
    ev = evaluate(ds, EvalOptions(diversity=True))
    (row,) = ev.scores.to_dict("records")
    assert row["n_pred"] == 1  # the metrics see one prediction after cleaning
    assert row["dup_token_ratio"] == pytest.approx(1 - 2 / 6)  # diversity sees the three as given
    assert row["self_similarity"] == pytest.approx(1.0, abs=1e-6)


def test_stem_codes_number_tokens_as_token_codes_of_the_stems():
    """`stem_codes` (one split, each distinct word stemmed once) codes tokens equal exactly when their stems are:
    the same partition of the tokens as `token_codes` of each phrase's `stem_tokens`, so the same dup ratios."""
    phrases = normalize_many(["running runs", "the runner ran", "run", "graph graphs graphical", "ran ran"])
    counts, codes = diversity.stem_codes(phrases)
    plain_counts, plain_codes = diversity.token_codes([stem_tokens(p) for p in phrases])
    assert counts.tolist() == plain_counts.tolist() == [2, 3, 1, 3, 2]
    pairs = set(zip(codes.tolist(), plain_codes.tolist()))
    assert len(pairs) == len(set(codes.tolist())) == len(set(plain_codes.tolist()))  # a bijection of codes
    group = np.array([0, 0, 1, 2, 2])
    assert diversity.token_dup_ratios(group, (counts, codes), 3).tolist() == pytest.approx(
        diversity.token_dup_ratios(group, (plain_counts, plain_codes), 3).tolist()
    )
