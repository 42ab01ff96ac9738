"""kweval.io.report's paper-ready LaTeX: booktabs, column choice, CIs, best bold, caption, file names."""

from __future__ import annotations

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import report

META = {"data": "../shared/data/dnlp/Dataset", "k": 5, "match": "approx", "aggregate": "macro"}


@pytest.fixture(scope="module")
def summary():
    return aggregate(evaluate(load_dataset(None), EvalOptions(k=5)), "macro")


def _body(tex: str) -> list[str]:
    lines = tex.splitlines()
    return lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]


def test_booktabs_labels_caption_and_bold_best(summary):
    tex = report.to_latex(summary, caption=report.latex_caption(META))
    assert "\\toprule" in tex and "\\bottomrule" in tex and "\\hline" not in tex and "booktabs" in tex
    assert "\\caption{Keyword extraction on Dataset (k = 5, approx matching, macro average over reviews)." in tex
    assert "movie & model & Precision & Recall & F1 & Weighted precision" in tex and "nDCG@5" in tex
    rows = [r for r in _body(tex) if r != "\\midrule"]
    assert len(rows) == len(summary)
    # per movie and column the highest value is bold
    ndcg_col = 2 + report.metric_columns(summary).index("ndcg@5")
    for _movie, grp in summary.reset_index(drop=True).groupby("movie", sort=False):
        best = grp["ndcg@5"].idxmax()
        cell = rows[best].rstrip(" \\").split(" & ")[ndcg_col]
        assert cell == f"\\textbf{{{summary['ndcg@5'].iloc[best]:.3f}}}"


def test_column_choice_and_confidence_intervals(summary):
    movie, model = summary["movie"].iloc[0], summary["model"].iloc[0]
    ci = pd.DataFrame({"movie": [movie], "model": [model], "metric": ["f1"], "ci_low": [0.58], "ci_high": [0.64]})
    tex = report.to_latex(summary, columns=["ndcg@5", "f1"], ci=ci, bold_best=False)
    assert "movie & model & nDCG@5 & F1 \\\\" in tex and "\\begin{tabular}{llrr}" in tex
    first = _body(tex)[0]
    assert first.endswith(f"{summary['f1'].iloc[0]:.3f} [0.580, 0.640] \\\\")
    pm = report.to_latex(summary, columns=["f1"], ci=ci, ci_style="pm", bold_best=False)
    assert _body(pm)[0].endswith(f"{summary['f1'].iloc[0]:.3f} $\\pm$ 0.030 \\\\")
    with pytest.raises(ValueError):
        report.to_latex(summary, ci_style="stars")


def test_user_strings_are_escaped():
    table = pd.DataFrame({"movie": ["a_&%$#{}~^\\"], "model": ["m"], "n_reviews": [1], "n_skipped": [0], "f1": [0.5]})
    tex = report.to_latex(table, caption=report.latex_caption({"data": "x_y%"}))
    assert "a\\_\\&\\%\\$\\#\\{\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{}" in tex
    assert "Keyword extraction on x\\_y\\%." in tex


def test_lower_is_better_and_neither_columns_in_bold_marks():
    table = pd.DataFrame(
        {"movie": ["m", "m"], "model": ["a", "b"], "p_randomization": [0.2, 0.01], "diff": [0.1, 0.3], "f1": [0.1, 0.3]}
    )
    best = report.best_rows(table)
    assert best["p_randomization"] == {1} and best["f1"] == {1} and "diff" not in best


def test_download_names_say_dataset_k_match_and_aggregation():
    assert report.download_name("summary", META, "tex") == "kweval_summary_Dataset_k5_approx_macro.tex"
    assert (
        report.download_name("summary", {"data": None, "k": 20, "match": "stem", "aggregate": "micro"}, ".csv")
        == "kweval_summary_demo_k20_stem_micro.csv"
    )
    assert "/" not in report.download_name("x", {"data": "../a b/c;d"}, "md")


def test_cli_latex_has_the_caption():
    import contextlib
    import io

    from kweval.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert (
            main(["evaluate", "--quiet", "--format", "latex", "--k", "3", "--match", "word", "--aggregate", "micro"])
            == 0
        )
    caption = "(k = 3, word matching, micro average over reviews, semantic matching off, sentiment off)"  # issue 23
    assert caption in out.getvalue() and "\\toprule" in out.getvalue()


def test_summary_intervals_bracket_every_value(summary):
    ev = evaluate(load_dataset(None), EvalOptions(k=5))
    ci = report.summary_intervals(ev.scores, ["f1", "ndcg@5"], "macro", n_boot=200)
    merged = summary.melt(id_vars=["movie", "model"], value_vars=["f1", "ndcg@5"], var_name="metric").merge(
        ci, on=["movie", "model", "metric"]
    )
    assert len(merged) == 2 * len(summary)  # every movie × model row and every ALL row
    assert ((merged["ci_low"] <= merged["value"] + 1e-12) & (merged["value"] <= merged["ci_high"] + 1e-12)).all()
    tex = report.to_latex(summary, columns=["f1"], ci=ci)
    assert all(" [" in row for row in _body(tex) if row != "\\midrule")


def test_cli_latex_columns_and_ci():
    import contextlib
    import io

    from kweval.cli import build_parser, main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "--quiet", "--format", "latex", "--columns", "ndcg@5,f1", "--ci", "pm"]) == 0
    tex = out.getvalue()
    assert "movie & model & nDCG@5 & F1 \\\\" in tex
    rows = [r for r in _body(tex) if r != "\\midrule"]
    assert rows and all(r.count("$\\pm$") == 2 for r in rows)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["evaluate", "--quiet", "--format", "latex", "--columns", "ndcg@5,nosuch"]) == 2
    assert "unknown metric(s) nosuch" in err.getvalue()
    for style in report.CI_STYLES:  # the CLI offers every style report knows
        assert build_parser().parse_args(["evaluate", "--ci", style]).ci == style


def test_protocol_card_caption_and_header_are_escaped_once():
    # kweval.io.card imported report's former private escapers (an ImportError on --format latex/markdown of a protocol
    # run)
    from kweval.io import card

    c = {"preset": "pke", "match": "exact_stem", "k": 5}
    caption = card.card_latex_caption(c)
    tex = report.to_latex(pd.DataFrame({"movie": ["d"], "model": ["m"], "f1": [0.5]}), caption=caption)
    assert "\\caption{Protocol: " in tex and "exact\\_stem" in tex and "\\textbackslash{}" not in tex
    assert "exact\\_stem" in card.card_markdown(c)
