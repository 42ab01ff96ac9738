"""Synthetic datasets shaped like the DNLP KeyBERT data, for tests and benchmarks.

`synthesize(...)` is a pure function of its arguments (same seed, same
dataset) that returns a `Dataset`; `write_synthetic` stores it in the tidy
layout (Parquet, the default) or the DNLP pickle layout.  Everything per
prediction row is drawn with numpy at once, so a million reviews take
seconds.

What makes it realistic enough to benchmark and test the evaluator:

- keywords are 1–3 words drawn from a Zipf-distributed vocabulary (a few
  common film words, then pseudo-words; each movie has its own topical head);
- every movie has a ranked GT list of a few hundred keywords (default
  250–650) with descending helpful votes;
- predictions mix exact GT keywords, partial matches (one word of a GT
  keyword: a substring; a GT keyword with an extra word: a superstring),
  unrelated phrases, and a few case/punctuation variants ("Star-Wars!");
- lists are ranked with KeyBERT-like scores (about 0.3–0.7, descending);
  most have 5 keywords, a few fewer; an occasional list is empty and an
  occasional cell is missing (the model did not run on that review);
- a model named "reranker" reorders the "base" model's keywords with new
  scores, as the real reranker does.

The random draws follow each other in a fixed order (the seed → dataset
mapping): per movie from its own seed (`_draw_movie`), then the reviews'
ratings.  Writing is `kweval.data.synth_files` (`write_synthetic`, also
importable from here).
"""

from __future__ import annotations

__all__ = ["GT_SHAPES", "LAYOUTS", "MODEL_NAMES", "SynthOptions", "model_names", "synthesize", "write_synthetic"]

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    PREDICTION_COLUMNS,
    REVIEW_COLUMNS,
    Dataset,
)
from kweval.data.synth_files import LAYOUTS, write_synthetic

GT_SHAPES = ("movie", "per-document")
MODEL_NAMES = ("base", "reranker", "sentiment", "metadata")

# The head of the vocabulary: words every movie review uses.  Short ones ("war",
# "art") also make the substring matches that approximate matching is about.
COMMON_WORDS = (
    "film movie story character scene star war action plot acting director music "
    "score cast hero villain battle effects visual dark humor love family time world "
    "classic sequel original trilogy fight space empire force jedi ending performance "
    "cinematography dialogue script epic adventure fun great best good bad art "
    "emotional journey mystery power fear hope dream life death friend"
).split()

_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "ch",
    "cl",
    "dr",
    "fl",
    "gr",
    "pl",
    "sh",
    "sk",
    "st",
    "th",
    "tr",
    "",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")
_CODAS = ("", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "ck", "x")


@dataclass(frozen=True)
class SynthOptions:
    """Knobs of `synthesize` beyond the sizes (defaults mimic the DNLP data)."""

    gt_min: int = 250
    gt_max: int = 650
    list_length: int = 5
    p_short: float = 0.03  # a list with 1..list_length-1 keywords
    p_empty: float = 0.002  # an empty list: a real, empty prediction
    p_missing: float = 0.003  # a missing cell: the model did not run (skipped)
    p_variant: float = 0.02  # a candidate written with other case/punctuation
    vocab_size: int = 20_000
    zipf_s: float = 0.9  # word frequencies
    popularity_s: float = 0.75  # keyword popularity within a movie
    n_noise: int = 6_000  # unrelated candidate phrases of a movie with 1,500 reviews
    heaps_beta: float = 0.65  # ... growing like (reviews / 1,500) ** beta (Heaps' law)
    text: bool = True  # give each review a short text (needed for highlighting)
    doc_gt_min: int = 3  # per-document GT (gt="per-document"): keywords per review, drawn from the movie's list
    doc_gt_max: int = 8


def _zipf_cdf(n: int, s: float) -> np.ndarray:
    weights = 1.0 / np.power(np.arange(1, n + 1, dtype="float64"), s)
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _draw(rng: np.random.Generator, cdf: np.ndarray, size) -> np.ndarray:
    """Indices drawn from the distribution whose cumulative weights are `cdf`."""
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), len(cdf) - 1)


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    """COMMON_WORDS, then distinct pseudo-words of 1–3 syllables (in Zipf rank order)."""
    words = dict.fromkeys(COMMON_WORDS)
    need = max(size - len(words), 0)
    while len(words) < size:
        n = int(need * 1.3) + 64
        n_syll = rng.choice([1, 2, 3], size=n, p=[0.15, 0.55, 0.30])
        parts = [
            rng.integers(0, len(_ONSETS), size=(n, 3)),
            rng.integers(0, len(_VOWELS), size=(n, 3)),
            rng.integers(0, len(_CODAS), size=(n, 3)),
        ]
        on, vo, co = (p.tolist() for p in parts)
        for i in range(n):
            w = "".join(_ONSETS[on[i][j]] + _VOWELS[vo[i][j]] + _CODAS[co[i][j]] for j in range(n_syll[i]))
            if len(w) >= 3:
                words.setdefault(w)
    return np.array(list(words)[:size], dtype=object)


def _phrases(rng: np.random.Generator, words: np.ndarray, cdf: np.ndarray, n: int, p_len) -> list[str]:
    """`n` phrases of 1–3 words, each word drawn from the movie's Zipf distribution."""
    lengths = rng.choice([1, 2, 3], size=n, p=p_len)
    picks = words[_draw(rng, cdf, (n, 3))].tolist()
    # a phrase never repeats a word ("scene scene" is dropped by the callers' dedup of "")
    return [" ".join(dict.fromkeys(picks[i][: lengths[i]])) for i in range(n)]


def _variant(rng: np.random.Generator, phrase: str) -> str:
    """The same keyword as a user might type it: other case, punctuation, spacing."""
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return phrase.title()
    if kind == 1:
        return phrase.replace(" ", "-") + "!"
    if kind == 2:
        return phrase.upper()
    return " " + phrase.replace(" ", "  ") + "'s"


def _movie_candidates(rng: np.random.Generator, vocab: np.ndarray, cdf: np.ndarray, opts: SynthOptions, n_noise: int):
    """A movie's ranked GT list and the candidate keywords its reviews draw from.

    Returns (gt keywords, candidate keywords, is_gt_related mask).
    """
    n_common = len(COMMON_WORDS)
    # every movie has its own topical words after the shared head
    order = np.concatenate([np.arange(n_common), n_common + rng.permutation(len(vocab) - n_common)])
    words = vocab[order]

    n_gt = int(rng.integers(opts.gt_min, opts.gt_max + 1))
    gt: list[str] = []
    while len(gt) < n_gt:
        gt = list(dict.fromkeys(gt + _phrases(rng, words, cdf, 2 * n_gt, [0.2, 0.65, 0.15])))
    gt = gt[:n_gt]

    multi = [g.split() for g in gt if " " in g]
    pick = (rng.random(len(multi)) * np.array([len(ws) for ws in multi], dtype="float64")).astype(np.int64).tolist()
    sub = [ws[i] for ws, i in zip(multi, pick)]
    short = [g for g in gt if g.count(" ") < 2]  # superstrings stay within 3 words
    extra = words[_draw(rng, cdf, len(short))].tolist()
    front = rng.random(len(short)) < 0.5
    sup = [f"{e} {g}" if f else f"{g} {e}" for g, e, f in zip(short, extra, front) if e not in g.split()]
    related = list(dict.fromkeys(gt + sub + sup))
    seen = set(related)
    noise = [p for p in dict.fromkeys(_phrases(rng, words, cdf, n_noise, [0.35, 0.5, 0.15])) if p not in seen]
    cands = related + noise
    is_related = np.zeros(len(cands), dtype=bool)
    is_related[: len(related)] = True
    variants = np.flatnonzero(rng.random(len(cands)) < opts.p_variant)
    cands = cands + [_variant(rng, cands[i]) for i in variants]
    is_related = np.concatenate([is_related, is_related[variants]])
    return gt, np.array(cands, dtype=object), is_related


def _document_gt(
    rng: np.random.Generator, movie: str, gt: list[str], first_model: np.ndarray, first_review: int, opts: SynthOptions
) -> pd.DataFrame:
    """Each review's own unranked GT: doc_gt_min..doc_gt_max keywords, some of them among the first model's
    keywords for the review (`first_model`, reviews × list length), the rest drawn from the movie's list by
    popularity."""
    n_reviews, list_length = first_model.shape
    width = min(opts.doc_gt_max, len(gt))
    picks = np.asarray(gt, dtype=object)[_unique_rows(rng, _zipf_cdf(len(gt), opts.popularity_s), n_reviews, width)]
    n_found = np.minimum(rng.binomial(list_length, 0.4, size=n_reviews), width)  # keywords a model can find
    slot = np.arange(width)[None, :]
    found = first_model[:, np.minimum(np.arange(width), list_length - 1)]  # the first model's keywords, in order
    picks = np.where(slot < n_found[:, None], found, picks)
    lengths = np.asarray(rng.integers(min(opts.doc_gt_min, width), width + 1, size=n_reviews))
    keep = slot < lengths[:, None]
    review = np.repeat(np.arange(first_review, first_review + n_reviews), lengths)
    return pd.DataFrame(
        {
            "movie": pd.Series([movie] * len(review), dtype=object),
            "rank": np.zeros(len(review), dtype="int64"),
            "keyword": pd.Series(picks[keep], dtype=object),
            "helpful": np.nan,
            "not_helpful": np.nan,
            "review_id": pd.Series([str(8_000_000 + i) for i in review.tolist()], dtype=object),
        }
    )


def _model_cdf(rng: np.random.Generator, is_related: np.ndarray, boost: float, s: float) -> np.ndarray:
    """Popularity of each candidate for one model: Zipf over a random order, GT-related ones boosted."""
    pop = 1.0 / np.power(1.0 + rng.permutation(len(is_related)), s)
    pop = np.where(is_related, pop * boost, pop)
    cdf = np.cumsum(pop)
    return cdf / cdf[-1]


def _unique_rows(rng: np.random.Generator, cdf: np.ndarray, n: int, length: int) -> np.ndarray:
    """(n, length) candidate indices, no index twice within a row."""
    codes = _draw(rng, cdf, (n, length))
    for _ in range(50):
        s = np.sort(codes, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if len(bad) == 0:
            break
        codes[bad] = _draw(rng, cdf, (len(bad), length))
    return codes


def _scores(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """KeyBERT-like descending scores: top about 0.45–0.72, small gaps, floor about 0.3."""
    top = rng.uniform(0.45, 0.72, size=shape[:-1] + (1,))
    gaps = rng.exponential(0.025, size=shape)
    gaps[..., 0] = 0.0
    s = np.maximum(top - np.cumsum(gaps, axis=-1), rng.uniform(0.28, 0.32, size=shape))
    s = -np.sort(-s, axis=-1)
    return np.round(s, 4)


def model_names(n: int) -> list[str]:
    return list(MODEL_NAMES[:n]) + [f"model{i}" for i in range(len(MODEL_NAMES), n)]


def synthesize(
    movies: int = 6,
    reviews_per_movie: int = 1000,
    models: int = 3,
    seed: int = 0,
    options: SynthOptions | None = None,
    gt: str = "movie",
) -> Dataset:
    """A synthetic `Dataset`: `movies` × `reviews_per_movie` reviews, `models` models.

    Deterministic for a seed.  Movie i's GT and candidate keywords depend only
    on (seed, i), so a larger `movies` extends a smaller one's GT lists.
    `gt="per-document"` gives every review its own unranked GT instead (a few
    keywords drawn from its movie's list by popularity; the movie is marked
    unranked), the shape of the keyphrase benchmarks; predictions are the same.
    """
    if movies < 1 or reviews_per_movie < 1 or models < 1:
        raise ValueError("movies, reviews_per_movie and models must be at least 1")
    if gt not in GT_SHAPES:
        raise ValueError(f"gt must be one of {', '.join(GT_SHAPES)}; got {gt!r}")
    opts = options or SynthOptions()
    names = model_names(models)
    root = np.random.SeedSequence(seed)
    vocab = _vocabulary(np.random.default_rng(root.spawn(1)[0]), opts.vocab_size)
    word_cdf = _zipf_cdf(len(vocab), opts.zipf_s)
    movie_ids = [f"movie{i:03d}" for i in range(movies)]
    draws = [
        _draw_movie(seed, mi, movie, reviews_per_movie, names, vocab, word_cdf, opts, gt)
        for mi, movie in enumerate(movie_ids)
    ]
    offsets = np.cumsum([0] + [len(d.candidates) for d in draws[:-1]])
    L = opts.list_length
    pool = np.concatenate([d.candidates for d in draws])
    codes = np.concatenate([d.codes + offset for d, offset in zip(draws, offsets.tolist())]).reshape(-1, L)
    lengths = np.concatenate([d.lengths for d in draws]).reshape(-1)  # rows: movie, review, model
    scores = np.concatenate([d.scores for d in draws]).reshape(-1, L)
    review_ids = np.array([str(8_000_000 + i) for i in range(movies * reviews_per_movie)], dtype=object)
    predictions = _prediction_table(pool, codes, lengths, scores, movie_ids, review_ids, names)
    reviews = _reviews_table(seed, pool, codes, movie_ids, review_ids, len(names), opts)
    ground_truth = pd.concat([d.ground_truth for d in draws], ignore_index=True)
    ground_truth = ground_truth[GROUND_TRUTH_COLUMNS + (["review_id"] if gt == "per-document" else [])]
    movie_table = pd.DataFrame(
        {
            "movie": pd.Series(movie_ids, dtype=object),
            "title": pd.Series([f"Synthetic Movie {i}" for i in range(movies)], dtype=object),
            "imdb_id": pd.Series([f"tt{9_000_000 + i}" for i in range(movies)], dtype=object),
        }
    )
    if gt == "per-document":
        movie_table["ranked"] = False
    return Dataset(
        movies=movie_table,
        reviews=reviews,
        predictions=predictions,
        ground_truth=ground_truth,
        models=pd.DataFrame(
            {"model": pd.Series(names, dtype=object), "score_direction": "higher"}, columns=MODEL_COLUMNS
        ),
        problems=[],
        source=f"synth(movies={movies}, reviews_per_movie={reviews_per_movie}, models={models}, seed={seed})",
    )


@dataclass
class _MovieDraws:
    """What one movie's random draws give: its candidate keywords, its GT rows and its reviews' lists."""

    candidates: np.ndarray  # the movie's candidate keyword strings
    codes: np.ndarray  # (reviews, models, L): candidate index of each list entry
    lengths: np.ndarray  # (reviews, models): list length; 0 = empty, -1 = missing
    scores: np.ndarray  # (reviews, models, L)
    ground_truth: pd.DataFrame


_BOOSTS = {"base": 0.5, "reranker": 0.5, "sentiment": 0.4, "metadata": 0.7}  # how often a model picks GT keywords


def _draw_movie(
    seed: int,
    mi: int,
    movie: str,
    R: int,
    names: list[str],
    vocab: np.ndarray,
    word_cdf: np.ndarray,
    opts: SynthOptions,
    gt_shape: str,
) -> _MovieDraws:
    """Movie `mi`'s draws, from its own seed (seed, 1 + mi) in a fixed order: the seed → dataset mapping."""
    L, models = opts.list_length, len(names)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1 + mi]))
    n_noise = int(opts.n_noise * max(R / 1500, 0.1) ** opts.heaps_beta)
    gt, cands, is_related = _movie_candidates(rng, vocab, word_cdf, opts, n_noise)
    helpful = -np.sort(-rng.integers(0, 80, size=len(gt)))
    not_helpful = np.where(rng.random(len(gt)) < 0.8, 0, rng.integers(1, 6, size=len(gt)))
    gt_rows = pd.DataFrame(
        {
            "movie": pd.Series([movie] * len(gt), dtype=object),
            "rank": np.arange(len(gt), dtype="int64"),
            "keyword": pd.Series(gt, dtype=object),
            "helpful": helpful.astype("float64"),
            "not_helpful": not_helpful.astype("float64"),
        }
    )
    codes = np.empty((R, models, L), dtype=np.int64)
    scores = _scores(rng, (R, models, L))
    for k, name in enumerate(names):
        if name == "reranker" and k > 0 and names[0] == "base":
            # same keywords as base, partly reordered (a random swap of neighbours per list)
            base = codes[:, 0, :].copy()
            swap = rng.integers(0, L - 1, size=R) if L > 1 else np.zeros(R, dtype=np.int64)
            do = rng.random(R) < 0.6
            rows = np.flatnonzero(do)
            a, b = base[rows, swap[rows]], base[rows, swap[rows] + 1]
            base[rows, swap[rows]], base[rows, swap[rows] + 1] = b, a
            codes[:, k, :] = base
        else:
            cdf = _model_cdf(rng, is_related, _BOOSTS.get(name, 0.5), opts.popularity_s)
            codes[:, k, :] = _unique_rows(rng, cdf, R, L)
    if gt_shape == "per-document":
        doc_rng = np.random.default_rng(np.random.SeedSequence([seed, 1 + mi, 2]))  # predictions stay gt="movie"'s
        gt_rows = _document_gt(doc_rng, movie, gt, cands[codes[:, 0, :]], mi * R, opts)
    lengths = np.full((R, models), L, dtype=np.int64)
    u = rng.random((R, models))
    if L > 1:
        short = u < opts.p_short
        lengths[short] = rng.integers(1, L, size=int(short.sum()))
    lengths[(u >= opts.p_short) & (u < opts.p_short + opts.p_empty)] = 0
    lengths[(u >= opts.p_short + opts.p_empty) & (u < opts.p_short + opts.p_empty + opts.p_missing)] = -1
    if "reranker" in names and names[0] == "base":
        lengths[:, names.index("reranker")] = lengths[:, 0]
    return _MovieDraws(cands, codes, lengths, scores, gt_rows)


def _prediction_table(
    pool: np.ndarray,
    codes: np.ndarray,
    lengths: np.ndarray,
    scores: np.ndarray,
    movie_ids: list[str],
    review_ids: np.ndarray,
    names: list[str],
) -> pd.DataFrame:
    """One row per kept list entry (rows: movie, review, model); an empty list is one row with no keyword at rank 0."""
    movies, models, L = len(movie_ids), len(names), codes.shape[1]
    n_pairs = len(lengths)
    R = n_pairs // (movies * models)
    pair_movie = np.repeat(np.arange(movies), R * models)
    pair_review = np.repeat(np.arange(movies * R), models)
    pair_model = np.tile(np.arange(models), movies * R)
    n_rows = np.where(lengths == 0, 1, np.maximum(lengths, 0))
    pair_of_row = np.repeat(np.arange(n_pairs), n_rows)
    starts = np.cumsum(n_rows) - n_rows
    rank = np.arange(len(pair_of_row)) - starts[pair_of_row]
    empty_row = lengths[pair_of_row] == 0
    flat = pair_of_row * L + rank
    keyword = pool[codes.reshape(-1)[flat]]
    keyword[empty_row] = None
    score = scores.reshape(-1)[flat]
    score[empty_row] = np.nan
    movie_arr = np.array(movie_ids, dtype=object)
    model_arr = np.array(names, dtype=object)
    return pd.DataFrame(
        {
            "movie": pd.Series(movie_arr[pair_movie[pair_of_row]], dtype=object),
            "review_id": pd.Series(review_ids[pair_review[pair_of_row]], dtype=object),
            "model": pd.Series(model_arr[pair_model[pair_of_row]], dtype=object),
            "rank": rank.astype("int64"),
            "keyword": pd.Series(keyword, dtype=object),
            "score": score.astype("float64"),
        },
        columns=PREDICTION_COLUMNS,
    )


def _reviews_table(
    seed: int,
    pool: np.ndarray,
    codes: np.ndarray,
    movie_ids: list[str],
    review_ids: np.ndarray,
    models: int,
    opts: SynthOptions,
) -> pd.DataFrame:
    """The reviews: each mentions its first model's first three keywords (when `opts.text`); ratings: seed (seed, 0)."""
    n = len(review_ids)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    texts: list[str | None]
    if opts.text:
        first = codes.reshape(n, models, opts.list_length)[:, 0, :3]
        texts = [f"I watched it. The {a} and the {b} were worth it; {c}." for a, b, c in pool[first].tolist()]
    else:
        texts = [None] * n
    return pd.DataFrame(
        {
            "movie": pd.Series(np.repeat(np.array(movie_ids, dtype=object), n // len(movie_ids)), dtype=object),
            "review_id": pd.Series(review_ids, dtype=object),
            "text": pd.Series(texts, dtype=object),
            "title": pd.Series([None] * n, dtype=object),
            "rating": rng.integers(1, 11, size=n).astype("float64"),
        },
        columns=REVIEW_COLUMNS,
    )
