"""The Summary's "Download report", with feedback while it is built (~12 s on the DNLP data).

A deferred download (`st.download_button` with a callable) runs without any page to speak to, so the button
builds instead: "Build report" runs `report_view.report_html` for the view on screen inside a status box that
names each stage as it begins (`kweval.io.report_data.REPORT_STAGES`), then says the file's size and offers
"Download report".  The page is kept in the session for that view (the same view does not build twice); a
change of view (models, scope, aggregation, any setting, the protocol) asks for a new build.  Under a keyphrase
preset the page is `kweval report --protocol P`'s of the collection in scope (`report_view.protocol_report_html`).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dashboard.protocol import page_card
from dashboard.report_view import file_size, protocol_report_html, report_html
from dashboard.state import Ctx
from kweval.evaluation.options import Progress
from kweval.io import report
from kweval.io.card import protocol_card
from kweval.io.report_data import REPORT_STAGES
from kweval.io.settings import setting_texts
from kweval.keyphrase import dataset_protocol

_BUILT = "summary_report"  # session state: (the view it was built for, the page's bytes)
ICON = ":material/description:"
WHAT = (
    "One self-contained HTML page of this view (headline, summary with CIs, charts, verdicts, worked examples, "
    "protocol card): the file `kweval report` writes."
)


def build_with_status(build: Callable[[Progress], str]) -> bytes:
    """`build(progress)`'s page as UTF-8, built inside a status box that names each stage as it begins and ends
    saying the page's size."""
    with st.status("Building the report…", expanded=True) as status:

        def progress(stage: str, fraction: float) -> None:
            if fraction < 1.0:
                step = REPORT_STAGES.index(stage) + 1
                status.update(label=f"Building the report: {stage} ({step}/{len(REPORT_STAGES)})…")
                status.markdown(f"{step}/{len(REPORT_STAGES)} · {stage}…")

        page = build(progress).encode("utf-8")
        status.update(label=f"Report ready: {file_size(len(page))}", state="complete", expanded=False)
    return page


def offer_report(view: tuple, build: Callable[[Progress], str], name: str, column) -> None:
    """In `column`: "Build report" (then the build, in a status box below), or "Download report" (file `name`) once
    the page of `view` (what identifies it: data, settings, models, scope) is built, with a line saying what is
    ready and its size."""
    built = st.session_state.get(_BUILT)
    if built is None or built[0] != view:
        help_ = f"{WHAT} Built when pressed (a few seconds on large data), then offered for download."
        if not column.button("Build report", key="build_report", icon=ICON, help=help_):
            return
        built = (view, build_with_status(build))
        st.session_state[_BUILT] = built
    size = file_size(len(built[1]))
    column.download_button(
        "Download report",
        built[1],
        name,
        "text/html",
        key="download_report",
        on_click="ignore",
        icon=ICON,
        help=f"{WHAT} {size}.",
    )
    st.success(f"Report ready: {name} ({size}). Press Download report to save it.", icon=":material/check_circle:")


def report_button(ctx: Ctx, scope: str, meta: dict, column) -> None:
    """The report of the kweval view: the selected models, `scope` (a movie or ALL), the sidebar's settings."""
    sel = ctx.selection
    view = ("kweval", ctx.key, sel.agg, scope, tuple(sel.models), tuple(meta.items()))
    title = f"kweval report: {report.dataset_name(meta)} ({'; '.join(setting_texts(meta, ctx.words))})"
    card = page_card(ctx)

    def build(progress: Progress) -> str:
        return report_html(ctx.dataset, ctx.evaluation, list(sel.models), scope, sel.agg, card, title, progress)

    offer_report(view, build, report.download_name("report", meta, "html"), column)


def preset_report_button(ctx: Ctx, protocol: str, movie: str, meta: dict, column) -> None:
    """The report of collection `movie` under the keyphrase preset `protocol` (`kweval report --protocol`'s page)."""
    sel = ctx.selection
    view = (protocol, ctx.data_hash, sel.k, movie, tuple(sel.models), tuple(meta.items()))
    cutoffs = dataset_protocol.cutoffs_for(sel.k)
    source = str(ctx.dataset.source)
    card = protocol_card(protocol, source, ctx.data_hash, k=sel.k, aggregation="macro", cutoffs=cutoffs)

    def build(progress: Progress) -> str:
        return protocol_report_html(ctx.dataset, protocol, sel.k, list(sel.models), movie, card, progress)

    offer_report(view, build, report.download_name("report", meta, "html"), column)
