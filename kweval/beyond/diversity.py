"""Diversity of one prediction list, as KPEval defines it (metrics/diversity_metric.py; docs/metrics.md §12).

On the predictions as given, repeats included (before kweval's cleaning
removes them), each a normalized phrase with at least one word:

- ``dup_token_ratio`` = 1 − |distinct stemmed tokens| / |stemmed tokens| over
  all the list's tokens (Porter stems of the normalized words);
- ``self_similarity`` = the mean cosine over the list's pairs of phrases
  (i < j) of their embeddings; 1 for a list of one.

A list without any phrase is undefined for both (NaN, left out of the
means): KPEval has no one value for it (its corpus scorer writes 1 and 0
where no token is left, but its reader first turns an empty list into one
empty phrase, which gives 0 and 1), and an abstention is no repetitive list.
KPEval embeds with an mpnet model; kweval with the bundled all-MiniLM-L6-v2
(the embedding store's vectors of the normalized phrases), so the values
differ from KPEval's own by the model only.

`dup_token_ratio` and `self_similarity` are the plain definitions for one
list (KPEval's functions: 1 and 0 for no token / no phrase); `list_diversity`
computes both for many lists at once (the pair sum from the sum of the
vectors: `pair_mean_cosine`), tested against them, and
`lists_diversity` does so from the phrases themselves (normalized, stemmed,
embedded), for the pipeline and the `--protocol` presets alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from kweval.extras import MissingExtra
from kweval.text.normalize import normalize_many, stem_tokens

EMPTY_DUP, EMPTY_SIMILARITY, ONE_SIMILARITY = 1.0, 0.0, 1.0  # KPEval's values without tokens / for one phrase


def dup_token_ratio(tokens: Sequence[Sequence[str]]) -> float:
    """1 − distinct / all tokens of one list's phrases (each phrase its stemmed tokens); 1 without any token."""
    flat = [t for phrase in tokens for t in phrase]
    return EMPTY_DUP if not flat else 1.0 - len(set(flat)) / len(flat)


def self_similarity(vectors: np.ndarray) -> float:
    """The mean pairwise cosine of one list's phrase embeddings (rows); 0 for none, 1 for one."""
    vectors = np.asarray(vectors, dtype=np.float64)
    n = len(vectors)
    if n == 0:
        return EMPTY_SIMILARITY
    if n == 1:
        return ONE_SIMILARITY
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cos = unit @ unit.T
    return float(cos[np.triu_indices(n, k=1)].mean())


SUM_BLOCK_ROWS = 256  # rows converted and summed at once by `bucketed_unit_sums` (a block stays in the CPU's cache)


def bucketed_unit_sums(
    group: np.ndarray, vectors: np.ndarray, n_groups: int, index: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Speed: (Σ v/|v| over each group's rows [n_groups, d], in float64; each group's rows with |v| > 0), row i's
    vector `vectors[index[i]]` (or `vectors[i]`); a zero row adds nothing.

    The groups of one size s are stacked as blocks of (groups, s, d): each
    block is gathered from the float32 vectors, made float64 (the sums must
    hold to ~1e-15), and its unit rows summed per group by one batched
    product (the weights 1/|v| times the rows), a block of at most
    `SUM_BLOCK_ROWS` rows at a time: no float64 copy of all the rows, no
    per-dimension pass, no sparse-matrix import.
    """
    group, vectors = np.asarray(group, dtype=np.int64), np.asarray(vectors)
    index = np.arange(len(group)) if index is None else np.asarray(index, dtype=np.int64)
    order = np.argsort(group, kind="stable")  # each group's rows together
    rows = index[order]
    n = np.bincount(group, minlength=n_groups)
    first = np.cumsum(n) - n  # each group's first position in `rows`
    total = np.zeros((n_groups, vectors.shape[1]))
    nonzero = np.zeros(n_groups)
    for size in np.unique(n[n > 0]).tolist():
        groups = np.flatnonzero(n == size)
        at = rows[first[groups][:, None] + np.arange(size)]  # [groups, size]: each group's vectors
        step = max(SUM_BLOCK_ROWS // size, 1)
        for a in range(0, len(groups), step):
            block = np.asarray(vectors[at[a : a + step]], dtype=np.float64)
            squares = np.einsum("gsd,gsd->gs", block, block)
            weight = np.divide(1.0, np.sqrt(squares), out=np.zeros_like(squares), where=squares > 0)
            total[groups[a : a + step]] = (weight[:, None, :] @ block)[:, 0, :]
            nonzero[groups[a : a + step]] = np.count_nonzero(squares, axis=1)
    return total, nonzero


def pair_mean_cosine(
    group: np.ndarray, vectors: np.ndarray, n_groups: int, index: np.ndarray | None = None
) -> np.ndarray:
    """Speed: `self_similarity` of every group's rows at once (`group`: each row's group, 0..n_groups-1; a row's
    vector is `vectors[index[row]]`, or `vectors[row]` without `index`).

    The sum of the cosines over pairs i < j of unit vectors is
    (|Σ v|² − Σ |v|²) / 2, so the sums of the unit vectors per group
    (`bucketed_unit_sums`) replace the n × n products.  In float64, it
    equals the pairwise mean to ~1e-15.
    """
    total, squares = bucketed_unit_sums(group, vectors, n_groups, index)  # |unit|² = 1 for each nonzero row
    n = np.bincount(np.asarray(group, dtype=np.int64), minlength=n_groups).astype(np.float64)
    pairs = n * (n - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (np.einsum("gd,gd->g", total, total) - squares) / 2 / pairs
    return np.where(n == 0, EMPTY_SIMILARITY, np.where(n == 1, ONE_SIMILARITY, mean))


TokenCodes = tuple[np.ndarray, np.ndarray]  # (each phrase's token count, each token's code: equal codes, equal tokens)


def token_codes(tokens: Sequence[Sequence[str]]) -> TokenCodes:
    """The `TokenCodes` of phrases given as their tokens (a code per distinct token string)."""
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    code_of: dict[str, int] = {}
    codes = (code_of.setdefault(t, len(code_of)) for phrase in tokens for t in phrase)
    return counts, np.fromiter(codes, dtype=np.int64, count=int(counts.sum()))


def stem_codes(phrases: Sequence[str]) -> TokenCodes:
    """Speed: `token_codes([stem_tokens(p) for p in phrases])` up to the numbering of the codes, for normalized
    phrases: the tokens read by one split of the phrases joined, each distinct word stemmed once (one
    `stem_tokens` call), a code per distinct stem."""
    counts = np.fromiter(map(len, map(str.split, phrases)), dtype=np.int64, count=len(phrases))
    tokens = " ".join(phrases).split()
    words = list(dict.fromkeys(tokens))
    code_of: dict[str, int] = {}
    word_code = dict(zip(words, (code_of.setdefault(s, len(code_of)) for s in stem_tokens(" ".join(words)))))
    return counts, np.fromiter(map(word_code.__getitem__, tokens), dtype=np.int64, count=len(tokens))


def token_dup_ratios(group: np.ndarray, codes: TokenCodes, n_groups: int) -> np.ndarray:
    """`dup_token_ratio` of every group's phrases at once (`group`: each phrase's group; `codes`: their tokens)."""
    counts, token = codes
    owner = np.repeat(np.asarray(group, dtype=np.int64), counts)
    total = np.bincount(owner, minlength=n_groups)
    width = int(token.max()) + 1 if len(token) else 1
    distinct = np.bincount(np.unique(owner * width + token) // width, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total == 0, EMPTY_DUP, 1.0 - distinct / total)


def list_diversity(
    group: np.ndarray,
    tokens: Sequence[Sequence[str]] | TokenCodes,
    vectors: np.ndarray | None,
    n_groups: int,
    index: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """{"dup_token_ratio", "self_similarity"} per group from its phrases' stems (each phrase's tokens, or their
    `TokenCodes`) and embeddings (a phrase's vector: `vectors[index[i]]`, or row i without `index`; None:
    self_similarity not computed); NaN for a group without a phrase (undefined)."""
    group = np.asarray(group, dtype=np.int64)
    if isinstance(tokens, tuple) and len(tokens) == 2 and isinstance(tokens[0], np.ndarray):
        codes: TokenCodes = (tokens[0], np.asarray(tokens[1]))
    else:
        codes = token_codes(cast(Sequence[Sequence[str]], tokens))
    empty = np.bincount(group, minlength=n_groups) == 0
    dup = token_dup_ratios(group, codes, n_groups)
    out = {"dup_token_ratio": np.where(empty, np.nan, dup)}
    if vectors is not None:
        out["self_similarity"] = np.where(empty, np.nan, pair_mean_cosine(group, vectors, n_groups, index))
    return out


def lists_diversity(lists: Sequence[Sequence[str]], embed: Callable[[list[str]], np.ndarray]) -> dict[str, np.ndarray]:
    """`list_diversity` of each list of phrases as given (each normalized; those without a word left out), the
    stems from kweval's Porter stemmer (`stem_codes`) and the vectors from `embed`, each distinct phrase embedded
    once."""
    normalized = normalize_many([phrase for phrases in lists for phrase in phrases])
    owner = np.repeat(np.arange(len(lists), dtype=np.int64), [len(phrases) for phrases in lists])
    kept = np.flatnonzero(np.fromiter(map(bool, normalized), dtype=bool, count=len(normalized)))
    flat = [normalized[i] for i in kept]
    try:
        codes = stem_codes(flat)
    except MissingExtra:
        raise MissingExtra(
            "--diversity: needs nltk (Porter stems), which is not installed: pip install 'kweval[stem]'"
        ) from None
    distinct = list(dict.fromkeys(flat))
    vectors = np.asarray(embed(distinct), dtype=np.float32) if distinct else np.zeros((0, 1), np.float32)
    at = {text: i for i, text in enumerate(distinct)}
    index = np.fromiter(map(at.__getitem__, flat), dtype=np.int64, count=len(flat))
    return list_diversity(owner[kept], codes, vectors, len(lists), index)
