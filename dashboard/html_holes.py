"""HTML with holes: what a τ step leaves unchanged built once, the few cells that depend on τ filled per rerun.

A card (`dashboard.review_card`) is a sequence of parts: escaped HTML text, and two kinds of hole — a keyword's
cosine cell (marked ✓ when above τ) and a model's metrics line (the semantic metrics change with τ).  `fill`
joins them at the current τ.  Speed trick "card template": the filled template equals the card rendered in one
go at that τ (tests/test_review_card_page.py), and a τ step then costs a join, not a rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from dashboard.escape import fmt_num
from dashboard.selection import format_tau
from kweval.embeddings.similarity import above_threshold


class CosineCell(NamedTuple):
    """A keyword's cosine to its nearest GT keyword: marked when above τ (`above_threshold`, the metrics' rule)."""

    cosine: float


class MetricsLine(NamedTuple):
    """A model's metrics for the card's review, at the current τ (escaped text given to `fill`)."""

    model: str


Part = str | CosineCell | MetricsLine


def cosine_cell(cosine: float, threshold: float) -> str:
    """The cosine cell of a keyword table (its ``<td>``): the value, marked ✓ (with τ in its tooltip) when above τ."""
    text = fmt_num(cosine)
    if bool(above_threshold(np.array([cosine]), threshold)[0]):
        return f'<td><mark class="kw-cos kw-above" title="cosine &gt; τ = {format_tau(threshold)}">{text} ✓</mark></td>'
    return f'<td class="kw-cos">{text}</td>'


def fill(parts: Iterable[Part], threshold: float, lines: Mapping[str, str] | None = None) -> str:
    """The HTML of `parts` at τ = `threshold`, each model's metrics line from `lines` (model → escaped HTML)."""
    lines = lines or {}
    out = []
    for part in parts:
        if isinstance(part, CosineCell):
            out.append(cosine_cell(part.cosine, threshold))
        elif isinstance(part, MetricsLine):
            out.append(lines.get(part.model, ""))
        else:
            out.append(part)
    return "".join(out)
