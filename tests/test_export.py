"""The TREC export: ranx and pytrec_eval compute kweval's nDCG@k, P@k and (rescaled) AP@k from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io.export import query_id, write_trec

K = 5


def _read_qrels(path):
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def _read_run(path):
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _rank, score, _name = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return run


@pytest.fixture(scope="module", params=["approx", "exact"])
def exported(request, tmp_path_factory):
    evaluation = evaluate(load_dataset(None), EvalOptions(k=K, match=request.param))
    folder = tmp_path_factory.mktemp(f"trec_{request.param}")
    write_trec(evaluation, folder)
    return evaluation, folder


def _expected(evaluation, model):
    scores = evaluation.scores[(evaluation.scores["model"] == model) & (evaluation.scores["n_pred"] > 0)]
    return {query_id(m, r): row for m, r, row in zip(scores["movie"], scores["review_id"], scores.to_dict("records"))}


def test_pytrec_eval_equals_kweval(exported):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluation, folder = exported
    qrels = _read_qrels(folder / "qrels.txt")
    for model in evaluation.models:
        run = _read_run(folder / f"run.{model}.txt")
        got = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut_{K}", f"P_{K}", f"map_cut_{K}"}).evaluate(run)
        expected = _expected(evaluation, model)
        assert expected and set(expected) <= set(got)
        for qid, row in expected.items():
            n_gt = row["n_gt"]
            assert got[qid][f"ndcg_cut_{K}"] == pytest.approx(row[f"ndcg@{K}"], abs=1e-6), qid
            assert got[qid][f"P_{K}"] == pytest.approx(row[f"p@{K}"], abs=1e-12), qid
            assert got[qid][f"map_cut_{K}"] * n_gt / min(K, n_gt) == pytest.approx(row[f"ap@{K}"], abs=1e-9), qid


# ranx's own code run by the interpreter: its numba kernels (no fastmath: the same IEEE arithmetic) compiled on a
# fresh environment cost ~70-90 s of CPU, the largest single item of the suite, for the same numbers
_RANX = """
import json, sys
import ranx
given = json.load(sys.stdin)
scores = {}
for model, (qrels, run) in given["models"].items():
    ranked = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranked, given["metrics"])
    scores[model] = {metric: dict(per_query) for metric, per_query in ranked.scores.items()}
json.dump(scores, sys.stdout)
"""


def _ranx_scores(given: dict, metrics: list[str]) -> dict:
    """Per model of `given` (model → (qrels, run)), ranx's scores (metric → query → value), computed in a child
    process with NUMBA_DISABLE_JIT=1 (ranx's code as written, interpreted)."""
    child = subprocess.run(
        [sys.executable, "-c", _RANX],
        input=json.dumps({"models": given, "metrics": metrics}),
        env=dict(os.environ, NUMBA_DISABLE_JIT="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


@pytest.mark.slow  # ranx in a process of its own per match mode (~10 s)
def test_ranx_equals_kweval(exported):
    pytest.importorskip("ranx")
    evaluation, folder = exported
    all_qrels = _read_qrels(folder / "qrels.txt")
    expected, given = {}, {}
    for model in evaluation.models:
        expected[model] = _expected(evaluation, model)
        run = _read_run(folder / f"run.{model}.txt")
        given[model] = tuple({q: d for q, d in read.items() if q in expected[model]} for read in (all_qrels, run))
    scores = _ranx_scores(given, [f"ndcg@{K}", f"precision@{K}", f"map@{K}"])
    for model in evaluation.models:
        got = scores[model]
        assert expected[model] and set(expected[model]) == set(got[f"ndcg@{K}"])
        for qid, row in expected[model].items():
            n_gt = row["n_gt"]
            assert got[f"ndcg@{K}"][qid] == pytest.approx(row[f"ndcg@{K}"], abs=1e-6), qid
            assert got[f"precision@{K}"][qid] == pytest.approx(row[f"p@{K}"], abs=1e-12), qid
            assert got[f"map@{K}"][qid] * n_gt / min(K, n_gt) == pytest.approx(row[f"ap@{K}"], abs=1e-9), qid


def test_export_ids_have_no_whitespace(exported):
    _, folder = exported
    for path in folder.iterdir():
        for line in path.read_text().splitlines():
            assert len(line.split()) in (4, 6), line
