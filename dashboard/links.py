"""Relative links to a dashboard page that carry the selection in the URL query."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote_plus, urlencode

from dashboard.selection import Selection


def page_params(selection: Selection, **extra: object) -> dict[str, str]:
    """Query parameters of a link to a page with this selection plus page-specific ones (None dropped)."""
    out = selection.params()
    out.update({k: str(v) for k, v in extra.items() if v is not None and v != ""})
    return out


def page_links(path: str, selection: Selection, **per_row: Sequence[object]) -> list[str]:
    """Relative links ``./path?query`` to a page, one per row: the selection plus each row's values of `per_row`.

    Link ``i`` is ``./path?`` + urlencode(page_params(selection, name=values[i], ...)),
    but the selection is encoded once and each distinct row value once: a
    table of every review gets its links without re-encoding the selection
    thousands of times.
    """
    fixed = page_params(selection)
    segments: list[str | tuple[str, Sequence[object]]] = []  # encoded constant runs, or (name, one value per row)
    for name in page_params(selection, **{name: "-" for name in per_row}):  # page_params's order of the keys
        if name in per_row:
            segments.append((name, per_row[name]))
        elif segments and isinstance(segments[-1], str):
            segments[-1] += "&" + urlencode({name: fixed[name]})
        else:
            segments.append(urlencode({name: fixed[name]}))
    encoded: dict[tuple[str, object], str] = {}

    def pair(name: str, value: object) -> str:
        if value is None or value == "":  # dropped, as page_params drops it
            return ""
        if (name, value) not in encoded:
            encoded[(name, value)] = f"{quote_plus(name)}={quote_plus(str(value))}"  # urlencode({name: value})
        return encoded[(name, value)]

    n_rows = len(next(iter(per_row.values()))) if per_row else 1
    links = []
    for i in range(n_rows):
        parts = [seg if isinstance(seg, str) else pair(seg[0], seg[1][i]) for seg in segments]
        links.append(f"./{path}?" + "&".join(part for part in parts if part))
    return links


METRICS_DOC = "docs/metrics.md"


def metrics_doc() -> str | None:
    """The text of docs/metrics.md beside the dashboard (every metric's definition), None where it is not shipped."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / METRICS_DOC
    return path.read_text(encoding="utf-8") if path.is_file() else None
