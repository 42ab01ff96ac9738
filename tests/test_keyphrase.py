"""Per-document, unranked ground truth; the docsutf8/keys reader; prediction files; the keyphrase metrics.

Every expected number below is computed by hand in the comments.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kweval.data import detect_layout, load_dataset
from kweval.data.dataset import Dataset
from kweval.data.tidy import read_tidy
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.text.matching import MATCH_MODES
from tests.helpers import SEMEVAL, run_in_process

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`kweval ARGS` in this process (tests.helpers.run_in_process): these tests are about what it says and does."""
    return run_in_process(*args, env_extra={"HF_HUB_OFFLINE": "1"})


def write_collection(root: Path, docs: dict[str, tuple[str, list[str]]], language: str | None = "en") -> Path:
    """A docsutf8/ + keys/ collection: docs[doc_id] = (text, keyphrases)."""
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    for doc, (text, keys) in docs.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("\n".join(keys) + "\n", encoding="utf-8")
    if language:
        (root / "lan.txt").write_text(language + "\n")
    return root


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n", encoding="utf-8"
    )
    return path


# Two documents of one collection, each with its own unranked GT.
# d1: GT [a, b, c, d]; predictions [a, x, b, y, z, c]; text holds a and b (c, d absent)
# d2: GT [e, a];       predictions [a, x, c] (c is d1's GT, not d2's: must not match)
DOCS = {"d1": ("a b q", ["a", "b", "c", "d"]), "d2": ("nothing here e", ["e", "a"])}
PREDS = [
    {"id": "d1", "keyphrases": ["a", "x", "b", "y", "z", "c"], "scores": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]},
    {"doc_id": "d2", "predictions": ["a", "x", "c"]},
]


@pytest.fixture()
def collection(tmp_path: Path) -> tuple[Path, Path]:
    root = write_collection(tmp_path / "Toy", DOCS)
    preds = write_jsonl(tmp_path / "model.jsonl", PREDS)
    return root, preds


def test_collection_layout_is_detected_and_read(collection):
    root, preds = collection
    assert detect_layout(root) == "keyphrase"
    assert detect_layout(root.parent) == "keyphrase"  # a folder of collections
    ds = load_dataset(root, predictions={"m": preds})
    assert ds.movies.to_dict("records") == [{"movie": "Toy", "title": "Toy", "ranked": False, "language": "en"}]
    assert sorted(ds.reviews["review_id"]) == ["d1", "d2"]
    gt = ds.ground_truth
    assert gt[gt["review_id"] == "d2"]["keyword"].tolist() == ["e", "a"]
    assert ds.model_names == ["m"]
    assert ds.predictions[ds.predictions["review_id"] == "d2"]["keyword"].tolist() == ["a", "x", "c"]
    assert ds.predictions[ds.predictions["review_id"] == "d2"]["score"].isna().all()  # scores are optional
    assert ds.problems == []


def test_micro_recall_present_and_absent_are_ratios_of_sums(collection):
    """d1: present a, b both matched (2/2), absent c, d one matched (1/2); d2 ("nothing here e"): present e
    unmatched (0/1), absent a matched (1/1).  Micro: (2+0)/(2+1) and (1+1)/(2+1); macro: means 0.5 and 0.75."""
    root, preds = collection
    ev = evaluate(
        load_dataset(root, predictions={"m": preds}), EvalOptions(k=5, match="exact", keyphrase=True, present=True)
    )
    micro = aggregate(ev, "micro").set_index("movie").loc["Toy"]
    macro = aggregate(ev, "macro").set_index("movie").loc["Toy"]
    assert micro["recall_present"] == pytest.approx(2 / 3) and macro["recall_present"] == pytest.approx(0.5)
    assert micro["recall_absent"] == pytest.approx(2 / 3) and macro["recall_absent"] == pytest.approx(0.75)
    no_text = ev.scores.assign(
        recall_present=np.nan,
        recall_absent=np.nan,
        n_gt_present=0,
        n_gt_absent=0,
        n_matched_present=0.0,
        n_matched_absent=0.0,
    )  # reviews without text define neither
    ev.scores = no_text
    row = aggregate(ev, "micro").set_index("movie").loc["Toy"]
    assert math.isnan(row["recall_present"]) and math.isnan(row["recall_absent"])


def test_keyphrase_metrics_hand_computed(collection):
    root, preds = collection
    ev = evaluate(
        load_dataset(root, predictions={"m": preds}), EvalOptions(k=5, match="exact", keyphrase=True, present=True)
    )
    s = ev.scores.set_index("review_id")
    d1, d2 = s.loc["d1"], s.loc["d2"]
    # d1: matched a@0, b@2, c@5; |P| = 6, |G| = 4
    assert d1["n_gt"] == 4 and d1["n_matched"] == 3
    assert d1["p@5"] == pytest.approx(2 / 5)
    assert d1["r@5"] == pytest.approx(2 / 4)
    assert d1["f1@5"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)  # 0.444444
    assert d1["f1@5_flex"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)  # min(5, 6) = 5: same as hard
    assert d1["f1@M"] == pytest.approx(2 * 0.5 * 0.75 / 1.25)  # P = 3/6, R = 3/4: 0.6
    assert d1["f1@M"] == d1["f1"]
    assert d1["f1@O"] == pytest.approx(0.5)  # top |G| = 4: a, b → P = 2/4, R = 2/4
    assert d1["r_precision"] == pytest.approx(0.5)
    # unranked GT: every gain 1, so w_recall = recall and nDCG is binary: rel [1, 0, 1, 0, 0] vs ideal [1, 1, 1, 1, 0]
    assert d1["w_recall"] == pytest.approx(0.75)
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    assert d1["ndcg@5"] == pytest.approx(dcg / idcg)  # 0.585572
    # present (text "a b q"): a, b present, c, d absent; matched a, b (present) and c (absent)
    assert d1["n_gt_present"] == 2
    assert d1["recall_present"] == pytest.approx(1.0)
    assert d1["recall_absent"] == pytest.approx(0.5)
    assert d1["f1@5_present"] == pytest.approx(2 * 0.4 * 1.0 / 1.4)  # top 5 hit 2 present: P 2/5, R 2/2
    # d2: GT [e, a], predictions [a, x, c]: only a matches (rank 1 of d2's own list); c is another document's GT
    assert d2["n_gt"] == 2 and d2["n_matched"] == 1
    assert d2["f1@5"] == pytest.approx(2 * 0.2 * 0.5 / 0.7)  # 0.285714
    assert d2["f1@5_flex"] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))  # P = 1/min(5, 3): 0.4
    assert d2["f1@M"] == pytest.approx(0.4)
    assert d2["f1@O"] == pytest.approx(0.5)  # top 2: a, x → P = 1/2, R = 1/2
    assert d2["r_precision"] == pytest.approx(0.5)
    assert d2["rr"] == pytest.approx(1.0)
    kw = ev.keywords
    d2_rows = kw[kw["review_id"] == "d2"]
    assert d2_rows["gt_rank"].tolist() == [1, -1, -1]
    assert d2_rows["gt_keyword"].tolist()[0] == "a"
    # text "nothing here e": e present (not matched), a absent and matched
    assert d2["recall_present"] == 0.0 and d2["recall_absent"] == 1.0
    # coverage pools the collection's 6 GT keywords: a, b, c of d1 and a of d2
    assert ev.coverage["gt_coverage"].iloc[0] == pytest.approx(4 / 6)


def test_flexible_cutoff_differs_only_with_fewer_predictions_than_k(collection):
    root, preds = collection
    ev = evaluate(load_dataset(root, predictions={"m": preds}), EvalOptions(k=2, match="exact", keyphrase=True))
    d1 = ev.scores.set_index("review_id").loc["d1"]
    # k = 2: top 2 = a, x → 1 hit; hard = flexible (|P| = 6 ≥ 2): P 1/2, R 1/4
    assert d1["f1@2"] == pytest.approx(d1["f1@2_flex"]) == pytest.approx(2 * 0.5 * 0.25 / 0.75)


def _per_document_as_movies(ds: Dataset) -> Dataset:
    """The same data with each document as its own movie holding a movie-level GT list."""
    gt = ds.ground_truth.assign(movie=ds.ground_truth["review_id"]).drop(columns=["review_id"])
    reviews = ds.reviews.assign(movie=ds.reviews["review_id"])
    predictions = ds.predictions.assign(movie=ds.predictions["review_id"])
    movies = pd.DataFrame({"movie": reviews["movie"], "title": reviews["movie"], "ranked": False})
    return Dataset(movies, reviews, predictions, gt, ds.models)


@pytest.mark.parametrize("match", MATCH_MODES)
def test_per_document_gt_equals_one_movie_per_document(collection, tmp_path, match):
    """The per-document path is the movie-level engine, list by list: same numbers as one movie per document."""
    root, preds = collection
    extra = write_jsonl(
        tmp_path / "other.jsonl",
        [
            {"id": "d1", "keyphrases": ["b q", "A!", "c", "a", "d e"]},
            {"id": "d2", "keyphrases": ["here e", "e", "nothing"]},
        ],
    )
    ds = load_dataset(root, predictions={"m": preds, "o": extra})
    options = EvalOptions(k=3, match=match, keyphrase=True, present=True)
    per_doc = evaluate(ds, options).scores.drop(columns=["movie"]).set_index(["review_id", "model"]).sort_index()
    as_movies = (
        evaluate(_per_document_as_movies(ds), options)
        .scores.drop(columns=["movie"])
        .set_index(["review_id", "model"])
        .sort_index()
    )
    pd.testing.assert_frame_equal(per_doc, as_movies[per_doc.columns])


@pytest.mark.keyphrase
@pytest.mark.parametrize("match", ["exact", "approx"])
def test_semeval_per_document_equals_one_movie_per_document(tmp_path, match):
    docs = sorted((SEMEVAL / "docsutf8").glob("*.txt"))[:60]
    lines = []
    for i, doc in enumerate(docs):
        words = doc.read_text(encoding="utf-8").split()
        lines.append(
            {"id": doc.stem, "keyphrases": [" ".join(words[j : j + 1 + (j + i) % 3]) for j in range(0, 30, 2)]}
        )
    ds = load_dataset(SEMEVAL, predictions={"first": write_jsonl(tmp_path / "p.jsonl", lines)})
    ds = ds.subset(models=["first"])
    assert len(ds.reviews) == 493 and len(ds.ground_truth) > 8000
    options = EvalOptions(k=5, match=match, keyphrase=True, present=True, missing="skip")
    per_doc = evaluate(ds, options).scores.drop(columns=["movie"]).set_index(["review_id", "model"]).sort_index()
    assert len(per_doc) == 60  # documents without predictions are skipped under missing="skip", not scored
    flat = _per_document_as_movies(ds)
    as_movies = evaluate(flat.subset(movies=[d.stem for d in docs]), options).scores
    as_movies = as_movies.drop(columns=["movie"]).set_index(["review_id", "model"]).sort_index()
    pd.testing.assert_frame_equal(per_doc, as_movies[per_doc.columns])
    assert per_doc["f1@5"].mean() > 0.0


def test_movie_gt_is_the_fallback_for_reviews_without_their_own(tmp_path):
    """Tidy GT mixing a movie's list and one review's own list: r1 uses its own, r2 the movie's."""
    folder = tmp_path / "tidy"
    folder.mkdir()
    pd.DataFrame(
        {
            "movie": "m",
            "review_id": ["r1", "r1", "r2", "r2"],
            "model": "x",
            "rank": [0, 1, 0, 1],
            "keyword": ["own", "war", "own", "war"],
            "score": 0.5,
        }
    ).to_csv(folder / "predictions.csv", index=False)
    pd.DataFrame(
        {"movie": "m", "rank": [0, 1, 0], "keyword": ["war", "peace", "own"], "review_id": [None, None, "r1"]}
    ).to_csv(folder / "ground_truth.csv", index=False)
    ev = evaluate(read_tidy(folder), EvalOptions(match="exact"))
    s = ev.scores.set_index("review_id")
    assert s.loc["r1", "n_gt"] == 1 and s.loc["r1", "n_matched"] == 1  # own list [own]
    assert s.loc["r2", "n_gt"] == 2 and s.loc["r2", "n_matched"] == 1  # movie list [war, peace]
    kw = ev.keywords.set_index(["review_id", "keyword"])
    assert kw.loc[("r2", "war"), "gt_rank"] == 0 and kw.loc[("r1", "war"), "gt_rank"] == -1


def test_unranked_inferred_from_equal_ranks_makes_binary_relevance(tmp_path):
    folder = tmp_path / "tidy"
    folder.mkdir()
    pd.DataFrame(
        {"movie": "m", "review_id": "r", "model": "x", "rank": [0, 1], "keyword": ["c", "a"], "score": 1.0}
    ).to_csv(folder / "predictions.csv", index=False)
    gt = pd.DataFrame({"movie": "m", "rank": [3, 3, 3], "keyword": ["a", "b", "c"]})
    gt.to_csv(folder / "ground_truth.csv", index=False)
    ds = read_tidy(folder)
    assert ds.movies["ranked"].tolist() == [False]
    s = evaluate(ds, EvalOptions(k=5, match="exact")).scores.iloc[0]
    # binary: rel [1, 1] vs ideal [1, 1, 1]
    assert s["ndcg@5"] == pytest.approx((1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4)))
    assert s["w_recall"] == pytest.approx(2 / 3)
    # the same GT with distinct ranks is graded: c (rank 2) at position 0, a (rank 0) at position 1
    gt.assign(rank=[0, 1, 2]).to_csv(folder / "ground_truth.csv", index=False)
    ranked = evaluate(read_tidy(folder), EvalOptions(k=5, match="exact")).scores.iloc[0]
    assert ranked["ndcg@5"] < s["ndcg@5"]
    # an explicit `ranked` column in movies wins over the inference
    pd.DataFrame({"movie": ["m"], "ranked": [False]}).to_csv(folder / "movies.csv", index=False)
    assert evaluate(read_tidy(folder), EvalOptions(k=5, match="exact")).scores.iloc[0]["ndcg@5"] == pytest.approx(
        s["ndcg@5"]
    )


def test_bad_jsonl_lines_are_named_and_the_rest_read(collection, tmp_path):
    root, _ = collection
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            "{not json",
            "[1, 2]",
            {"keyphrases": ["a"]},
            {"id": "d1", "keyphrases": "a"},
            {"id": "d1", "keyphrases": ["a", "b"], "scores": [1.0]},
            {"id": "d1", "keyphrases": ["q"]},
            {"id": "zz", "keyphrases": ["a"]},
            {"id": "d2", "keyphrases": []},
        ],
    )
    ds = load_dataset(root, predictions={"m": path})
    reasons = [str(p) for p in ds.problems]
    assert any("line 1" in r and "not JSON" in r for r in reasons)
    assert any("line 2" in r and "not a JSON object" in r for r in reasons)
    assert any("line 3" in r and "no document id" in r for r in reasons)
    assert any("line 4" in r and "not a list" in r for r in reasons)
    assert any("line 5" in r and "scores ignored" in r for r in reasons)
    assert any("line 6" in r and "first line wins" in r for r in reasons)
    assert any("zz" in r and "not in the dataset" in r for r in reasons)
    ev = evaluate(ds, EvalOptions(match="exact", keyphrase=True))
    s = ev.scores.set_index("review_id")
    assert s.loc["d1", "n_matched"] == 2  # line 5 kept, without its scores
    assert s.loc["d2", "n_pred"] == 0 and s.loc["d2", "f1@5"] == 0.0  # an empty list is a real, empty prediction


def test_cli_evaluates_a_collection_with_predictions_and_converts_it(collection, tmp_path):
    root, preds = collection
    bad = write_jsonl(tmp_path / "bad.jsonl", ["oops", {"id": "d1", "keyphrases": ["a"]}])
    out = run_cli(
        "evaluate",
        str(root),
        "--predictions",
        f"m={preds}",
        "--predictions",
        f"b={bad}",
        "--match",
        "exact",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert f"kweval: {bad}: line 1: not JSON (Expecting value: line 1 column 1 (char 0)); skipped" in lines
    assert all(line.startswith("kweval: ") for line in lines)
    rows = (
        pd.DataFrame(json.loads(out.stdout)["rows"])
        if out.stdout.lstrip().startswith("{")
        else pd.read_json(out.stdout)
    )
    assert {
        "f1@5",
        "f1@5_flex",
        "f1@M",
        "f1@O",
        "r_precision",
        "recall_present",
        "f1@5_present",
        "recall_absent",
    } <= set(rows.columns)
    dst = tmp_path / "tidy"
    conv = run_cli("convert", str(root), str(dst), "--predictions", f"m={preds}")
    assert conv.returncode == 0, conv.stderr
    again = evaluate(load_dataset(dst), EvalOptions(match="exact", keyphrase=True, present=True))
    first = evaluate(
        load_dataset(root, predictions={"m": preds}), EvalOptions(match="exact", keyphrase=True, present=True)
    )
    pd.testing.assert_frame_equal(aggregate(again), aggregate(first))


def test_cli_predictions_usage_errors(collection):
    root, preds = collection
    out = run_cli("evaluate", str(root), "--predictions", "nopath")
    assert out.returncode == 2 and "NAME=PATH" in out.stderr and "Traceback" not in out.stderr
    missing = run_cli("evaluate", str(root), "--predictions", "m=/nonexistent/x.jsonl")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "kweval: /nonexistent/x.jsonl: no such file" in missing.stderr


def test_tidy_predictions_file_for_a_model(collection, tmp_path):
    root, _ = collection
    table = tmp_path / "preds.csv"
    pd.DataFrame({"doc_id": ["d1", "d1", "d2"], "keyword": ["b", "a", "e"], "score": [0.2, 0.1, 0.3]}).to_csv(
        table, index=False
    )
    ds = load_dataset(root, predictions={"t": table})
    ev = evaluate(ds, EvalOptions(match="exact", keyphrase=True))
    s = ev.scores.set_index("review_id")
    assert s.loc["d1", "n_matched"] == 2 and s.loc["d2", "n_matched"] == 1
    assert ev.keywords[ev.keywords["review_id"] == "d1"]["keyword"].tolist() == ["b", "a"]  # file order is the ranking


def test_movie_level_data_keeps_its_columns_unless_asked():
    ev = evaluate(load_dataset(None))
    assert "f1@5" not in ev.scores and "recall_present" not in ev.scores
    assert ev.ground_truth["review_id"].isna().all()
    with_present = evaluate(load_dataset(None), EvalOptions(present=True, keyphrase=True))
    s = with_present.scores
    # movie-level GT: the present set is per review, so present + absent GT = |G| and recall splits accordingly
    assert (s["n_gt_present"] <= s["n_gt"]).all() and (s["n_gt_present"] > 0).any()
    n_absent = s["n_gt"] - s["n_gt_present"]
    parts = s["recall_present"].fillna(0) * s["n_gt_present"] + s["recall_absent"].fillna(0) * n_absent
    np.testing.assert_allclose(parts.to_numpy(), s["n_matched"].to_numpy(), atol=1e-9)
    # undefined is not zero: no value where the review has no present (absent) GT keyword, and only there
    assert (s["recall_present"].isna() == (s["n_gt_present"] == 0)).all() and s["recall_present"].isna().any()
    assert (s["f1@5_present"].isna() == (s["n_gt_present"] == 0)).all()
    assert (s["recall_absent"].isna() == (n_absent == 0)).all()


@pytest.mark.parametrize("semantic", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_semantic_and_sentiment_use_each_documents_own_gt(collection, semantic):
    root, preds = collection
    ds = load_dataset(root, predictions={"m": preds})
    options = EvalOptions(k=3, match="exact", sentiment=True, semantic=semantic)
    per_doc = evaluate(ds, options).scores.drop(columns=["movie"]).set_index(["review_id", "model"]).sort_index()
    as_movies = (
        evaluate(_per_document_as_movies(ds), options)
        .scores.drop(columns=["movie"])
        .set_index(["review_id", "model"])
        .sort_index()
    )
    cols = ["sas_keywords", "sas_text"] + (["sem_precision", "sem_recall", "sem_n_gt"] if semantic else [])
    pd.testing.assert_frame_equal(per_doc[cols], as_movies[cols])
    if semantic:
        assert per_doc.loc[("d1", "m"), "sem_n_gt"] == 4 and per_doc.loc[("d2", "m"), "sem_n_gt"] == 2


def test_synth_per_document_gt(tmp_path):
    from kweval.data.synth import synthesize, write_synthetic

    movie_level = synthesize(2, 300, 3, seed=1)
    per_doc = synthesize(2, 300, 3, seed=1, gt="per-document")
    pd.testing.assert_frame_equal(per_doc.predictions, movie_level.predictions)  # only the GT differs
    gt = per_doc.ground_truth
    assert gt["review_id"].notna().all() and (gt["rank"] == 0).all()
    sizes = gt.groupby("review_id").size()
    assert len(sizes) == 600 and sizes.between(3, 8).all()
    written = write_synthetic(per_doc, tmp_path / "s")
    assert written
    ds = load_dataset(tmp_path / "s")
    assert ds.movies["ranked"].tolist() == [False, False]
    ev = evaluate(ds, EvalOptions(keyphrase=True))
    assert (ev.scores["n_gt"] == ev.scores["review_id"].map(sizes)).all()
    assert 0.05 < ev.scores["f1@5"].mean() < 0.9  # the first model finds some of each document's keywords
    out = run_cli("synth", str(tmp_path / "x"), "--gt", "per-document", "--layout", "dnlp")
    assert out.returncode == 2 and "needs --layout tidy" in out.stderr


@pytest.mark.parametrize("k", [1, 5, 10, 50])
def test_every_keyphrase_metric_is_in_the_registry(k):
    from kweval.metrics import registry

    for name in EvalOptions(k=k, keyphrase=True, present=True).keyphrase_metrics():
        entry = registry.info(name)
        assert entry is not None and entry.group == "keyphrase" and entry.name == name, name
        assert entry.better == registry.HIGHER
    assert registry.info(f"f1@{k}_flex").label == f"F1@{k} (flexible)"
    assert f"/ min({k}, |P|)" in registry.info(f"f1@{k}_flex").definition
    assert f"first {k} / {k}" in registry.info(f"f1@{k}").definition


def test_dashboard_on_per_document_gt(monkeypatch, collection, tmp_path):
    """Sidebar says Collection/Document, Summary shows the keyphrase metrics, the explorer lists the document's own GT
    with present ones marked."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest import RUN_TIMEOUT

    root, preds = collection
    data = tmp_path / "tidy"
    assert run_cli("convert", str(root), str(data), "--predictions", f"m={preds}").returncode == 0
    monkeypatch.setenv("KWEVAL_DATA", str(data))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=RUN_TIMEOUT)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.sidebar.selectbox[0].label == "Collection"
    assert any("2 document(s)" in c.value for c in at.sidebar.caption)
    at.switch_page("pages/summary.py").run()
    assert not at.exception, [e.message for e in at.exception]
    shown = {c for df in at.dataframe for c in df.value.columns}
    assert {"f1@5", "f1@5_flex", "f1@M", "f1@O", "r_precision", "recall_present", "recall_absent"} <= shown
    at.query_params["review"] = "d1"
    at.query_params["movie"] = "Toy"
    at.switch_page("pages/explorer.py").run()
    assert not at.exception, [e.message for e in at.exception]
    body = " ".join(h.proto.body for h in at.html)
    assert "Own ground truth (4; ● in the text, ○ absent):</b> ● a · ● b · ○ c · ○ d" in body
    at.sidebar.toggle(key="sel_present").set_value(False).run()  # the split is a toggle
    at.switch_page("pages/summary.py").run()
    shown = {c for df in at.dataframe for c in df.value.columns}
    assert "f1@5" in shown and "recall_present" not in shown


def test_documents_without_keys_are_named_and_not_scored(tmp_path):
    root = write_collection(tmp_path / "C", DOCS)
    (root / "docsutf8" / "d3.txt").write_text("a lone document", encoding="utf-8")  # no d3.key
    (root / "keys" / "d9.key").write_text("orphan\n", encoding="utf-8")  # no d9.txt
    preds = write_jsonl(tmp_path / "p.jsonl", PREDS + [{"id": "d3", "keyphrases": ["a"]}])
    ds = load_dataset(root, predictions={"m": preds})
    reasons = [str(p) for p in ds.problems]
    assert any("1 document(s) without a .key file (d3)" in r for r in reasons)
    assert any("1 key file(s) without a document in docsutf8/ (d9); not read" in r for r in reasons)
    assert "d9" not in set(ds.ground_truth["review_id"])  # what the line says: its keyphrases are not read
    ev = evaluate(ds, EvalOptions(match="exact"))
    assert sorted(ev.scores["review_id"]) == ["d1", "d2"]
    assert "d3" not in set(ev.skipped["review_id"])  # not "no output from the model": it has no GT
    assert any("1 review(s) without their own ground truth are skipped" in str(p) for p in ev.problems)


@pytest.mark.parametrize("mode", MATCH_MODES)
def test_keywords_match_pairs_is_keywords_match(mode):
    from kweval.text.matching import keywords_match, keywords_match_pairs

    words = [
        "war",
        "star war",
        "star wars",
        "wars",
        "a",
        "star",
        "lightsaber duels",
        "lightsaber duel",
        "return jedi",
        "jedi",
        "x",
    ]
    preds = [p for p in words for _ in words]
    gts = [g for _ in words for g in words]
    expected = [keywords_match(p, g, mode) for p, g in zip(preds, gts)]
    assert keywords_match_pairs(preds, gts, mode).tolist() == expected
    assert any(expected) and not all(expected)


@pytest.mark.slow
def test_keybert_embeds_each_candidate_once_through_the_store_with_keybert_own_results(tmp_path, monkeypatch):
    """Same keyphrases and scores as KeyBERT with its own encoder; a rerun reads every vector from the store."""
    pytest.importorskip("keybert")
    from keybert import KeyBERT

    from kweval.embeddings import semantic
    from kweval.keyphrase.extract import keybert_lists, ordered

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    texts = [
        "Graph neural networks learn molecular properties from atom graphs.",
        "Neural networks for protein folding use attention over residues.",
        "Molecular dynamics simulations of protein folding.",
    ]
    encoded: list[int] = []
    real_encoder = semantic.load_encoder

    def counting_encoder(*args, **kwargs):
        encode = real_encoder(*args, **kwargs)
        return lambda batch: (encoded.append(len(batch)), encode(batch))[1]

    monkeypatch.setattr(semantic, "load_encoder", counting_encoder)
    ours = list(keybert_lists(texts, 5, batch=2))
    own = KeyBERT(model=semantic.load_model("all-MiniLM-L6-v2", device="cpu"))
    theirs = own.extract_keywords(texts, top_n=5, keyphrase_ngram_range=(1, 3), stop_words="english")
    for mine, reference in zip(ours, theirs):
        assert [k for k, _ in mine] == [k for k, _ in ordered(reference)[:5]]
        assert [s for _, s in mine] == pytest.approx([s for _, s in ordered(reference)[:5]], abs=1e-4)
    first = sum(encoded)
    candidates = {
        c
        for t in texts
        for c in own.extract_keywords(t, top_n=1000, keyphrase_ngram_range=(1, 3), stop_words="english")
    }
    assert first <= len(candidates) + len(texts)  # each distinct string once, across the two batches
    encoded.clear()
    assert list(keybert_lists(texts, 5, batch=2)) == ours and sum(encoded) == 0  # all from the store


def test_tidy_key_cells_become_str_or_none_and_unranked_lists_are_found():
    """The vectorised readers keep their rules: NA/empty/non-text -> None; a movie is unranked when each list has one
    rank."""
    from kweval.data.columns import as_str
    from kweval.data.tidy_tables import unranked_movies

    for dtype in ("string", "string[pyarrow]", "string[python]"):  # the readers pass key columns as strings
        cells = as_str(pd.Series(["a", "", None, math.nan, 3, "b"], dtype=object, index=range(5, 11)).astype(dtype))
        assert cells.dtype == object and cells.tolist() == ["a", None, None, None, "3", "b"]
        assert all(c is None or type(c) is str for c in cells) and list(cells.index) == list(range(5, 11))
    gt = pd.DataFrame(
        {
            "movie": ["a", "a", "a", "b", "b", "c", "c"],
            "review_id": [None, None, "r1", "x", "x", None, None],
            "rank": [0, 1, 0, 2, 2, math.nan, math.nan],
        }
    )
    assert unranked_movies(gt) == {"b", "c"}  # a's movie-level list has two ranks
