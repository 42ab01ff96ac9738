"""Keyword text normalization, tokenization and stemming (docs/metrics.md §1–2)."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import cast

from kweval.extras import require

# Lower-case ASCII words separated by single spaces are already normal: skip the Unicode work.
_ALREADY_NORMAL = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")


_KEPT_CATEGORIES = frozenset("LNM")  # letters, numbers, marks (docs/metrics.md §1)


def _kept(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in _KEPT_CATEGORIES


# ASCII text: NFKC leaves it as it is and casefold() is lower(), so one bytes.translate() lowers it and drops what
# _kept() would (whitespace becomes a space, which split() treats alike).
_ASCII_LOWER = bytes(32 if chr(i).isspace() else ord(chr(i).lower()) for i in range(128)) + bytes(range(128, 256))
_ASCII_NOT_KEPT = bytes(i for i in range(128) if not _kept(chr(i)))


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
        return " ".join(text.encode("ascii").translate(_ASCII_LOWER, _ASCII_NOT_KEPT).decode("ascii").split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if _kept(ch))
    return " ".join(kept.split())


# normalize_many joins ASCII values with this character, which normalize() drops (so no normalized value holds one).
_JOIN = "\x00"
_JOIN_BYTE = _JOIN.encode("ascii")
_NOT_KEPT_BUT_JOIN = _ASCII_NOT_KEPT.replace(_JOIN_BYTE, b"")
_SPACE_RUN = re.compile(rb"  +")


def _normalize_ascii_joined(texts: list[str]) -> list[str]:
    """`normalize` of ASCII texts free of `_JOIN`, all at once: their join lowered and cleaned by one bytes.translate().

    Whitespace is then collapsed in the whole join (runs of spaces, and the
    spaces beside a join or at either end), so no Python call is made per text.
    """
    if not texts:
        return []
    joined = _JOIN.join(texts).encode("ascii").translate(_ASCII_LOWER, _NOT_KEPT_BUT_JOIN)
    joined = _SPACE_RUN.sub(b" ", joined)
    joined = joined.replace(b" " + _JOIN_BYTE, _JOIN_BYTE).replace(_JOIN_BYTE + b" ", _JOIN_BYTE).strip(b" ")
    return joined.decode("ascii").split(_JOIN)


def _joinable(text: str) -> bool:
    return text.isascii() and _JOIN not in text


def normalize_many(values: Sequence[object]) -> list[str]:
    """`normalize` of each value ("" for anything not a string); a value already normal is returned itself.

    ASCII values (nearly all keywords and review texts) are normalized
    together (`_normalize_ascii_joined`), the others one by one.  Returning
    an already-normal value itself, not an equal copy, keeps a keyword and
    its norm one object in memory.  The common case (all strings, all
    joinable) is checked by C-level passes, with no Python call per value.
    """
    texts: list[str]
    if all(map(isinstance, values, itertools.repeat(str))):
        texts = cast("list[str]", list(values))  # every value is a str: checked just above
        if all(map(str.isascii, texts)) and not any(map(str.__contains__, texts, itertools.repeat(_JOIN))):
            return [t if t == n else n for t, n in zip(texts, _normalize_ascii_joined(texts))]
    else:
        texts = [v if isinstance(v, str) else "" for v in values]
    joinable = list(map(_joinable, texts))
    in_bulk = [t for t, ok in zip(texts, joinable) if ok]
    normalized = iter(_normalize_ascii_joined(in_bulk))
    out = [next(normalized) if ok else normalize(t) for t, ok in zip(texts, joinable)]
    return [t if t == n else n for t, n in zip(texts, out)]


@lru_cache(maxsize=1)
def _porter() -> Callable[[str], str]:
    """NLTK's Porter stemmer, as pke and KPEval use; loaded only when stem matching is asked for, without the rest of
    NLTK (`stemming.load_porter`: the `nltk` package's import takes seconds)."""
    from kweval.text.stemming import load_porter

    try:
        return load_porter()
    except ImportError:
        require("nltk.stem.porter", "stem", "stem matching")  # names the extra to install
        raise


@lru_cache(maxsize=1)
def _stem_word() -> Callable[[str], str]:
    """Speed: Porter's stem of one token, through the process's persistent stem cache (`stemming.shared_stems`:
    the stems of earlier runs read from disk, new ones kept for the next; bounded).

    Plain definition: `_porter()(token)`; a token's stem never changes, and the
    explorer and the failure categories stem the same GT words for every review
    of a movie (tests/test_present.py checks the two agree).  NLTK is loaded first: a stem read from the cache
    must not hide a missing extra.
    """
    from kweval.text.stemming import shared_stems

    _porter()
    return shared_stems().stem


def stem_tokens(normalized: str) -> tuple[str, ...]:
    """Porter stems of the tokens of a normalized keyword."""
    stem = _stem_word()
    return tuple(stem(tok) for tok in normalized.split())
