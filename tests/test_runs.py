"""Runs compared and gated (kweval.runs.compare, kweval.runs.gate): the numbers are kweval.stats' on the same
per-review tables, refusals are one reason, the gate tells a real drop from noise."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kweval
from kweval import stats
from kweval.runs import (
    RunsError,
    RunSource,
    RunStore,
    RunTables,
    compare_runs,
    evaluation_tables,
    gate,
    record_run,
)
from kweval.stats.families import compared_metrics

SOURCE = RunSource(data="demo", layout="tidy", per_document=False, inputs_sha256="0" * 64)
KEYS = ["precision", "recall", "f1", "w_f1", "ndcg@5", "p@5", "ap@5", "rr"]


@pytest.fixture(scope="module")
def demo():
    dataset = kweval.load_dataset(None)
    full = kweval.evaluate(dataset, kweval.EvalOptions())
    per_model = {m: kweval.evaluate(dataset.subset(models=[m]), kweval.EvalOptions()) for m in ("keybert", "yake")}
    return full, per_model


def record(store, tables, how="macro", protocol="kweval", options=None, name=None):
    options = options if options is not None else {"k": 5, "match": "approx"}
    return record_run(store, tables, SOURCE, protocol=protocol, aggregate=how, options=options, name=name)


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_compare_equals_kweval_stats_on_the_same_tables(tmp_path, demo, how):
    """Two runs of the demo with different models: the comparison is compare_aggregated's (the Compare page's) on
    the per-review tables of both models, B − A, Holm within each family of the metrics Compare compares, whichever
    metrics are asked."""
    full, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    a = record(store, evaluation_tables(per_model["keybert"], how, n_boot=100), how)
    b = record(store, evaluation_tables(per_model["yake"], how, n_boot=100), how)
    assert a.dataset_sha256 == b.dataset_sha256  # the same data: two models, one reference
    comparison = compare_runs(store, a, b, metrics=KEYS)
    compared = compared_metrics(full.metric_names, full.scores)  # the Compare page's metrics and families
    expected = stats.compare_aggregated(full.scores, "keybert", "yake", compared, how).set_index("metric").loc[KEYS]
    every = compare_runs(store, a, b).table.set_index("metric").loc[KEYS]  # all metrics asked: the same p
    np.testing.assert_allclose(every["p_holm"].to_numpy(float), comparison.table["p_holm"].to_numpy(float))
    table = comparison.table.set_index("metric")
    for mine, theirs in (
        ("a", "mean_a"),
        ("b", "mean_b"),
        ("difference", "diff"),
        ("ci_low", "ci_low"),
        ("ci_high", "ci_high"),
        ("p", "p_randomization"),
        ("p_holm", "p_randomization_holm"),
        ("ci_low_holm", "ci_low_holm"),
        ("wins", "wins"),
    ):
        np.testing.assert_allclose(
            table[mine].to_numpy(float), expected[theirs].to_numpy(float), rtol=1e-12, err_msg=mine
        )
    assert (table["difference"] < 0).all()  # yake is worse than keybert on the demo
    assert comparison.model_a == "keybert" and comparison.model_b == "yake" and comparison.options == {}
    # the units that changed most: B − A of the headline metric, worst first, each a real paired unit
    worst = comparison.worst(5)
    assert worst["difference"].is_monotonic_increasing and (worst["difference"] < 0).all()
    both = stats.paired_scores(full.scores, "keybert", "yake", ["f1"], metric="f1")
    assert worst["difference"].iloc[0] == pytest.approx(both["difference"].min())
    assert comparison.n_common == len(both)


def test_refusals_are_one_reason_each(tmp_path, demo):
    _, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    tables = evaluation_tables(per_model["keybert"], "macro", n_boot=50)
    both = evaluation_tables(kweval.evaluate(kweval.load_dataset(None), kweval.EvalOptions()), "macro", n_boot=50)
    base = record(store, tables)
    preset = record(store, tables, protocol="pke")
    other = record(store, replace(tables, dataset_sha256="f" * 64))
    fewer = record(store, replace(tables, metrics=["ndcg@5"]))
    two = record(store, both)
    cases = [
        (preset, {}, "under the kweval protocol and run .* under pke"),
        (other, {}, "different data .* --allow-different-data"),
        (base, {"metrics": ["sem_f1"]}, "has no sem_f1"),
        (two, {"model": "absent"}, "holds no model 'absent'"),
    ]
    for run, kwargs, reason in cases:
        with pytest.raises(RunsError, match=reason) as info:
            compare_runs(store, base, run, **kwargs)
        assert "\n" not in str(info.value)
    with pytest.raises(RunsError, match="which model"):
        compare_runs(store, two, two)
    assert compare_runs(store, base, fewer).table["metric"].tolist() == ["ndcg@5"]  # the metrics both hold
    allowed = compare_runs(store, base, other, allow_different_data=True, metrics=["f1"])
    assert allowed.notes and "units both runs scored" in allowed.notes[0]
    assert compare_runs(store, two, base, model="keybert", metrics=["f1"]).table["difference"].iloc[0] == 0.0


def _noisy(tables: RunTables, seed: int, size: float, share: float) -> RunTables:
    """The same run with `share` of its units moved by ±`size` on every metric (noise, no trend)."""
    rng = np.random.default_rng(seed)
    scores = tables.scores.copy()
    chosen = rng.random(len(scores)) < share
    for metric in tables.metrics:
        step = size * rng.choice([-1.0, 1.0], len(scores))
        scores[metric] = np.clip(scores[metric] + np.where(chosen, step, 0.0), 0.0, 1.0)
    return replace(tables, scores=scores)


def test_the_gate_fails_on_a_real_drop_only(tmp_path, demo):
    _, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    keybert = evaluation_tables(per_model["keybert"], "macro", n_boot=50)
    baseline = record(store, keybert, name="baseline")
    again = record(store, keybert, name="again")
    noisy = record(store, _noisy(keybert, 3, 0.02, 0.3), name="noisy")
    worse = record(store, evaluation_tables(per_model["yake"], "macro", n_boot=50), name="worse")
    metrics = ["f1", "ndcg@5", "w_f1"]

    def verdict(candidate, max_drop=0.0):
        return gate(
            compare_runs(store, baseline, candidate, metrics=metrics, model=f"keybert:{candidate.models[0]}"), max_drop
        )

    failed = verdict(worse)
    assert failed.failed and failed.line.startswith("gate failed:") and "significant" in failed.line
    assert failed.rows.set_index("metric").loc["ndcg@5", "drop"] > 0
    same = verdict(again)
    assert not same.failed and "no gated metric got worse" in same.line
    noise = verdict(noisy)
    assert not noise.failed, noise.line
    assert (noise.rows["p_holm"] > 0.05).all()  # the movement is noise, not a drop
    allowed = verdict(worse, max_drop=0.5)
    assert not allowed.failed and "within the allowed 0.5" in allowed.line
    assert "\n" not in failed.line + same.line + noise.line + allowed.line


def test_a_lower_is_better_metric_drops_when_it_rises(monkeypatch):
    """The drop follows the registry's better direction: a rise of a lower-is-better column is a drop."""
    from kweval.metrics import registry
    from kweval.runs.gate import drops

    real = registry.better
    monkeypatch.setattr(registry, "better", lambda m: registry.LOWER if m == "cost" else real(m))
    table = pd.DataFrame({"metric": ["f1", "cost", "unknown_metric"], "difference": [-0.1, 0.2, 0.3]})
    assert drops(table).tolist() == pytest.approx([0.1, 0.2, -0.3])


def test_export_to_mlflow_logs_params_metrics_and_the_table(tmp_path, demo, monkeypatch):
    """Skipped without the optional extra (`pip install 'kweval[mlflow]'`); MLflow's file store on a temporary
    folder, read back with MLflow's own client."""
    mlflow = pytest.importorskip("mlflow", reason="the mlflow extra is not installed")
    from kweval.runs import log_to_mlflow

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store behind this switch
    _, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    info = record(store, evaluation_tables(per_model["keybert"], "macro", n_boot=50), name="to mlflow")
    uri = (tmp_path / "mlruns").as_uri()
    mlflow_id = log_to_mlflow(info, store.scores(info), store.summary([info.id]), uri, experiment="kweval")
    logged = mlflow.MlflowClient(tracking_uri=uri).get_run(mlflow_id)
    assert logged.data.params["kweval.run_id"] == info.id and logged.data.params["kweval.k"] == "5"
    f1 = store.summary([info.id]).set_index("metric").loc["f1", "value"]
    assert logged.data.metrics["keybert/f1"] == pytest.approx(f1)
    assert logged.data.metrics["keybert/ndcg_at_5"] > 0
    artifact = mlflow.artifacts.download_artifacts(run_id=mlflow_id, tracking_uri=uri, dst_path=str(tmp_path / "a"))
    table = pd.read_parquet(next(Path(artifact).rglob("*.parquet")))
    assert len(table) == info.n_rows and table["run_id"].eq(info.id).all()


def test_export_to_mlflow_without_the_extra_is_one_line(tmp_path, demo, monkeypatch, capsys):
    import sys

    from kweval.cli.dispatch import main

    _, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    record(store, evaluation_tables(per_model["keybert"], "macro", n_boot=50), name="r")
    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if not installed
    assert main(["runs", "export", "r", "--runs", str(store.path), "--mlflow", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "kweval: kweval runs export --mlflow: needs mlflow, which is not installed: pip install 'kweval[mlflow]'"
    ]


def test_names_from_users_cannot_act_on_a_terminal(tmp_path, demo, capsys):
    """A run name with an escape sequence, a newline and a forged `kweval:` line prints as escapes, one line."""
    from kweval.cli.dispatch import main

    _, per_model = demo
    store = RunStore(tmp_path / "runs.sqlite")
    hostile = "evil\x1b[31m|=cmd\n kweval: forged\u202e"
    info = record(store, evaluation_tables(per_model["keybert"], "macro", n_boot=50), name=hostile)
    other = record(store, evaluation_tables(per_model["yake"], "macro", n_boot=50), name="plain")
    for argv in (
        ["runs", "list"],
        ["runs", "show", info.id],
        ["runs", "compare", info.id, other.id],
        ["runs", "gate", "--baseline", other.id, "--candidate", info.id],
    ):
        main([*argv, "--runs", str(store.path)])
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\u202e" not in out and "\n kweval: forged" not in out, argv
        assert "evil\\x1b[31m" in out or argv[1] == "gate", argv  # the gate's line names no run
