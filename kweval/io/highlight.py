"""Keyword highlighting in a text: where a keyword's words occur, wrapped in escaped <mark> tags.

A keyword marks its whole phrase and, when it has several words, each
content word (any case).  Lookups go through a word index of the text, not a
regex per keyword (`bench/bench_highlight.py` measures the difference).
Pure functions: the dashboard's explorer (dashboard/highlight.py) and the
standalone HTML report (`kweval.io.html_report`) both call them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping


def escape_html(value: object) -> str:
    """HTML-escaped text of `value`, quotes included (None and NaN become "")."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return html.escape(str(value), quote=True)


STOPWORDS = frozenset(
    "a an and are as at be but by for from has he her his i in is it its of on or she so that the their they "
    "this to was were what when which who will with you your not no".split()
)
_WORD = re.compile(r"\w+")


def _text_words(text: str) -> tuple[list[tuple[int, int]], list[str], dict[str, list[int]]]:
    """The text's words: their spans, their casefolded forms, and word → indices of its occurrences."""
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b].casefold() for a, b in spans]
    index: dict[str, list[int]] = {}
    for i, w in enumerate(words):
        index.setdefault(w, []).append(i)
    return spans, words, index


def _keyword_hits(keyword: str, spans, words, index) -> list[tuple[int, int]]:
    """Spans of the text where `keyword` occurs: the whole phrase (consecutive words), then each content word.

    Word lookups in the text's index, no regex per keyword: the cost is the
    keyword's length plus the occurrences found in the text, however long
    the keyword is.
    """
    kw_words = [w.casefold() for w in _WORD.findall(keyword or "")]
    if not kw_words:
        return []
    hits: list[tuple[int, int]] = []
    n = len(kw_words)
    if n <= len(words):  # a phrase longer than the text cannot occur in it
        for i in index.get(kw_words[0], ()):
            if words[i : i + n] == kw_words:
                hits.append((spans[i][0], spans[i + n - 1][1]))
    if n > 1:
        for w in dict.fromkeys(kw_words):
            if len(w) > 1 and w not in STOPWORDS:
                hits.extend(spans[i] for i in index.get(w, ()))
    return hits


def match_spans(text: str, keywords: Mapping[str, str] | Iterable[str]) -> list[tuple[int, int, str]]:
    """Merged, sorted (start, end, tooltip) spans of `text` where the keywords' words occur (any case).

    `keywords` maps each keyword to its tooltip (or is a plain iterable of
    keywords).  A keyword marks its whole phrase and, when it has several
    words, each content word.  Overlapping spans are merged and their
    tooltips joined.
    """
    if not text:
        return []
    items = keywords.items() if isinstance(keywords, Mapping) else ((k, k) for k in keywords)
    spans, words, index = _text_words(text)
    raw: list[tuple[int, int, str]] = []
    for keyword, tip in items:
        raw.extend((a, b, tip) for a, b in _keyword_hits(keyword, spans, words, index))
    raw.sort()
    merged: list[list] = []
    for start, end, tip in raw:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if tip not in last[2]:
                last[2].append(tip)
        else:
            merged.append([start, end, [tip]])
    return [(s, e, "; ".join(t)) for s, e, t in merged]


def highlight(text: str | None, keywords: Mapping[str, str] | Iterable[str]) -> str:
    """`text` as escaped HTML with every matched keyword's words wrapped in <mark title=...>."""
    if not isinstance(text, str) or not text:
        return ""
    out: list[str] = []
    pos = 0
    for start, end, tip in match_spans(text, keywords):
        out.append(escape_html(text[pos:start]))
        out.append(f'<mark title="{escape_html(tip)}">{escape_html(text[start:end])}</mark>')
        pos = end
    out.append(escape_html(text[pos:]))
    return "".join(out)
