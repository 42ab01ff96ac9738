"""The add-on beyond the reference list: grounding and diversity columns (docs/metrics.md §12).

`--grounding` grades every kept prediction (`Evaluation.keywords`: columns
``grounding``, ``support``, ``support_cosine``) against its review's text
with `kweval.beyond.grounding` under the evaluation's match mode, and adds
per review × model the counts (``n_grounded``, ``n_grounded_present``,
``n_grounded_supported``, ``n_unsupported``) and the shares
``grounded_present``, ``grounded_supported``, ``unsupported`` (NaN for a
review without text or without predictions).  `--diversity` adds
``dup_token_ratio`` and ``self_similarity`` of each list as given, repeats
included (`kweval.beyond.diversity`).  Embeddings go through the persistent
store (`kweval.beyond.grounding.store_embedder`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kweval.beyond import diversity, grounding
from kweval.data.dataset import KEY, Dataset, Problem
from kweval.evaluation.options import Evaluation, Progress
from kweval.text.normalize import normalize_many, stem_tokens

GROUNDING_COUNTS = ("n_grounded", "n_grounded_present", "n_grounded_supported", "n_unsupported")
GROUNDING_SHARES = ("grounded_present", "grounded_supported", "unsupported")
DIVERSITY_COLUMNS = ("dup_token_ratio", "self_similarity")
KEYWORD_COLUMNS = ("grounding", "support", "support_cosine")


def add_beyond_columns(evaluation: Evaluation, dataset: Dataset, progress: Progress) -> None:
    """Add the grounding and/or diversity columns the options ask for to `evaluation` (in place)."""
    options = evaluation.options
    embed, notes = grounding.store_embedder(options.embedding_model, options.embedding_backend)
    groups = evaluation.scores[KEY].reset_index(drop=True)
    if options.grounding:
        progress("grounding", 0.96)
        texts = _texts(dataset, groups)
        _add_grounding(evaluation, groups, texts, grounding.match_mode_rule(options.match), embed)
    if options.diversity:
        progress("diversity", 0.97)
        _add_diversity(evaluation, dataset, groups, embed)
    evaluation.problems.extend(Problem("embedding cache", note, "evaluate") for note in notes)


def _texts(dataset: Dataset, groups: pd.DataFrame) -> list[str | None]:
    """Each group's review text (None where the reviews table has none)."""
    reviews = dataset.reviews
    text_of = dict(zip(zip(reviews["movie"], reviews["review_id"]), reviews["text"]))
    return [t if isinstance(t, str) else None for t in map(text_of.get, zip(groups["movie"], groups["review_id"]))]


def _group_of(rows: pd.DataFrame, groups: pd.DataFrame) -> np.ndarray:
    """Each row's group (its position in `groups`, -1 for none), by (movie, review_id, model)."""
    index = pd.MultiIndex.from_frame(groups[KEY])
    return index.get_indexer(pd.MultiIndex.from_frame(rows[KEY].astype(object)))


def _add_grounding(
    evaluation: Evaluation,
    groups: pd.DataFrame,
    texts: list[str | None],
    rule: grounding.PresentRule,
    embed: grounding.Embedder,
) -> None:
    """Grade the kept predictions list by list; their grades on `keywords`, the counts and shares on `scores`."""
    kw = evaluation.keywords
    group = _group_of(kw, groups) if len(kw) else np.zeros(0, np.int64)
    order = np.lexsort((kw["position"].to_numpy(), group)) if len(kw) else np.zeros(0, np.int64)
    order = order[group[order] >= 0]
    phrases = kw["keyword"].to_numpy(dtype=object)[order]
    sizes = np.bincount(group[order], minlength=len(groups))
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    lists = [phrases[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])]
    found = grounding.ground(texts, lists, rule, embed, evaluation.options.grounding_threshold)
    grade = np.full(len(kw), None, dtype=object)
    grade[order] = np.where(found.grade >= 0, np.array(grounding.GRADES, dtype=object)[found.grade], None)
    support = np.full(len(kw), "", dtype=object)
    support[order] = found.support
    cosine = np.full(len(kw), np.nan, dtype=np.float32)
    cosine[order] = found.cosine
    evaluation.keywords = kw.assign(grounding=grade, support=support, support_cosine=cosine)
    counts = grounding.counts(found, sizes)
    scores = evaluation.scores
    for name in GROUNDING_COUNTS:
        scores[name] = counts[name]
    graded = counts["n_grounded"].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        for share, count in zip(GROUNDING_SHARES, GROUNDING_COUNTS[1:]):
            scores[share] = np.where(graded > 0, counts[count] / graded, np.nan)


def _add_diversity(evaluation: Evaluation, dataset: Dataset, groups: pd.DataFrame, embed: grounding.Embedder) -> None:
    """dup_token_ratio and self_similarity of each group's predictions as given (strings with a word, repeats kept)."""
    preds = dataset.predictions
    is_text = preds["keyword"].map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    rows = preds[is_text]
    group = _group_of(rows, groups) if len(rows) else np.zeros(0, np.int64)
    norms = np.array(normalize_many(rows["keyword"].tolist()), dtype=object)
    keep = (group >= 0) & (norms != "")
    order = np.flatnonzero(keep)[np.lexsort((rows["rank"].to_numpy()[keep], group[keep]))]
    norms, group = norms[order].tolist(), group[order]
    tokens = [stem_tokens(n) for n in norms]
    distinct = list(dict.fromkeys(norms))
    vectors = np.asarray(embed(distinct), dtype=np.float32) if distinct else np.zeros((0, 1), np.float32)
    at = {text: i for i, text in enumerate(distinct)}
    rows_vectors = vectors[[at[n] for n in norms]] if norms else np.zeros((0, vectors.shape[1]), np.float32)
    found = diversity.list_diversity(group, tokens, rows_vectors, len(groups))
    for name in DIVERSITY_COLUMNS:
        evaluation.scores[name] = found[name]
