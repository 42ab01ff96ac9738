"""Keyword text normalization, tokenization and stemming (METRICS.md §1–2)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Lower-case ASCII words separated by single spaces are already normal: skip the Unicode work.
_ALREADY_NORMAL = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")


def normalize(text: str) -> str:
    """NFKC, casefold, drop characters that are neither alphanumeric nor whitespace, collapse whitespace.

    >>> normalize("Darth-Vader's  FALL!")
    'darthvaders fall'
    """
    if _ALREADY_NORMAL.fullmatch(text):
        return text
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if ch.isalnum() or ch.isspace())
    return " ".join(kept.split())


def tokenize(normalized: str) -> tuple[str, ...]:
    """Whitespace tokens of an already normalized keyword."""
    return tuple(normalized.split())


@lru_cache(maxsize=1)
def _porter():
    # NLTK's Porter stemmer, as pke and KPEval use; imported only when stem matching is asked for.
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def stem_tokens(normalized: str) -> tuple[str, ...]:
    """Porter stems of the tokens of a normalized keyword."""
    stemmer = _porter()
    return tuple(stemmer.stem(tok) for tok in normalized.split())
