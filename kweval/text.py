"""Keyword text normalization, tokenization and stemming (docs/metrics.md §1–2)."""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from kweval.extras import require

# Lower-case ASCII words separated by single spaces are already normal: skip the Unicode work.
_ALREADY_NORMAL = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")


_KEPT_CATEGORIES = frozenset("LNM")  # letters, numbers, marks (docs/metrics.md §1)


def _kept(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in _KEPT_CATEGORIES


# ASCII text: NFKC leaves it as it is and casefold() is lower(), so one translate() drops what _kept() would.
_ASCII_NOT_KEPT = {i: None for i in range(128) if not _kept(chr(i))}


def normalize(text: str) -> str:
    """NFKC, casefold, keep only whitespace and characters of Unicode categories L, N, M; collapse whitespace.

    Marks (category M) are kept because in many scripts they carry the word:
    Devanagari vowel signs make "काला" a different word from "कल".

    >>> normalize("Darth-Vader's  FALL!")
    'darthvaders fall'
    """
    if _ALREADY_NORMAL.fullmatch(text):
        return text
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_NOT_KEPT).split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if _kept(ch))
    return " ".join(kept.split())


# In the newline-joined blob of normalize_many, what normalize() would change:
# a character outside [a-z0-9 ], or a space that ends a line, doubles another or
# starts a line.  Two patterns, because each alone starts with a character set
# that the regex engine scans for quickly (one alternation is ~5x slower).
_NOT_NORMAL_CHAR = re.compile(r"[^a-z0-9 \n]")
_NOT_NORMAL_SPACE = re.compile(r" (?:(?![^ \n])|(?<=\n )|(?<=^ ))")


def normalize_many(values: Sequence[object]) -> list[str]:
    """`normalize` of each value ("" for anything not a string), in one pass over the already-normal ones.

    Extracted keywords are nearly all lower-case ASCII words already: one regex
    scan of them joined by newlines finds the few that need the Unicode work.
    """
    texts = [v if isinstance(v, str) else "" for v in values]
    blob = "\n".join(texts)
    if blob.count("\n") != max(len(texts) - 1, 0):  # a value holds a newline: lines are not values
        return [normalize(t) for t in texts]
    found = [m.start() for m in itertools.chain(_NOT_NORMAL_CHAR.finditer(blob), _NOT_NORMAL_SPACE.finditer(blob))]
    if not found:
        return texts
    line_ends = list(itertools.accumulate(len(t) + 1 for t in texts))  # just past each value's newline
    out = texts.copy()
    for i in {bisect.bisect_right(line_ends, pos) for pos in found}:
        out[i] = normalize(texts[i])
    return out


@lru_cache(maxsize=1)
def _porter():
    # NLTK's Porter stemmer, as pke and KPEval use; imported only when stem matching is asked for.
    porter = require("nltk.stem.porter", "stem", "stem matching")
    return porter.PorterStemmer()


def stem_tokens(normalized: str) -> tuple[str, ...]:
    """Porter stems of the tokens of a normalized keyword."""
    stemmer = _porter()
    return tuple(stemmer.stem(tok) for tok in normalized.split())
