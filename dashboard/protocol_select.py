"""The protocol selector of Summary and Compare on per-document data: kweval, pke, kpeval or meng.

Under kweval the pages show the evaluation as always; under a preset they show the numbers of
`kweval evaluate DATA --protocol P --k K --predictions ...` (`kweval.keyphrase.dataset_protocol`,
through `dashboard.caches`).  The choice lives in the URL (``protocol=pke``) through the one binding
(`dashboard.url_state.url_widget`), kept and remembered like the sidebar's settings: the sidebar reads it on every
page (`Selection.protocol`), so the pages in between and their links keep it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import caches, charts
from dashboard.escape import md
from dashboard.headline_card import MARKS, across_lines, show_headline_card, significance_caption
from dashboard.report_button import preset_report_button
from dashboard.selection import PROTOCOL_DEFAULT, PROTOCOLS, parse_protocol
from dashboard.state import Ctx
from dashboard.style import outcome_styles
from dashboard.tables import best_in_bold, decimal_formats, number_columns, page_words, text_columns
from dashboard.url_state import url_widget
from kweval.io import report
from kweval.io.report_protocol import f1_of_means
from kweval.keyphrase.dataset_protocol import preset_metrics
from kweval.stats import verdict
from kweval.stats.families import PRESET, compared_metrics, family_label

PROTOCOL_HELP = (
    "The conventions of the numbers (docs/protocols.md): kweval (docs/metrics.md), or the keyphrase field's tools: "
    "pke, kpeval (KPEval), meng (OpenNMT-kpg). A preset gives the numbers of `kweval evaluate DATA --protocol P`."
)


def choose_protocol(ctx: Ctx) -> str:
    """The protocol selector (per-document data only; "kweval" otherwise, with no widget).  The choice becomes
    `ctx`'s (`Selection.protocol`, `Ctx.preset`) at once: the sidebar read the URL before the widget changed it."""
    if not ctx.dataset.per_document:
        return PROTOCOL_DEFAULT
    default = ctx.selection.protocol or PROTOCOL_DEFAULT  # as the sidebar resolved it: URL, else remembered
    chosen = url_widget(
        st.radio,
        "Protocol",
        "protocol",
        default,
        parse_protocol,
        keep=True,
        warn=False,  # the sidebar named an unusable value
        options=list(PROTOCOLS),
        horizontal=True,
        help=PROTOCOL_HELP,
    )
    chosen = chosen or PROTOCOL_DEFAULT
    ctx.selection = replace(ctx.selection, protocol=chosen)
    return chosen


def protocol_command(
    source: str, protocol: str, k: int, models: Sequence[str], files: Mapping[str, str], beside: Sequence[str]
) -> str | None:
    """The command line `kweval evaluate SOURCE --protocol P --k K …` of `models`, runnable as shown (quoted): the
    models whose files lie with the collection (`beside`, kweval.data.beside) need no option, unless another model
    needs ``--predictions``, which stops the reading of those files; then each model is ``--predictions NAME=PATH``
    (`files`: its file, or the name of the file added in the sidebar).  None when a model's file is unknown."""
    head = ["kweval", "evaluate", source, "--protocol", protocol, "--k", str(k)]
    if all(m in beside for m in models):
        narrowed = set(models) != set(beside)
        return shlex.join(head + (["--models", ",".join(models)] if narrowed else []))
    if not all(m in files for m in models):
        return None
    return shlex.join(head + [part for m in models for part in ("--predictions", f"{m}={files[m]}")])


def cli_command(ctx: Ctx, protocol: str) -> str | None:
    """The command line whose numbers the page shows under `protocol` (`protocol_command`), None when there is none
    (the data is not a docsutf8/ folder, or a model's file is not known)."""
    from kweval.data.beside import models_beside

    source = Path(str(ctx.dataset.source))
    beside = dict(models_beside(source, [])) if source.is_dir() and (source / "docsutf8").is_dir() else {}
    if not beside and not ctx.added or not (source / "docsutf8").is_dir():
        return None
    files = {m: str(p) for m, p in beside.items()} | ctx.added
    usable = [m for m in beside if m not in ctx.added]  # a model added in the sidebar replaces the folder's
    return protocol_command(str(source), protocol, ctx.selection.k, list(ctx.selection.models), files, usable)


def command_words(ctx: Ctx, protocol: str) -> str:
    """The command line in a sentence's words (escaped; a code span), or what stands for it when there is none."""
    command = cli_command(ctx, protocol)
    if command is None:
        return f"`kweval evaluate --protocol {protocol}` (on a docsutf8/ + keys/ folder with each model's file)"
    return f"`{command.replace('`', '')}`"


def show_protocol_summary(ctx: Ctx, protocol: str, meta: dict) -> None:
    """The preset's view of Summary, led as the kweval view is: the headline card of the preset's per-document
    scores, the preset's summary table (the CLI's rows) with its CSV download named after every setting, and the
    table's small multiples with bootstrap CIs."""
    table = caches.protocol_summary(ctx, protocol)
    words = ctx.words
    show_protocol_headline(ctx, protocol)
    st.subheader(f"Every metric under the {md(protocol)} preset, {words.movies.lower()} × models")
    metrics = [c for c in table.columns if c not in ("movie", "model", "n_documents")]
    config = number_columns(metrics, formats=decimal_formats(table)) | number_columns(["n_documents"], fmt="%d")
    config["movie"] = st.column_config.TextColumn(words.header("movie"))
    st.dataframe(best_in_bold(table), hide_index=True, column_config=config, key="protocol_table")  # as said above
    st.caption(
        f"The numbers of {command_words(ctx, protocol)}: each document scored by the preset's own rules (its "
        "normalisation, cut-off and macro F1), then averaged over the collection's documents. The sidebar's match "
        "mode and aggregation do not apply to a preset."
    )
    command = cli_command(ctx, protocol)
    if command is not None:
        st.code(command, language="bash")  # runnable as shown
    c1, c2, _ = st.columns([1, 2, 5])
    c1.download_button(
        "CSV",
        report.to_csv(table),
        report.download_name("summary", meta, "csv"),
        "text/csv",
        key="protocol_csv",
    )
    movie = scope_collection(ctx, table)
    if movie is not None:  # the report of one collection, as `kweval report --protocol` writes it
        preset_report_button(ctx, protocol, movie, meta, c2)
    show_protocol_charts(ctx, protocol, table, movie)


def _f1_note(protocol: str) -> str:
    """What the headline's F1 is under a preset whose table F1 is the F1 of mean P and R (KPEval); "" otherwise."""
    if f1_of_means(protocol):
        return (
            f" The {protocol} table's F1 is the F1 of mean P and mean R, which no paired test resamples per document: "
            "the headline compares mean per-document F1 (so named)."
        )
    return ""


def show_protocol_headline(ctx: Ctx, protocol: str) -> None:
    """The headline card of the preset's per-document scores in the sidebar's scope (`caches.protocol_headline`)."""
    top = caches.protocol_headline(ctx, protocol) if len(ctx.selection.models) >= 2 else None
    top = caches.headline_across_presets(ctx, protocol, top)  # the verdict under every preset
    caption = significance_caption(ctx.words.reviews.lower(), [], [family_label(PRESET)])
    caption += (
        f" Under the {md(protocol)} preset: the per-document values of {command_words(ctx, protocol)} "
        f"(`--per-review` writes them); a margin is the difference of the two models' means.{_f1_note(protocol)}"
    )
    title = f"{md(ctx.movie_title(ctx.selection.movie))}, {md(protocol)} preset"
    show_headline_card(title, top, caption, ctx.words, extra=across_lines(top))


def scope_collection(ctx: Ctx, table: pd.DataFrame) -> str | None:
    """The collection the preset's charts and report show: the sidebar's, or the only one under ALL (None when
    ALL spans several: the preset's rows are per collection)."""
    collections = list(dict.fromkeys(table["movie"])) if len(table) else []
    if ctx.selection.movie in collections:
        return ctx.selection.movie
    return collections[0] if len(collections) == 1 else None


def show_protocol_charts(ctx: Ctx, protocol: str, table: pd.DataFrame, movie: str | None) -> None:
    """The preset table's small multiples for collection `movie` (`scope_collection`)."""
    words = ctx.words
    if movie is None:
        one = words.movie.lower()
        st.caption(f"Charts and report: choose one {one} in the sidebar (the preset's rows are per {one}).")
        return
    st.subheader(f"Per metric, with bootstrap 95% CIs — {md(ctx.movie_title(movie))}, {md(protocol)} preset")
    rows = table[table["movie"] == movie]
    metrics = [c for c in rows.columns if c not in ("movie", "model", "n_documents")]
    figures = charts.protocol_bars(ctx, protocol, movie, rows, caches.protocol_cis(ctx, protocol, movie, metrics))
    charts.show_bars(figures)
    st.caption(
        "One panel per metric, each with its own scale from 0: the values of the table above. Error bars: percentile "
        f"bootstrap over {words.reviews.lower()} (2000 resamples, seed 0) of the preset's statistic (the mean; "
        "KPEval's F1: the F1 of the resampled mean P and R)."
    )


def show_verdict_matrix(comparison: pd.DataFrame, a: str) -> None:
    """The verdicts of every model against `a` (`comparison`: paired_comparison rows with a ``model`` column) as a
    models × metrics matrix coloured by outcome (`kweval.stats.verdict.verdict_matrix`), the sentences in an
    expander."""
    if comparison.empty:
        return
    table = verdict.verdict_table(comparison, a, reviews=page_words().reviews.lower())
    cells = verdict.verdict_matrix(table, "cell")
    outcomes = verdict.verdict_matrix(table, "outcome")
    styled = cells.style.apply(lambda _: outcome_styles(outcomes), axis=None)
    st.dataframe(styled, key="verdict_matrix", column_config={"model": st.column_config.TextColumn(f"model vs {a}")})
    st.caption(
        f"Each cell names the winner of that model against {md(a)} on that metric: ✓ significant (dark: Holm-adjusted "
        f"randomization p < {verdict.ALPHA} within the metric's family, for the pair), (n.s.) not significant "
        "(light); green: "
        f"the row's model ahead, red: {md(a)} ahead."
    )
    with st.expander("Every verdict in words"):
        for _model, rows in table.groupby("model", sort=False):
            lines = [f"{MARKS[bool(sig)]} {md(text)}" for text, sig in zip(rows["sentence"], rows["significant"])]
            st.markdown("\n".join(f"- {line}" for line in lines))


def show_protocol_compare(ctx: Ctx, protocol: str, a: str, others: list[str]) -> None:
    """Compare under a preset: paired tests on the preset's per-document values of every model against `a`."""
    scores = caches.protocol_scores(ctx, protocol)
    metrics = compared_metrics(preset_metrics(scores), scores)  # as on every surface (kweval.stats.families)
    res = caches.protocol_comparisons(ctx, protocol, a, others, metrics)
    st.caption(
        f"Under the {md(protocol)} preset: each document scored by the preset's rules "
        f"({command_words(ctx, protocol)}), then paired tests on the per-document values (means; a preset "
        "whose macro F1 is the F1 of mean P and R, as kpeval's, reports that in Summary). p: paired randomization "
        "test, Holm-corrected within each family (the preset's P, R and F1; its present-only and its absent-only "
        "columns), for each model against A, as in the Summary's headline and the report; the interval beside it "
        "is the paired bootstrap at Holm's level."
    )
    st.subheader(f"Verdicts: each model against {md(a)} ({md(protocol)} preset)")
    aliases = {"mean A": "mean_a", "mean B": "mean_b"}
    show_verdict_matrix(res.rename(columns=aliases), a)
    if res.empty:
        return
    res = verdict.with_significance(res)
    columns = ["model", "metric", "n", "mean A", "mean B", "diff", "ci_level_holm", "ci_low_holm", "ci_high_holm"]
    columns += ["p_randomization_holm", "significant", "ci_low", "ci_high", "p_randomization", "wins", "ties", "losses"]
    shown = res[[c for c in columns if c in res.columns]]
    num = number_columns(
        [c for c in shown.columns if c.startswith(("mean", "diff", "ci_"))],
        aliases=aliases,
        formats=decimal_formats(shown),
    )
    num |= number_columns([c for c in shown.columns if c.startswith("p_")], fmt="%.2g")
    num |= number_columns(["n", "wins", "ties", "losses"], fmt="%d") | text_columns(["significant"])
    for side in ("ci_low", "ci_high"):
        num[side] = {**num[side], "label": f"{side} (95%, unadjusted)"}
    st.dataframe(shown, hide_index=True, column_config=num, key="protocol_compare_table")
