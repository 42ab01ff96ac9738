"""Grounding: whether each predicted phrase is supported by its document (docs/metrics.md §12).

Every prediction of a document with text gets one grade, the first that applies:

1. ``present``: it occurs in the text under the present rule in force (the
   match mode's, `kweval.text.present`, or a `--protocol` preset's): the
   caller passes the rule (`PresentRule`);
2. ``supported``: not present, but either every one of its words occurs in
   one sentence of the text (words split at punctuation: YAKE's "Wales
   defects" from "Stone–Wales defects", KeyBERT's "jazz soundtrack" from
   "the jazz on the soundtrack"), or its embedding has cosine ≥ τ_g with a
   sentence or phrase of the text (`kweval.beyond.units`; a paraphrase);
3. ``unsupported``: neither (a candidate hallucination).

A phrase without words is unsupported; a document without text grades
nothing (-1: undefined).  Embeddings come from the caller's `Embedder`
(`store_embedder`: all-MiniLM-L6-v2 through the persistent store, each
distinct text embedded once); only documents holding a prediction that
reaches step 2's cosine test have their units embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kweval.beyond.units import DocumentUnits, document_units, words
from kweval.text import present as present_text
from kweval.text.normalize import normalize_many

PRESENT, SUPPORTED, UNSUPPORTED = "present", "supported", "unsupported"
GRADES = (PRESENT, SUPPORTED, UNSUPPORTED)
UNGRADED = -1  # a prediction of a document without text
TAU_G = 0.4  # the default τ_g (docs/metrics.md §12: calibrated on SemEval2017 paraphrases and unrelated phrases)
LEXICAL, SEMANTIC = "words", "cosine"  # how a supported prediction is supported

PresentRule = Callable[[Sequence[str], str], Sequence[bool]]  # (phrases, text) -> whether each is present
Embedder = Callable[[list[str]], np.ndarray]  # texts -> unit rows, one per text


@dataclass
class Grounding:
    """Per prediction (the lists' phrases end to end, in list order): its grade and what supports it."""

    grade: np.ndarray  # int8: index in GRADES, UNGRADED without text
    via: list[str]  # supported: LEXICAL or SEMANTIC; else ""
    support: list[str]  # supported: the sentence (words) or unit (cosine); unsupported: the nearest unit; else ""
    cosine: np.ndarray  # float32: the best cosine to a unit (NaN where no cosine was needed)


def ground(
    texts: Sequence[str | None],
    lists: Sequence[Sequence[str]],
    present: PresentRule,
    embed: Embedder,
    threshold: float = TAU_G,
) -> Grounding:
    """The grade of every phrase of `lists` (`lists[i]` predicted for the document `texts[i]`).

    Stages: the present rule, the words-in-one-sentence test, then one
    embedding call for every phrase and unit still needed and the cosines
    per document (`_semantic`).
    """
    sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    n = int(sizes.sum())
    out = Grounding(np.full(n, UNGRADED, np.int8), [""] * n, [""] * n, np.full(n, np.nan, np.float32))
    units: dict[str, DocumentUnits] = {}  # per distinct text (several models predict for one document)
    pending: list[tuple[int, int]] = []  # (document, first row of its list): phrases left for the cosine test
    start = 0
    for doc, (text, phrases) in enumerate(zip(texts, lists)):
        if phrases and isinstance(text, str) and text.strip():
            found = units.get(text) or units.setdefault(text, document_units(text))
            if _lexical(out, start, text, list(phrases), present, found):
                pending.append((doc, start))
        start += len(phrases)
    if pending:
        _semantic(out, pending, texts, lists, units, embed, threshold)
    return out


def _lexical(out: Grounding, start: int, text: str, phrases: list[str], present: PresentRule, found) -> bool:
    """Grade one list's present phrases and those supported by one sentence's words; True if any is left."""
    flags = present(phrases, text)
    left = False
    for i, (phrase, flag) in enumerate(zip(phrases, flags)):
        row = start + i
        mine = words(phrase)
        if flag and mine:
            out.grade[row] = 0
            continue
        sentence = next((s for s, w in zip(found.sentences, found.sentence_words) if mine <= w), None) if mine else None
        if sentence is not None:
            out.grade[row], out.via[row], out.support[row] = 1, LEXICAL, sentence
        elif not mine:
            out.grade[row] = 2  # nothing to ground
        else:
            left = True
    return left


def _semantic(
    out: Grounding,
    pending: list[tuple[int, int]],
    texts: Sequence[str | None],
    lists: Sequence[Sequence[str]],
    units: dict[str, DocumentUnits],
    embed: Embedder,
    threshold: float,
) -> None:
    """The cosine test of the phrases still ungraded: one embedding call for all their texts and their documents'
    units, then one phrases × units product per document."""
    asked: list[tuple[list[int], list[str], tuple[str, ...]]] = []  # per document: rows, their phrases, its units
    for doc, start in pending:
        rows = [start + i for i in range(len(lists[doc])) if out.grade[start + i] == UNGRADED]
        asked.append((rows, [lists[doc][r - start] for r in rows], units[str(texts[doc])].units))
    phrase_norms = {r: n for rows, phrases, _ in asked for r, n in zip(rows, normalize_many(phrases))}
    unit_norms = {u: n for _, _, us in asked for u, n in zip(us, normalize_many(list(us)))}
    distinct = list(dict.fromkeys([*phrase_norms.values(), *(n for n in unit_norms.values() if n)]))
    vectors = dict(zip(distinct, np.asarray(embed(distinct), dtype=np.float32))) if distinct else {}
    tau = np.float32(threshold)
    for rows, _, doc_units in asked:
        usable = [u for u in doc_units if unit_norms[u]]
        if not usable:
            out.grade[rows] = 2
            continue
        cos = np.stack([vectors[phrase_norms[r]] for r in rows]) @ np.stack([vectors[unit_norms[u]] for u in usable]).T
        best = cos.argmax(axis=1)
        for row, at, value in zip(rows, best.tolist(), cos[np.arange(len(rows)), best].tolist()):
            out.cosine[row] = value
            out.support[row] = usable[at]
            supported = np.float32(value) >= tau
            out.grade[row] = 1 if supported else 2
            out.via[row] = SEMANTIC if supported else ""


def counts(grounding: Grounding, sizes: Sequence[int]) -> dict[str, np.ndarray]:
    """Per list (of `sizes` phrases, end to end): how many were graded, present, supported, unsupported."""
    lengths = np.asarray(sizes, dtype=np.int64)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    graded = grounding.grade >= 0
    out = {"n_grounded": np.bincount(owner[graded], minlength=len(lengths))}
    for code, name in enumerate(("n_grounded_present", "n_grounded_supported", "n_unsupported")):
        out[name] = np.bincount(owner[grounding.grade == code], minlength=len(lengths))
    return {k: v.astype(np.int64) for k, v in out.items()}


SHARES = {
    "grounded_present": "n_grounded_present",
    "grounded_supported": "n_grounded_supported",
    "unsupported": "n_unsupported",
}


def shares(found: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The grounding shares of `counts`: each grade's count / the graded predictions (NaN where none was graded)."""
    graded = found["n_grounded"].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {name: np.where(graded > 0, found[count] / graded, np.nan) for name, count in SHARES.items()}


def match_mode_rule(mode: str) -> PresentRule:
    """kweval's present rule under a match mode (`kweval.text.present`): the phrases normalized, each searched in
    the text searched as that mode searches it (each text prepared once: several models ground against it)."""

    @lru_cache(maxsize=256)
    def haystack(text: str) -> str:
        return present_text.searchable([text], mode)[0]

    def rule(phrases: Sequence[str], text: str) -> list[bool]:
        found = haystack(text)
        return [bool(k.strip()) and k in found for k in present_text.searchable_keywords(normalize_many(phrases), mode)]

    return rule


def store_embedder(
    model_id: str, backend: str, known: Mapping[str, np.ndarray] | None = None
) -> tuple[Embedder, list[str]]:
    """(an `Embedder` reading and filling the persistent embedding store of `model_id` × `backend`, the notes the
    store leaves: a damaged or unwritable store).  `known`: vectors this run already holds (the semantic metrics'
    keywords), served without a store read."""
    from kweval.embeddings import semantic
    from kweval.embeddings.store import EmbeddingStore

    kind = semantic.variant(backend)
    notes: list[str] = []
    store = EmbeddingStore(model_id, backend=kind[0], precision=kind[1], on_note=notes.append)
    held = dict(known or {})

    def embed(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in held]
        if missing:
            held.update(zip(missing, semantic.embed_texts(missing, model_id=model_id, store=store, backend=backend)))
        return np.stack([held[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    return embed, notes
