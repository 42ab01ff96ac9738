"""What a prediction is grounded against: a document's sentences and phrases, and its words (docs/metrics.md §12).

- `sentences`: the text cut after `.`, `!`, `?` (before white space) and at
  line breaks;
- `phrases`: each sentence cut at punctuation that separates phrases
  (`,` `;` `:` brackets, quotes, dashes, `/`), the pieces with a word;
- `words`: lower-cased runs of letters and runs of digits, so every
  punctuation mark and every letter/digit boundary separates words:
  "Stone–Wales" is ``stone`` ``wales`` (kweval's normalization of a keyword
  removes the mark: ``stonewales``), "3mm" is ``3`` ``mm`` (extractors that
  drop digits write "using mm diameter").

Units are plain text as written (the explorer shows them); what is embedded
is their normalized form (`kweval.text.normalize`), as for keywords
(`kweval.beyond.grounding`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*[\r\n]+\s*")
_PHRASE_BREAK = re.compile(r"\s*(?:[,;:()\[\]{}\"“”«»/|]|\s[-–—]\s|[–—])\s*")
_NOT_WORD = re.compile(r"[^\w]+")
_WORD = re.compile(r"[^\W\d_]+|\d+")


def sentences(text: str) -> list[str]:
    """The sentences of a text, as written (stripped, non-empty)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def phrases(sentence: str) -> list[str]:
    """The pieces of one sentence between phrase-separating punctuation, as written (those with a word)."""
    pieces = [p.strip(" .!?'") for p in _PHRASE_BREAK.split(sentence)]
    return [p for p in pieces if _NOT_WORD.sub("", p)]


def words(text: str) -> frozenset[str]:
    """The words of a text or phrase: runs of letters and runs of digits of its NFKC, case-folded form."""
    return frozenset(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@dataclass(frozen=True)
class DocumentUnits:
    """One document's units: its sentences (with their word sets) and every distinct sentence or phrase."""

    sentences: tuple[str, ...]
    sentence_words: tuple[frozenset[str], ...]
    units: tuple[str, ...]  # sentences, then phrases that are not whole sentences; each distinct text once


def document_units(text: str) -> DocumentUnits:
    """The sentences and phrases of `text` (`sentences`, `phrases`), each distinct unit once."""
    found = sentences(text)
    units = dict.fromkeys(found)
    for sentence in found:
        units.update(dict.fromkeys(phrases(sentence)))
    return DocumentUnits(tuple(found), tuple(words(s) for s in found), tuple(units))
