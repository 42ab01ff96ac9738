"""Present / absent GT keywords: whether a GT keyword occurs in a review's (document's) own text.

A GT keyword is *present* for a review when it occurs in the review's
normalized text (docs/metrics.md §1 `norm`) under the match mode:

- ``approx``: as a substring of the text (the mode's substring rule);
- ``exact`` and ``word``: as a run of whole tokens;
- ``stem``: its Porter-stemmed tokens as a run of the text's stemmed tokens.

A keyword of a list several texts share (a movie's) is searched once in all
of them joined (`occurrences`), so the cost is linear in the text rather than
a Python loop over keyword × review pairs; a review's own list is tested
keyword by keyword in its one text (`contained`).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

import numpy as np

from kweval.text.normalize import normalize_many, stem_tokens

_SEP = "\x00"  # never survives normalize(), so no keyword can span two texts


def searchable(texts: Sequence[str | None], mode: str) -> list[str]:
    """Texts as `occurrences` searches them under `mode` (a missing text becomes an empty one)."""
    norms = normalize_many(texts)
    if mode == "stem":
        return [f" {s} " if t else "" for t, s in zip(norms, _stemmed(norms))]
    if mode in ("exact", "word"):
        return [f" {t} " if t else "" for t in norms]
    return norms


def searchable_keywords(norms: Sequence[str], mode: str) -> list[str]:
    """Normalized GT keywords as `occurrences` looks for them under `mode`."""
    if mode == "stem":
        return [f" {s} " for s in _stemmed(norms)]
    if mode in ("exact", "word"):
        return [f" {g} " for g in norms]
    return list(norms)


@lru_cache(maxsize=1 << 18)
def _stem(token: str) -> str:
    return stem_tokens(token)[0]


_SEP_TOKEN = f" {_SEP} "


def _stemmed(norms: Sequence[str]) -> list[str]:
    """For each normalized text, its tokens' Porter stems joined by spaces: all texts' tokens at once, each distinct one
    stemmed once.

    The texts are joined by a `_SEP` token, split into tokens, mapped through
    a dict of stems by a C-level `map`, joined back and split at the `_SEP` tokens.
    """
    if not norms:
        return []
    tokens = _SEP_TOKEN.join(norms).split(" ")
    stem_of = {tok: _stem(tok) for tok in set(tokens).difference(("", _SEP))}
    stem_of[""] = ""  # an empty text between two separators
    stem_of[_SEP] = _SEP
    return " ".join(map(stem_of.__getitem__, tokens)).split(_SEP_TOKEN)


def occurrences(keywords: Sequence[str], texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(keyword index, text index) of every keyword occurring in every text, each pair once, ordered by keyword then
    text.

    Both sides as `searchable_keywords` / `searchable` give them.  `occurrences_automaton` where pyahocorasick is
    installed (the `speed` extra), else `occurrences_scan`, its plain definition.
    """
    if not keywords or not texts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    try:
        import ahocorasick
    except ImportError:
        return occurrences_scan(keywords, texts)
    return occurrences_automaton(keywords, texts, ahocorasick)


def occurrences_scan(keywords: Sequence[str], texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """`occurrences` by plain search: each keyword looked for in all texts joined, from each hit to the next text."""
    if not keywords or not texts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ends = list(itertools.accumulate(len(t) + 1 for t in texts))  # one past each text's separator
    blob = _SEP.join(texts) + _SEP
    possible = _pieces_within_tokens(keywords, blob)
    found_kw: list[int] = []
    found_text: list[int] = []
    for i, keyword in enumerate(keywords):
        if not keyword.strip() or not possible[i]:
            continue
        pos = blob.find(keyword)
        while pos != -1:
            t = bisect.bisect_right(ends, pos)
            found_kw.append(i)
            found_text.append(t)
            pos = blob.find(keyword, ends[t])  # the next text: each pair once, however often it occurs
    return np.asarray(found_kw, dtype=np.int64), np.asarray(found_text, dtype=np.int64)


def occurrences_automaton(keywords: Sequence[str], texts: Sequence[str], ahocorasick) -> tuple[np.ndarray, np.ndarray]:
    """`occurrences` in one pass over all texts joined, whatever the number of keywords: an Aho–Corasick automaton
    of the distinct non-blank keywords (pyahocorasick, module `ahocorasick`) reports every occurrence of every one;
    each occurrence's text is found by its end, and each (keyword, text) pair kept once."""
    if not keywords or not texts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    indices: dict[str, list[int]] = {}
    for i, keyword in enumerate(keywords):
        if keyword.strip():
            indices.setdefault(keyword, []).append(i)
    if not indices:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    automaton = ahocorasick.Automaton()
    for n, keyword in enumerate(indices):
        automaton.add_word(keyword, n)
    automaton.make_automaton()
    blob = _SEP.join(texts) + _SEP
    hits = np.fromiter(itertools.chain.from_iterable(automaton.iter(blob)), dtype=np.int64)
    if len(hits) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ends = np.cumsum([len(t) + 1 for t in texts])  # one past each text's separator
    hit_text = np.searchsorted(ends, hits[0::2], side="right")
    distinct = np.unique(hits[1::2] * len(texts) + hit_text)  # (distinct keyword, text), each pair once
    which, pair_text = np.divmod(distinct, len(texts))
    groups = list(indices.values())
    sizes = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
    flat = np.fromiter(itertools.chain.from_iterable(groups), dtype=np.int64, count=int(sizes.sum()))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    # a keyword given several times: its pairs once per index it has
    reps = sizes[which]
    row = np.repeat(starts[which], reps) + (np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps))
    out_kw, out_text = flat[row], np.repeat(pair_text, reps)
    order = np.lexsort((out_text, out_kw))
    return out_kw[order], out_text[order]


def _pieces_within_tokens(keywords: Sequence[str], blob: str) -> list[bool]:
    """Speed: whether each space-free piece of each keyword lies within some token of `blob` (texts as `searchable`).

    A keyword occurring in a text passes: a space-free part of a text lies
    within one of its tokens.  Most pieces are whole tokens (a set lookup);
    the others are searched in the distinct tokens joined, a small fraction
    of the blob, so a keyword with a piece found nowhere skips the blob scan
    (on DNLP about half the GT keywords of a movie occur in none of its reviews).
    """
    tokens = set(blob.split())
    token_blob = ""
    out = []
    for keyword in keywords:
        ok = True
        for piece in keyword.split():
            if piece in tokens:
                continue
            token_blob = token_blob or _SEP.join(tokens)
            if piece not in token_blob:
                ok = False
                break
        out.append(ok)
    return out


def has_text(values: Sequence[object]) -> np.ndarray:
    """Whether each value is a string that is not blank (``text.strip() != ""``): present / absent are defined for it.

    As a bool array, by C-level passes (isinstance, len, str.isspace) rather
    than a Python call per value.
    """
    values = list(values)
    is_str = np.fromiter(map(isinstance, values, itertools.repeat(str)), dtype=bool, count=len(values))
    texts = cast("list[str]", list(itertools.compress(values, is_str)))  # the values that are str
    out = np.zeros(len(values), dtype=bool)
    out[is_str] = (np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) > 0) & ~np.fromiter(
        map(str.isspace, texts), dtype=np.bool_, count=len(texts)
    )
    return out


def contained(texts: Sequence[str] | np.ndarray, keywords: Sequence[str]) -> np.ndarray:
    """Whether each keyword occurs in the text beside it (``keywords[i] in texts[i]``), as a bool array.

    Both sides as `searchable` / `searchable_keywords` give them; one C-level
    pass over the pairs (numpy object arrays or lists alike).
    """
    return np.fromiter(map(operator.contains, texts, keywords), dtype=bool, count=len(texts))


def present_flags(gt_norms: Sequence[str], text: str | None, mode: str) -> list[bool]:
    """For one review: whether each normalized GT keyword occurs in its text under `mode` (all False without text)."""
    if not isinstance(text, str) or not text.strip():
        return [False] * len(gt_norms)
    haystack = searchable([text], mode)[0]
    return [bool(k.strip()) and k in haystack for k in searchable_keywords(gt_norms, mode)]
