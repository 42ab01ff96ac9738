"""The Summary's "Download report", with feedback while it is built (~12 s on the DNLP data).

A deferred download (`st.download_button` with a callable) runs without any page to speak to, so the button
builds instead: "Build report" runs `report_view.report_html` for the view on screen inside a status box that
names each stage as it begins (`kweval.io.report_data.REPORT_STAGES`), then says the file's size and offers
"Download report".  The page is kept in the session for that view (the same view does not build twice); a
change of view (models, scope, aggregation, any setting) asks for a new build.
"""

from __future__ import annotations

import streamlit as st

from dashboard.protocol import page_card
from dashboard.report_view import file_size, report_html
from dashboard.state import Ctx
from kweval.io import report
from kweval.io.report_data import REPORT_STAGES
from kweval.io.settings import setting_texts

_BUILT = "summary_report"  # session state: (the view it was built for, the page's bytes)
ICON = ":material/description:"
WHAT = (
    "One self-contained HTML page of this view (headline, summary with CIs, charts, verdicts, worked examples, "
    "protocol card): the file `kweval report` writes."
)


def _view(ctx: Ctx, scope: str, meta: dict) -> tuple:
    sel = ctx.selection
    return (ctx.key, sel.agg, scope, tuple(sel.models), tuple(meta.items()))


def build_report(ctx: Ctx, scope: str, meta: dict) -> bytes:
    """The report of the view, built inside a status box that shows each stage, its size said when done."""
    sel = ctx.selection
    title = f"kweval report: {report.dataset_name(meta)} ({'; '.join(setting_texts(meta, ctx.words))})"
    with st.status("Building the report…", expanded=True) as status:

        def progress(stage: str, fraction: float) -> None:
            if fraction < 1.0:
                step = REPORT_STAGES.index(stage) + 1
                status.update(label=f"Building the report: {stage} ({step}/{len(REPORT_STAGES)})…")
                status.markdown(f"{step}/{len(REPORT_STAGES)} · {stage}…")

        page = report_html(
            ctx.dataset, ctx.evaluation, list(sel.models), scope, sel.agg, page_card(ctx), title, progress=progress
        ).encode("utf-8")
        status.update(label=f"Report ready: {file_size(len(page))}", state="complete", expanded=False)
    return page


def report_button(ctx: Ctx, scope: str, meta: dict, column) -> None:
    """In `column`: "Build report" (then the build, in a status box below), or "Download report" once the view's
    page is built, with a line saying what is ready and its size."""
    view = _view(ctx, scope, meta)
    built = st.session_state.get(_BUILT)
    if built is None or built[0] != view:
        help_ = f"{WHAT} Built when pressed (a few seconds on large data), then offered for download."
        if not column.button("Build report", key="build_report", icon=ICON, help=help_):
            return
        built = (view, build_report(ctx, scope, meta))
        st.session_state[_BUILT] = built
    name = report.download_name("report", meta, "html")
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
