"""Phrases and documents as words under a protocol's reading conventions (`kweval.keyphrase.conventions`).

The list conventions (`split`, `empty_list`), the tokenizers, stemming, the invalid-prediction filters and
the repeat keys, each a small function of plain strings; `kweval.keyphrase.protocols` scores with them and
`kweval.keyphrase.lattice` reads them once per distinct phrase.  Plain Python, no numpy (the `--protocol`
command's process stays small).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kweval.data.keyphrase import split_lines
from kweval.text.stemming import save_shared_stems, shared_stems

KPEVAL_SEPARATOR = ";"  # KPEval's kp_sep: one line holds a document's phrases, joined by it
KPEVAL_TITLE_SEPARATOR = "[sep]"  # KPEval's title_sep, removed from the (lower-cased) document
MENG_UNK = "unk"  # OpenNMT-kpg's unk token under split_nopunc (kp_evaluate.py), compared with raw words
_NON_WORD = re.compile(r"\W")

Words = tuple[str, ...]


def stem_words(words: Sequence[str]) -> Words:
    """NLTK's Porter stems (lower-cased) of `words`, through the process's persistent stem cache
    (`kweval.text.stemming.shared_stems`, shared with stem matching): every preset's stemmer."""
    return shared_stems().stem_many(words)


_notes: list[str] = []


def save_stems() -> None:
    """Keep the stems computed so far for the next run (no-op when nothing new was stemmed); what went wrong is
    kept for `stem_cache_notes`."""
    _notes.extend(save_shared_stems())


def stem_cache_notes() -> list[str]:
    """What went wrong with the persistent stem cache since the last call (a write refused by a full disk), each
    once however often it was tried."""
    notes = list(dict.fromkeys(_notes))
    _notes.clear()
    return notes


def read_list(split: str, empty_list: str, phrases: Sequence[str]) -> list[str]:
    """A gold or prediction list as the `split` and `empty_list` conventions read it.

    >>> read_list("semicolon", "one_empty_phrase", ["alpha; beta", "gamma"]), read_list("semicolon", "no_phrase", [])
    (['alpha', ' beta', 'gamma'], [])
    """
    out = [p for phrase in phrases for p in phrase.split(KPEVAL_SEPARATOR)] if split == "semicolon" else list(phrases)
    return [""] if not phrases and empty_list == "one_empty_phrase" else out


def list_sources(split: str, empty_list: str, phrases: Sequence[str]) -> list[int]:
    """Per phrase of `read_list`'s reading, the index of the phrase as given that it comes from (-1: the empty
    list's one empty phrase).

    >>> [list_sources("semicolon", "one_empty_phrase", given) for given in (["alpha; beta", "gamma"], [])]
    [[0, 0, 1], [-1]]
    """
    out = [i for i, phrase in enumerate(phrases) for _ in read_list(split, empty_list, [phrase])]
    return out or [-1] * len(read_list(split, empty_list, phrases))


def kpeval_phrases(phrases: Sequence[str]) -> list[str]:
    """A list as KPEval reads it: joined into its one-line format and split on ';' again.

    So a phrase holding ';' is several, and an empty list is one empty phrase
    (`[]` -> `[""]`), for predictions and gold alike (metric.py process_kp_string).
    """
    return read_list("semicolon", "one_empty_phrase", phrases)


def tokens(tokenizer: str, phrase: str) -> list[str]:
    """The words of a phrase under `tokenizer`, before stemming."""
    if tokenizer == "kweval":
        from kweval.text.normalize import normalize

        return normalize(phrase).split()
    if tokenizer == "whitespace":
        return phrase.split()
    if tokenizer == "space":  # KPEval: lower-case, the BERT '##' joins, then single spaces
        cleaned = phrase.lower().strip().replace(" ##", "").replace("[ digit ]", "[digit]")
        return [w.strip().lower() for w in cleaned.split(" ")]
    if tokenizer == "nonword":
        return [w.lower() for w in _NON_WORD.split(phrase) if w]
    raise ValueError(f"unknown tokenizer {tokenizer!r}")


def kpeval_document_words(text: str) -> list[str]:
    """The unstemmed words of a document as KPEval splits it (metric.py process_single_doc).

    The physical lines (\\r, \\n only) joined by spaces, stripped and
    lower-cased; '[sep]' removed with each side stripped; then split on single
    spaces.  KPEval stops on two or more '[sep]'; here every one is removed
    (`document_problems` reports the document).
    """
    line = " ".join(split_lines(text)).strip().lower()
    return [w for part in line.split(KPEVAL_TITLE_SEPARATOR) for w in part.strip().split(" ")]


def document_tokens(tokenizer: str, text: str) -> list[str]:
    """The words of a document under `tokenizer`, before stemming (KPEval reads one line per document)."""
    if tokenizer == "space":
        return [w.strip().lower() for w in kpeval_document_words(text)]
    return tokens(tokenizer, text)


def stemmed(stemming: str, words: Sequence[str]) -> Words:
    """`words` under the `stemming` convention."""
    return stem_words(words) if stemming == "porter" else tuple(words)


def is_valid(invalid: str, phrase: str, words: Words) -> bool:
    """Whether a prediction survives the `invalid` filter: kweval drops one without words, OpenNMT-kpg one with no
    \\W-split word or a raw word exactly 'unk' (onmt/keyphrase/utils.py validate_phrases: case-sensitive, not
    stemmed)."""
    if invalid == "none":
        return True
    if invalid == "meng":
        raw = [w for w in _NON_WORD.split(phrase) if w]
        return bool(raw) and MENG_UNK not in raw
    return bool(words)


def repeat_key(dedup_key: str, unstemmed: Words, words: Words) -> object:
    """What makes two phrases repeats under `dedup_key`: their words before stemming, their stems, or their stems
    joined by '_'."""
    if dedup_key == "joined":
        return "_".join(words)
    return unstemmed if dedup_key == "words" else words


def title_separators(tokenizer: str, text: str) -> int:
    """How many '[sep]' a document holds where the tokenizer reads it as KPEval does (0 otherwise)."""
    return text.lower().count(KPEVAL_TITLE_SEPARATOR) if tokenizer == "space" else 0
