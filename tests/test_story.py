"""The whole story, plainly (issue 28, items 1-2): the headline names every winner where it wins, with levels and
relative margins, a clearly worse model, the statistics one click away; one p-value per comparison on the Summary,
Compare, the report and the CLI, whatever else is switched on."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.headline_card import MARKS
from kweval.cli import main
from kweval.data.vocabulary import MOVIE_WORDS
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io.report_data import report_data
from kweval.stats.aggregated import compare_aggregated
from kweval.stats.families import family_label, metric_family
from kweval.stats.headline import BEHIND, ELSEWHERE, LEAD, headline, key_metrics, plan
from kweval.stats.story import format_relative, phrase, story_lines
from tests.apptest import run, table
from tests.helpers import DNLP


def _values(**columns: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_the_plan_names_leaders_elsewhere_and_the_clearly_worse():
    values = _values(
        f1=dict(base=0.0088, sentiment=0.0108, reranker=0.0088, metadata=0.0074),
        rr=dict(base=0.609, sentiment=0.518, reranker=0.517, metadata=0.531),
        precision=dict(base=0.31, sentiment=0.39, reranker=0.31, metadata=0.26),
    )
    rows = plan(values, ["f1"], ["f1", "rr", "precision"])
    assert rows == [
        (LEAD, "f1", "sentiment", "base"),
        (ELSEWHERE, "rr", "base", "sentiment"),  # base's win, against the model that leads the key metrics
        (BEHIND, "f1", "sentiment", "metadata"),  # last on every key metric (kept if significant on each)
    ]
    assert plan(values.loc[["base", "sentiment"]], ["f1"], ["f1"]) == [(LEAD, "f1", "sentiment", "base")]


def test_plain_words():
    assert format_relative(0.2229) == "+22%" and format_relative(0.0407) == "+4.1%"
    assert format_relative(0.51, -1.0) == "−51%" and format_relative(float("nan")) == ""
    assert phrase("rr", "Reciprocal rank") == "ranks its first correct keyword highest"
    assert phrase("f1@10", "F1@10") == "finds the most correct keywords in its top 10"
    assert phrase("grounding", "Grounding") == "leads on Grounding"  # a metric registered later reads right too


def test_demo_story_and_one_p_value_everywhere(demo_dataset, tmp_path, capsys, monkeypatch):
    ev = evaluate(demo_dataset, EvalOptions())
    compared = [m for m in ev.metric_names if m != "gt_coverage"]
    top = headline(ev.scores, key_metrics(compared, 5), "macro", MOVIE_WORDS, compared=compared)
    lines = [line["text"] for line in story_lines(top.to_dict("records"))]
    assert lines[0].startswith("keybert finds the most correct keywords: F1 0.041 vs 0.037 for keybert_vader (+10%)")
    assert lines[-1].startswith("yake is clearly behind keybert on every key metric: F1 0.020 vs 0.041 (−51%)")
    f1 = top[(top["kind"] == LEAD) & (top["metric"] == "f1")].iloc[0]
    # Compare (A = the runner-up, B = the best): the same p, level and interval
    row = compare_aggregated(ev.scores, "keybert_vader", "keybert", compared).set_index("metric").loc["f1"]
    assert (row["p_randomization_holm"], row["ci_level_holm"]) == (f1["p_holm"], f1["ci_level"])
    assert (row["ci_low_holm"], row["ci_high_holm"]) == pytest.approx((f1["ci_low"], f1["ci_high"]), abs=1e-15)
    assert f1["family"] == family_label(metric_family("f1")) == "set-based and weighted"
    # the page's Compare table
    at = run(monkeypatch, None, {"movie": "ALL", "a": "keybert_vader"}, "pages/compare.py")
    shown = table(at, "compare_table")
    page = shown[(shown["model"] == "keybert") & (shown["metric"] == "f1")].iloc[0]
    assert page["p_randomization_holm"] == f1["p_holm"] and page["ci_low_holm"] == pytest.approx(f1["ci_low"])
    # the report (its headline and its verdicts) and the CLI
    data = report_data(demo_dataset, evaluate(demo_dataset, EvalOptions(), keywords=True), "macro", {})
    assert data.headline["p_holm"].tolist() == top["p_holm"].tolist()
    assert main(["compare", "--a", "keybert_vader", "--format", "json"]) == 0
    cli = {(r["model"], r["metric"]): r for r in json.loads(capsys.readouterr().out)}
    assert cli[("keybert", "f1")]["p_randomization_holm"] == pytest.approx(f1["p_holm"], abs=1e-15)
    assert main(["compare", "--headline"]) == 0
    said = capsys.readouterr().out
    assert lines[0] in said and "How sure:" in said and f1["sentence"] in said


def test_another_family_switched_on_leaves_a_lexical_p_as_it_was(demo_dataset):
    """Semantic and sentiment metrics are families of their own: F1's p and interval do not move."""
    ev = evaluate(demo_dataset, EvalOptions())
    lexical = [m for m in ev.metric_names if m != "gt_coverage"]
    rng = np.random.default_rng(0)
    more = ev.scores.assign(
        sem_precision=rng.random(len(ev.scores)), sem_recall=rng.random(len(ev.scores)), sas_text=0.5
    )
    more["sem_f1"] = 2 * more["sem_precision"] * more["sem_recall"] / (more["sem_precision"] + more["sem_recall"])
    base = compare_aggregated(ev.scores, "keybert_vader", "keybert", lexical).set_index("metric")
    wider = compare_aggregated(
        more, "keybert_vader", "keybert", [*lexical, "sem_precision", "sem_recall", "sem_f1", "sas_text"]
    ).set_index("metric")
    columns = ["p_randomization_holm", "ci_level_holm", "ci_low_holm", "ci_high_holm"]
    pd.testing.assert_frame_equal(base.loc[lexical, columns], wider.loc[lexical, columns])
    assert set(wider["family"]) == {"set", "ranking", "semantic", "sentiment"}


def test_the_card_leads_with_plain_words_and_keeps_statistics_one_click_away(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL"})
    (expander,) = [e for e in at.expander if e.label.startswith("How sure")]
    plain = next(m.value for m in at.markdown if m.value.startswith(f"- {MARKS[False]} keybert finds"))
    plain = plain.replace("\\", "")
    assert "CI" not in plain and "Holm" not in plain and "(+10%)" in plain
    inside = "\n".join(m.value for m in expander.markdown) + "\n".join(c.value for c in expander.caption)
    assert "CI" in inside and "Holm-corrected within each family of metrics (set-based and weighted" in inside


@pytest.mark.dnlp
def test_dnlp_headline_names_every_winner_with_levels_and_relative_margins(monkeypatch):
    at = run(monkeypatch, DNLP, {"movie": "ALL"})
    card = next(m.value for m in at.markdown if "sentiment finds the most correct keywords" in m.value)
    card = card.replace("\\", "")
    assert "sentiment finds the most correct keywords: F1 0.0108 vs 0.0088 for base (+22%); significant." in card
    assert "base ranks its first correct keyword highest: Reciprocal rank 0.609 vs 0.518 for sentiment (+18%)" in card
    assert "metadata is clearly behind sentiment on every key metric" in card
    at.switch_page("pages/compare.py")
    at.query_params.update({"a": "base"})
    at.run()
    shown = table(at, "compare_table")
    f1 = shown[(shown["model"] == "sentiment") & (shown["metric"] == "f1")].iloc[0]
    rr = shown[(shown["model"] == "sentiment") & (shown["metric"] == "rr")].iloc[0]
    assert f1["diff"] > 0 > rr["diff"] and f1["significant"] and rr["significant"]


@pytest.mark.slow
def test_semantic_matching_on_leaves_f1_s_p_value_as_it_was(capsys, monkeypatch, tmp_path):
    """Real embeddings (all-MiniLM-L6-v2): `kweval compare --semantic` adds the semantic family; F1's p, level and
    interval stay those of the lexical comparison."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "cache"))
    rows = {}
    for extra in ([], ["--semantic"]):
        assert main(["compare", "--format", "json", *extra]) == 0
        rows[bool(extra)] = {(r["model"], r["metric"]): r for r in json.loads(capsys.readouterr().out)}
    assert ("keybert_vader", "sem_f1") in rows[True] and rows[True][("keybert_vader", "sem_f1")]["family"] == "semantic"
    for key, row in rows[False].items():
        for column in ("p_randomization_holm", "ci_level_holm", "ci_low_holm", "ci_high_holm"):
            assert rows[True][key][column] == row[column], (key, column)
