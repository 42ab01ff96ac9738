"""The explorer's grounding marks (docs/metrics.md §12): each keyword ● present, ◐ supported or ○ unsupported by the
review's own text, and, below the card, what supports each one that is not present.

Plain functions without streamlit; every user string is escaped (`dashboard.escape`).  The rows are the
explorer's keyword rows (`Evaluation.keywords` with ``grounding``, ``support``, ``support_cosine``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from dashboard.escape import esc

SYMBOLS = {"present": "●", "supported": "◐", "unsupported": "○"}
WORDS = {
    "present": "present in the text",
    "supported": "supported by the text",
    "unsupported": "unsupported by the text",
}


def _how(row: Mapping) -> str:
    """How a keyword is supported, or how near an unsupported one came, in words (plain text, not escaped)."""
    support, cosine = row.get("support"), row.get("support_cosine")
    quoted = f"‘{support}’" if isinstance(support, str) and support else ""
    if row.get("grounding") == "supported":
        how = "its words in" if cosine is None or cosine != cosine else f"cosine {float(cosine):.2f} to"
        return f"{how} {quoted}"
    if row.get("grounding") == "unsupported" and quoted:
        return f"nearest {quoted}, cosine {float(cosine):.2f}"
    return ""


def grounding_mark(row: Mapping) -> str:
    """One keyword's mark (escaped HTML, with the support as its hover title); '' without grounding."""
    grade = row.get("grounding") if hasattr(row, "get") else None
    if grade not in SYMBOLS:
        return ""
    title = WORDS[grade] + (f": {_how(row)}" if _how(row) else "")
    return (
        f' <span class="kw-ground kw-ground-{grade}" title="{esc(title)}" '
        f'style="font-size:0.8em;opacity:0.8;white-space:nowrap">{SYMBOLS[grade]} {esc(grade)}</span>'
    )


def support_html(rows: pd.DataFrame, models: Sequence[str]) -> str:
    """Below a card: per model, its grades counted and each keyword that is not present with what supports it (or
    the nearest sentence of an unsupported one), as visible text (a touch screen has no hover); '' without
    grounding."""
    if "grounding" not in rows.columns or not rows["grounding"].notna().any():
        return ""
    parts = []
    for model in models:
        mine = rows[rows["model"] == model]
        if mine.empty:
            continue
        counts = mine["grounding"].value_counts()
        tally = " · ".join(f"{SYMBOLS[g]} {int(counts.get(g, 0))} {g}" for g in SYMBOLS)
        items = "".join(
            f'<li class="kw-support kw-ground-{esc(r["grounding"])}">{SYMBOLS[r["grounding"]]} '
            f"<b>{esc(r['keyword'])}</b>: {esc(_how(r) or WORDS[r['grounding']])}</li>"
            for r in mine.to_dict("records")
            if r["grounding"] in ("supported", "unsupported")
        )
        listed = f'<ul style="margin:0.1rem 0 0.3rem 0;padding-left:1.2rem">{items}</ul>' if items else ""
        parts.append(f"<div><b>{esc(model)}</b>: {tally}{listed}</div>")
    return (
        '<div class="kw-grounding" style="font-size:0.85em;margin-top:0.4rem"><div style="font-weight:600">'
        "Grounding in the text (● present, ◐ supported, ○ unsupported)</div>" + "".join(parts) + "</div>"
    )
