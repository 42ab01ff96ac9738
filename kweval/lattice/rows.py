"""A collection × model as flat rows, read once per reading convention (the lattice's first stages).

`Reading`: every gold and predicted phrase of every document as one row (document, phrase), under one
`split` × `empty_list` setting.  `Words`: those rows under one tokenizer × stemming, as integer codes of
their words (stems), their words before stemming and their stems joined by '_' (the repeat keys), with
the flags the invalid-prediction filters read.  `presence`: whether each row's phrase is present in its
document under a present rule.  Each phrase and document is read by `kweval.keyphrase.protocols`' own
functions (`read_phrase`, `document_words`), so every row is what `score_documents` reads.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kweval.keyphrase import phrases
from kweval.keyphrase.protocols import Protocol, document_text, read_phrase


@dataclass(frozen=True)
class Reading:
    """Gold and predicted rows of every document (in document order, then list order) under a list reading."""

    gold_doc: np.ndarray  # int64, per gold row: its document (position in the collection's documents)
    gold_phrase: list[str]
    pred_doc: np.ndarray
    pred_phrase: list[str]


def read_rows(
    docs: Sequence[str],
    gold: Mapping[str, Sequence[str]],
    predictions: Mapping[str, Sequence[str]],
    split: str,
    empty_list: str,
) -> Reading:
    """Every document's gold and prediction list read under `split` and `empty_list` (`phrases.read_list`)."""
    gold_lists = [phrases.read_list(split, empty_list, gold[d]) for d in docs]
    pred_lists = [phrases.read_list(split, empty_list, predictions.get(d, ())) for d in docs]
    return Reading(
        np.repeat(np.arange(len(docs)), [len(g) for g in gold_lists]),
        list(itertools.chain.from_iterable(gold_lists)),
        np.repeat(np.arange(len(docs)), [len(p) for p in pred_lists]),
        list(itertools.chain.from_iterable(pred_lists)),
    )


@dataclass(frozen=True)
class Side:
    """One side's rows (gold or predictions) under a tokenizer × stemming: codes of their words and repeat keys."""

    doc: np.ndarray  # int64
    words: np.ndarray  # int64 code of the (stemmed) words: equal codes, equal words
    keys: dict[str, np.ndarray]  # repeat key codes by `dedup_key` setting ("words", "stems", "joined")
    no_words: np.ndarray  # bool: the phrase has no word (kweval's invalid filter)
    meng_valid: np.ndarray  # bool: OpenNMT-kpg's validity (\W words, none exactly 'unk')


@dataclass(frozen=True)
class Words:
    """A `Reading` under one tokenizer × stemming; `vocabulary[c]` are the words of code c (both sides share it)."""

    gold: Side
    pred: Side
    vocabulary: list[phrases.Words]


def read_words(reading: Reading, protocol: Protocol) -> Words:
    """The rows' words under `protocol`'s tokenizer and stemming (each distinct phrase read once)."""
    stems: dict[phrases.Words, int] = {}
    unstemmed: dict[phrases.Words, int] = {}
    joined: dict[str, int] = {}

    def side(doc: np.ndarray, texts: list[str]) -> Side:
        distinct = list(dict.fromkeys(texts))
        read = [read_phrase(protocol, t) for t in distinct]
        per_kind = {
            "stems": [stems.setdefault(w, len(stems)) for _, w in read],
            "words": [unstemmed.setdefault(u, len(unstemmed)) for u, _ in read],
            "joined": [joined.setdefault("_".join(w), len(joined)) for _, w in read],
        }
        of_text = {t: i for i, t in enumerate(distinct)}
        row = np.fromiter(map(of_text.__getitem__, texts), dtype=np.int64, count=len(texts))
        keys = {kind: np.asarray(values, dtype=np.int64)[row] for kind, values in per_kind.items()}
        no_words = np.asarray([not w for _, w in read], dtype=bool)[row]
        valid = np.asarray([phrases.is_valid("meng", t, ()) for t in distinct], dtype=bool)[row]
        return Side(doc, keys["stems"], keys, no_words, valid)

    gold = side(reading.gold_doc, reading.gold_phrase)
    pred = side(reading.pred_doc, reading.pred_phrase)
    return Words(gold, pred, list(stems))


def haystacks(docs: Sequence[str], texts: Mapping[str, str | None], protocol: Protocol) -> list[str | None]:
    """Each document's words joined by spaces under `protocol`'s tokenizer and stemming (None without a text)."""
    return [None if (text := texts.get(d)) is None else document_text(protocol, text) for d in docs]


def presence(words: Words, side: Side, hay: Sequence[str | None], present_rule: str, matching: str) -> np.ndarray:
    """Per row of `side`: whether its phrase is present in its document (`protocols.occurs`, by codes and C-level
    substring tests): its words a run of the document's (their joins padded by spaces), or, under the present rule
    `matching` with approx matching, its words' join inside the document's.  Each distinct (document, phrase) is
    tested once; each phrase's needle and each document's padded text are built once."""
    n_codes = len(words.vocabulary)
    pairs, at = np.unique(side.doc * n_codes + side.words, return_inverse=True)
    doc, code = np.divmod(pairs, n_codes)
    joined = [" ".join(v) for v in words.vocabulary]
    blank = np.array([not j.strip() for j in joined], dtype=bool)
    empty = np.array([not v for v in words.vocabulary], dtype=bool)
    if not (present_rule == "matching" and matching == "approx"):
        joined = [f" {j} " for j in joined]
        hay = [f" {h} " if h else "" for h in hay]  # each document padded once; the pairs share its string
    texts = [hay[d] or "" for d in doc.tolist()]
    needles = [joined[c] for c in code.tolist()]
    found = np.fromiter(map(operator.contains, texts, needles), dtype=bool, count=len(needles))
    out = found & ~blank[code]
    out[empty[code]] = present_rule == "words_empty_everywhere"
    return out[at.reshape(-1)]
