"""The former regex implementation of `dashboard.highlight.match_spans`: the reference its spans are
checked against (tests/test_ui.py) and the method its speed is compared with (bench/bench_highlight.py)."""

from __future__ import annotations

import re

from kweval.io.highlight import STOPWORDS as _STOPWORDS


def regex_spans(text: str, keywords: list[str]) -> list[tuple[int, int]]:
    """Merged (start, end) spans: one compiled pattern for each keyword's phrase and one per content word."""
    raw = []
    for kw in keywords:
        words = re.findall(r"\w+", kw)
        if not words:
            continue
        pats = [re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)]
        if len(words) > 1:
            pats += [
                re.compile(r"(?<!\w)" + re.escape(w) + r"(?!\w)", re.IGNORECASE)
                for w in dict.fromkeys(w.casefold() for w in words)
                if len(w) > 1 and w not in _STOPWORDS
            ]
        raw += [(m.start(), m.end()) for p in pats for m in p.finditer(text)]
    merged: list[list[int]] = []
    for a, b in sorted(raw):
        if merged and a < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]
