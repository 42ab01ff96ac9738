"""The explorer's highlighted review text and its tooltips.

The highlighting itself (`highlight`, `match_spans`: a word index of the
text, escaped <mark> tags) is pure and lives in the core,
`kweval.io.highlight`, where the standalone HTML report uses it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.io.highlight import highlight, match_spans

__all__ = ["highlight", "match_spans", "matched_tooltips", "review_html"]


def review_html(text: str | None, keywords: Mapping[str, str] | Iterable[str], max_height: int = 320) -> str:
    """A scrollable block of the highlighted review text (newlines kept)."""
    body = highlight(text, keywords) or "<em>(no text in this dataset)</em>"
    return (
        f'<div class="kw-review" style="white-space:pre-wrap;max-height:{int(max_height)}px;overflow-y:auto;'
        f'line-height:1.5;padding:0.25rem 0">{body}</div>'
    )


def matched_tooltips(
    keywords: pd.DataFrame, model: str | None = None, words: Vocabulary = MOVIE_WORDS
) -> dict[str, str]:
    """{predicted keyword: "model: GT keyword (GT rank j)"} for the matched rows of `keywords` ("(in the GT)" for an
    unranked GT, `words.gt_position`).

    With `model`, only that model's matches: the review text then marks what
    that model found, never what another model found (highlights are per model).
    """
    tips: dict[str, list[str]] = {}
    columns = (keywords[c].tolist() for c in ("model", "keyword", "gt_rank", "gt_keyword"))
    for name, kw, rank, gt_kw in zip(*columns):  # plain lists: a card's few rows (a boolean filter costs more)
        if rank >= 0 and (model is None or name == model):
            tips.setdefault(str(kw), []).append(f"{name}: {gt_kw} ({words.gt_position(int(rank))})")
    return {kw: ", ".join(v) for kw, v in tips.items()}
