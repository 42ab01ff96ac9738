"""What the pages derive from an evaluation, cached: the Summary's CIs, slices and downloads, Compare's tests,
the Notebook parity replay.

Each public function takes the page's `Ctx` and builds the cache key from it (`Ctx.key`: the data's content
hash and the evaluation options), so no page makes keys by hand; the cached functions behind them take the
frames they read as underscore arguments (not hashed).  The evaluation and the loaders are cached in
`dashboard.state`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboard.state import Ctx, ci_digest, ci_groups, row_identity
from kweval import legacy, stats
from kweval.data.vocabulary import Vocabulary
from kweval.evaluation import slices
from kweval.evaluation.aggregate import ALL, aggregate_by
from kweval.evaluation.semantic_columns import moves_with_tau
from kweval.io import report, report_protocol
from kweval.io.preset_headlines import PRESETS, across_metrics
from kweval.keyphrase import dataset_protocol
from kweval.metrics import undefined
from kweval.stats.across_presets import across_presets
from kweval.stats.families import compared_metrics
from kweval.stats.headline import headline, key_metrics

# ---------------------------------------------------------------------------------------------
# Summary


@st.cache_data(show_spinner="Bootstrapping 95% CIs…", max_entries=256)
def _group_cis(digests: tuple, how: str, group: tuple, _rows: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """CIs of one metric group for every model of `_rows` (model -> its rows) in one pass over the resamples
    (`bootstrap_summary_cis`: same-size groups share one product), cached by the content of what they read
    (`digests`: one per model): unchanged columns are not resampled again."""
    return stats.bootstrap_summary_cis(_rows, list(group), how).rename(columns={"group": "model"})


@st.cache_resource(show_spinner=False, max_entries=256)
def _tau_free_digests(rows_key: tuple, how: str, groups: tuple, _rows: pd.DataFrame) -> tuple[str, ...]:
    """`ci_digest` of each group of metrics in `groups`, none of which a τ change rewrites, over `_rows`: once per
    `rows_key` (one call for every group: each cached call costs the hashing of its key)."""
    return tuple(ci_digest(_rows, list(group), how) for group in groups)


def values_digests(
    rows_key: tuple, rows: pd.DataFrame, groups: Sequence[Sequence[str]], how: str
) -> list[tuple[str, str]]:
    """Speed trick "τ-free digests": per group of metrics, the values the CIs of the group read over `rows`, as two
    digests: of the metrics a τ change leaves as they are (not `moves_with_tau`), read back by `rows_key`, and of the
    others, computed.  `rows_key` decides the rows and their τ-free values: `Ctx.tau_free_key` (the evaluation's
    options but τ) and, for a subset, its scope and models.  A τ step then digests the semantic columns only.
    Reference: `ci_digest` of each part (tests/test_dashboard_reuse.py)."""
    fixed = tuple(tuple(m for m in group if not moves_with_tau(m)) for group in groups)
    kept = _tau_free_digests(rows_key, how, fixed, rows)
    return [(kept[i], ci_digest(rows, [m for m in group if moves_with_tau(m)], how)) for i, group in enumerate(groups)]


def values_digest(rows_key: tuple, rows: pd.DataFrame, metrics: Sequence[str], how: str) -> tuple[str, str]:
    """`values_digests` of one group, `metrics`."""
    return values_digests(rows_key, rows, [metrics], how)[0]


@st.cache_data(show_spinner=False, max_entries=32)
def _cis(
    key: tuple, rows_key: tuple, how: str, movie: str, models: tuple, metrics: tuple, _scores: pd.DataFrame
) -> pd.DataFrame:
    parts = dict(list(_scores.groupby("model", sort=False)))  # one pass: the same rows as a selection per model
    rows = {model: parts.get(model, _scores.iloc[:0]) for model in models}
    names = [tuple(g) for g in ci_groups(list(metrics))]
    digests = {m: values_digests((*rows_key, m), r, names, how) for m, r in rows.items()}  # per model, every group
    groups = [_group_cis(tuple(d[i] for d in digests.values()), how, g, rows) for i, g in enumerate(names)]
    every = pd.MultiIndex.from_product([list(models), list(metrics)], names=["model", "metric"])
    found = pd.concat(groups).set_index(["model", "metric"]).reindex(every).reset_index()
    return found[["metric", "value", "ci_low", "ci_high", "model"]]


def summary_rows(ctx: Ctx) -> tuple[pd.DataFrame, str, pd.DataFrame]:
    """(the summary table's rows of the selected models, the scope shown: the sidebar's movie or ALL, the per-review
    scores of that scope): what the Summary's numbers are read from."""
    sel, table = ctx.selection, ctx.summary()
    table = table[table["model"].isin(sel.models)].reset_index(drop=True)
    scope = sel.movie if sel.movie in set(table["movie"]) else ALL
    scores = ctx.evaluation.scores
    return table, scope, ctx.scores() if scope != ALL else scores[scores["model"].isin(sel.models)]


def summary_cis(ctx: Ctx, scope: str, scores: pd.DataFrame) -> pd.DataFrame:
    """Bootstrap 95% CIs of every metric per selected model over `scores` (the rows of `scope`)."""
    sel, models = ctx.selection, tuple(ctx.selection.models)
    rows_key = (*ctx.tau_free_key, scope, models)
    return _cis(ctx.key, rows_key, sel.agg, scope, models, tuple(ctx.evaluation.metric_names), scores)


@st.cache_data(show_spinner=False, max_entries=16)
def _slice_labels(
    data_hash: str, rows: str, by: str, _scores: pd.DataFrame, _reviews: pd.DataFrame
) -> pd.Series | None:
    """Labels of the evaluated rows `rows` (`row_identity`): the same after a τ change or with sentiment on."""
    return slices.slice_labels(_scores, _reviews, by)


@st.cache_data(show_spinner=False, max_entries=64)
def _sliced(content: tuple, how: str, by: str, metric: str, _evaluation, _reviews: pd.DataFrame) -> pd.DataFrame | None:
    scores = _evaluation.scores
    labels = _slice_labels(content[0], content[1], by, scores, _reviews)
    return None if labels is None else aggregate_by(_evaluation, labels, how, metrics=[metric])


@st.cache_resource(show_spinner=False, max_entries=64)
def _metric_content(key: tuple, rows_key: tuple, how: str, metric: str, _scores: pd.DataFrame) -> tuple:
    """What a view of one metric over every evaluated row reads, as digests: the data, which rows (`row_identity`)
    and the metric's values (`values_digest`), so a τ change leaves a lexical metric's view as it was."""
    return key[0], _row_identity(rows_key, _scores), *values_digest(rows_key, _scores, [metric], how)


@st.cache_resource(show_spinner=False, max_entries=16)
def _row_identity(rows_key: tuple, _scores: pd.DataFrame) -> str:
    """`row_identity` of `_scores`, cached by `rows_key`, what decides those rows: the evaluation's τ-free key
    (`Ctx.tau_free_key`: a τ change keeps every row) and, for a subset, its scope and models.  A τ step then
    digests no row again (the rows' strings were hashed at each step, twice on the Summary)."""
    return row_identity(_scores)


def sliced(ctx: Ctx, by: str, metric: str) -> pd.DataFrame | None:
    """`metric` per slice of the reviews by `by` ("rating" or "length") and model, with n_reviews; None when the
    data has no such field.  Cached by the content of what it reads (`_metric_content`)."""
    how, scores = ctx.selection.agg, ctx.evaluation.scores
    content = _metric_content(ctx.key, ctx.tau_free_key, how, metric, scores)
    return _sliced(content, how, by, metric, ctx.evaluation, ctx.dataset.reviews)


@st.cache_data(show_spinner="Bootstrapping the intervals…", max_entries=16)
def _intervals(key: tuple, how: str, models: tuple, columns: tuple, _evaluation) -> pd.DataFrame:
    return report.summary_intervals(_evaluation.scores[_evaluation.scores["model"].isin(models)], list(columns), how)


def latex_intervals(ctx: Ctx, columns: Sequence[str]) -> pd.DataFrame:
    """The CIs the LaTeX table prints beside `columns`."""
    sel = ctx.selection
    return _intervals(ctx.key, sel.agg, tuple(sel.models), tuple(columns), ctx.evaluation)


@st.cache_data(show_spinner=False, max_entries=32)
def _exports(
    key: tuple,
    how: str,
    models: tuple,
    columns: tuple,
    ci_style: str,
    meta: tuple,
    _table: pd.DataFrame,
    _intervals: pd.DataFrame | None,
    _words: Vocabulary,
) -> tuple[str, str, str]:
    latex = report.to_latex(
        _table,
        columns=list(columns) or None,
        ci=_intervals,
        ci_style=ci_style if ci_style != "none" else "brackets",
        caption=report.latex_caption(dict(meta), _words),
        words=_words,
    )
    return report.to_csv(_table), report.to_markdown(_table, words=_words), latex


def summary_exports(
    ctx: Ctx, table: pd.DataFrame, columns: Sequence[str], ci_style: str, meta: dict, intervals: pd.DataFrame | None
) -> tuple[str, str, str]:
    """CSV, Markdown and LaTeX of the summary `table`, built once per selection (their cost grows with the number of
    movies)."""
    sel = ctx.selection
    return _exports(
        ctx.key, sel.agg, tuple(sel.models), tuple(columns), ci_style, tuple(meta.items()), table, intervals, ctx.words
    )


@st.cache_data(show_spinner="The headline: comparing the leaders…", max_entries=32)
def _headline(
    content: tuple,
    how: str,
    scope: str,
    models: tuple,
    keys: tuple,
    compared: tuple,
    _scores: pd.DataFrame,
    _words: Vocabulary,
) -> pd.DataFrame:
    return headline(_scores, list(keys), how, _words, compared=list(compared))


@st.cache_resource(show_spinner=False, max_entries=64)
def _headline_content(
    key: tuple, rows_key: tuple, how: str, scope: str, models: tuple, metrics: tuple, _scores: pd.DataFrame
) -> tuple:
    """What the headline reads, as digests: which rows (`row_identity`, cached by `rows_key`: `_row_identity`) and
    the values of the metrics it compares (`values_digest`: the τ-free ones read back), so a τ change without
    semantic metrics' new values reuses it.  Computed once per evaluation."""
    return key[0], _row_identity(rows_key, _scores), *values_digest(rows_key, _scores, list(metrics), how)


def summary_headline(ctx: Ctx, scope: str, scores: pd.DataFrame) -> pd.DataFrame:
    """The story of `scores` (the rows of `scope`; `kweval.stats.headline`, the report's): per key metric the best
    model against the runner-up, the models that lead elsewhere among the metrics Compare compares, a clearly worse
    model, each with its interval at Holm's level and significance within its family."""
    sel = ctx.selection
    compared = tuple(m for m in compare_metrics(ctx) if m in scores.columns)
    keys = tuple(key_metrics(list(compared), sel.k))
    models = tuple(sel.models)
    content = _headline_content(ctx.key, (*ctx.tau_free_key, scope, models), sel.agg, scope, models, compared, scores)
    return _headline(content, sel.agg, scope, models, keys, compared, scores, ctx.words)


# ---------------------------------------------------------------------------------------------
# Compare

SIDES = {"mean_a": "mean A", "mean_b": "mean B"}  # the tables' names of each side's mean


@st.cache_data(show_spinner=False, max_entries=64)
def _scope_metrics(key: tuple, movie: str, models: tuple, metrics: tuple, _ctx: Ctx) -> tuple[list[str], list[str]]:
    """(compared, undefined) metrics of the sidebar's scope, once per evaluation, scope and models for the process:
    each page view read every score of the scope twice or three times for them (issue 28 item 7)."""
    scores = _ctx.scores()
    return compared_metrics(list(metrics), scores), undefined.undefined_everywhere(scores, list(metrics))


@st.cache_resource(show_spinner=False, max_entries=64)
def _scope_lists(key: tuple, tau_free_key: tuple, movie: str, models: tuple, _ctx: Ctx) -> tuple[tuple, tuple]:
    """`_scope_metrics` of every metric, held per evaluation (a plain rerun reads one entry): those a τ change leaves
    as they are once per τ-free setting (`moves_with_tau`: a τ step finds them), the semantic ones per evaluation;
    each metric's answer is its own (its column and the count that leaves it undefined:
    tests/test_semantic_tau_step.py)."""
    names = _ctx.evaluation.metric_names
    fixed, moving = tuple(m for m in names if not moves_with_tau(m)), tuple(m for m in names if moves_with_tau(m))
    parts = [_scope_metrics(tau_free_key, movie, models, fixed, _ctx)]
    if moving:
        parts.append(_scope_metrics(key, movie, models, moving, _ctx))
    compared, gone = {m for p in parts for m in p[0]}, {m for p in parts for m in p[1]}
    return tuple(m for m in names if m in compared), tuple(m for m in names if m in gone)


def _scope(ctx: Ctx) -> tuple[tuple, tuple]:
    sel = ctx.selection
    return _scope_lists(ctx.key, ctx.tau_free_key, sel.movie, tuple(sel.models), ctx)


def compare_metrics(ctx: Ctx) -> list[str]:
    """The metrics Compare tests and the headline reads: per review (gt_coverage is per movie), with a value on some
    review in the sidebar's scope (`undefined_metrics` are left out)."""
    return list(_scope(ctx)[0])


def undefined_metrics(ctx: Ctx) -> list[str]:
    """The metrics without a value on any review in the sidebar's scope (`kweval.metrics.undefined`: e.g.
    recall_absent where no GT keyword is absent): "—" with the reason, out of charts, headline and comparisons."""
    return list(_scope(ctx)[1])


@st.cache_data(show_spinner="Bootstrap and randomization tests…", max_entries=32)
def _compare(
    key: tuple, movie: str, how: str, a: str, others: tuple, metrics: tuple, _scores: pd.DataFrame
) -> pd.DataFrame:
    return stats.compare_against(_scores, a, others, list(metrics), how).rename(columns=SIDES)


def comparisons(ctx: Ctx, a: str, others: Sequence[str]) -> pd.DataFrame:
    """Every other model against `a` on every metric, over the selected movie's reviews, under the sidebar's
    aggregation (`kweval.stats.aggregated.compare_aggregated`: micro compares the ratio of sums where a metric has
    one; the ``basis`` column says which), with Holm-level intervals beside the Holm p."""
    sel = ctx.selection
    return _compare(ctx.key, sel.movie, sel.agg, a, tuple(others), tuple(compare_metrics(ctx)), ctx.scores())


@st.cache_data(show_spinner="Per-movie tests…", max_entries=32)
def _per_movie(key: tuple, a: str, b: str, metric: str, metrics: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    both = stats.paired_scores(_scores, a, b, list(metrics))
    parts = []
    for movie, grp in both.groupby("movie", sort=False):
        res = stats.paired_comparison(
            grp[[f"{metric}_a"]].set_axis([metric], axis=1), grp[[f"{metric}_b"]].set_axis([metric], axis=1), [metric]
        )
        parts.append(res.rename(columns=SIDES).assign(movie=movie))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    out["p_randomization_holm"] = stats.holm(out["p_randomization"])  # across the movies shown
    out["p_ttest_holm"] = stats.holm(out["p_ttest"])
    return out


def per_movie(ctx: Ctx, a: str, b: str, metric: str) -> pd.DataFrame:
    """B − A on `metric` per movie (every movie), Holm-corrected across the movies."""
    scores = ctx.evaluation.scores
    return _per_movie(ctx.key, a, b, metric, tuple(compare_metrics(ctx)), scores[scores["model"].isin([a, b])])


# ---------------------------------------------------------------------------------------------
# Notebook parity


@st.cache_data(show_spinner="Replaying the notebooks…", max_entries=16)
def _side_by_side(key: tuple, movie: str, models: tuple, _dataset, _options, _corrected) -> pd.DataFrame:
    # the notebooks' semantic replay runs their own uncached encoder over every keyword: too slow for a page
    # view; the semantic defect has its own on-demand example instead
    return legacy.legacy_vs_corrected(_dataset, replace(_options, semantic=False), corrected=_corrected)


def parity_table(ctx: Ctx, dataset) -> pd.DataFrame:
    """The notebooks' numbers beside the corrected ones for `dataset` (the selection's subset); the corrected side
    is the evaluation's macro summary, already there (the lexical and sentiment values do not depend on semantic
    matching)."""
    sel = ctx.selection
    return _side_by_side(ctx.key, sel.movie, tuple(sel.models), dataset, ctx.options, ctx.summary("macro"))


@st.cache_data(show_spinner="Looking for a real example…", max_entries=64)
def _example(key: tuple, movie: str, models: tuple, finder_name: str, _finder: Callable, _dataset) -> object | None:
    return _finder(_dataset)


def parity_example(ctx: Ctx, finder: Callable, dataset) -> object | None:
    """`finder`'s example of a notebook defect in `dataset` (None when the data holds none)."""
    sel = ctx.selection
    return _example(ctx.key, sel.movie, tuple(sel.models), finder.__name__, finder, dataset)


# ---------------------------------------------------------------------------------------------
# Keyphrase presets (per-document data): the numbers of `kweval evaluate --protocol P`


@st.cache_data(show_spinner="Scoring under the preset…", max_entries=16)
def _protocol_summary(data_hash: str, protocol: str, k: int, models: tuple, _dataset) -> pd.DataFrame:
    return dataset_protocol.protocol_summary(_dataset, protocol, k, list(models))


def protocol_summary(ctx: Ctx, protocol: str) -> pd.DataFrame:
    """The selected models' rows of `kweval evaluate DATA --protocol protocol --k k`
    (`kweval.keyphrase.dataset_protocol`)."""
    sel = ctx.selection
    return _protocol_summary(ctx.data_hash, protocol, sel.k, tuple(sel.models), ctx.dataset)


@st.cache_data(show_spinner="Scoring under the preset…", max_entries=16)
def _protocol_scores(data_hash: str, protocol: str, k: int, models: tuple, _dataset) -> pd.DataFrame:
    return dataset_protocol.protocol_scores(_dataset, protocol, k, list(models))


def protocol_scores(ctx: Ctx, protocol: str, every_movie: bool = False) -> pd.DataFrame:
    """Per-document scores of the selected models under the preset (for Compare's paired tests) in the sidebar's
    scope (`every_movie`: of every collection)."""
    sel = ctx.selection
    scores = _protocol_scores(ctx.data_hash, protocol, sel.k, tuple(sel.models), ctx.dataset)
    return scores if sel.movie == "ALL" or every_movie else scores[scores["movie"] == sel.movie]


@st.cache_data(show_spinner="The headline: comparing the leaders…", max_entries=16)
def _protocol_headline(
    data_hash: str, protocol: str, k: int, models: tuple, movie: str, _scores: pd.DataFrame, _words: Vocabulary
) -> pd.DataFrame:
    return report_protocol.protocol_headline(_scores, protocol, k, _words)


def protocol_headline(ctx: Ctx, protocol: str) -> pd.DataFrame:
    """The headline of the selected models' per-document scores under the preset in the sidebar's scope
    (`kweval.io.report_protocol.protocol_headline`, the report's)."""
    sel = ctx.selection
    scores = protocol_scores(ctx, protocol)
    return _protocol_headline(ctx.data_hash, protocol, sel.k, tuple(sel.models), sel.movie, scores, ctx.words)


@st.cache_data(show_spinner="Bootstrapping 95% CIs…", max_entries=16)
def _protocol_cis(
    data_hash: str, protocol: str, k: int, models: tuple, movie: str, metrics: tuple, _scores: pd.DataFrame
) -> pd.DataFrame:
    return report_protocol.protocol_intervals(_scores, protocol, list(metrics))


def protocol_cis(ctx: Ctx, protocol: str, movie: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Bootstrap 95% CIs over the documents of collection `movie` of each selected model's preset value of `metrics`
    (`kweval.io.report_protocol.protocol_intervals`: KPEval's F1 as the F1 of mean P and R)."""
    sel = ctx.selection
    scores = _protocol_scores(ctx.data_hash, protocol, sel.k, tuple(sel.models), ctx.dataset)
    scores = scores[scores["movie"] == movie]
    return _protocol_cis(ctx.data_hash, protocol, sel.k, tuple(sel.models), movie, tuple(metrics), scores)


@st.cache_data(show_spinner="Bootstrap and randomization tests…", max_entries=16)
def _protocol_compare(
    data_hash: str, protocol: str, k: int, movie: str, a: str, others: tuple, metrics: tuple, _scores
) -> pd.DataFrame:
    return report_protocol.protocol_comparisons(_scores, a, others, list(metrics)).rename(columns=SIDES)


def protocol_comparisons(
    ctx: Ctx, protocol: str, a: str, others: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """Every other model against `a` on the preset's per-document `metrics` (paired, Holm within the preset's
    families: `kweval.io.report_protocol.protocol_comparisons`, the report's)."""
    sel = ctx.selection
    scores = protocol_scores(ctx, protocol)
    return _protocol_compare(ctx.data_hash, protocol, sel.k, sel.movie, a, tuple(others), tuple(metrics), scores)


def kweval_scope_scores(ctx: Ctx) -> tuple[str, pd.DataFrame]:
    """(scope, the evaluation's rows of the selected models in it): the kweval view's headline reads them (the
    sidebar's collection, or ALL)."""
    sel, scores = ctx.selection, ctx.evaluation.scores
    scope = sel.movie if sel.movie in set(scores["movie"]) else "ALL"
    rows = scores[scores["model"].isin(sel.models)]
    return scope, rows if scope == "ALL" else rows[rows["movie"] == scope]


@st.cache_data(show_spinner="Checking the verdicts under every preset…", max_entries=16)
def _across(key: tuple, view: str, how: str, movie: str, models: tuple, _top, _headlines) -> pd.DataFrame:
    return across_presets(_top, view, _headlines, across_metrics(key[-1]))


def headline_across_presets(ctx: Ctx, view: str, top: pd.DataFrame | None) -> pd.DataFrame | None:
    """`top`, the headline of Summary's `view` (kweval or a preset), told whether each F1@k verdict holds under every
    preset (`kweval.stats.across_presets`, as `kweval report`): each preset's view of the same scope, cached."""
    if top is None or top.empty or not ctx.dataset.per_document:
        return top
    sel = ctx.selection
    scope, scores = kweval_scope_scores(ctx)
    headlines = {
        preset: summary_headline(ctx, scope, scores) if preset == "kweval" else protocol_headline(ctx, preset)
        for preset in PRESETS
    }
    headlines[view] = top
    return _across((*ctx.key, sel.k), view, sel.agg, sel.movie, tuple(sel.models), top, headlines)


@st.cache_data(show_spinner="Describing the collections…", max_entries=8)
def _cards(data_hash: str, protocol: str, match: str | None, _dataset) -> list[dict]:
    from kweval.keyphrase.describe import describe_dataset

    return [card.as_dict() for card in describe_dataset(_dataset, protocol, match)]


def dataset_cards(ctx: Ctx) -> list[dict]:
    """`kweval describe`'s card of every collection of per-document data (JSON-ready dicts; [] otherwise): under the
    preset the pages compute under (`Ctx.preset`), else under kweval with the evaluation's match mode."""
    if ctx.preset is not None:
        return _cards(ctx.data_hash, ctx.preset, None, ctx.dataset)
    return _cards(ctx.data_hash, "kweval", ctx.options.match, ctx.dataset)
