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

import itertools
from collections.abc import Mapping

import numpy as np
import pandas as pd

from kweval.beyond import diversity, grounding
from kweval.data.dataset import KEY, Dataset, Problem
from kweval.evaluation.options import Evaluation, Progress

DIVERSITY_COLUMNS = ("dup_token_ratio", "self_similarity")
KEYWORD_COLUMNS = ("grounding", "support", "support_cosine")


def add_beyond_columns(
    evaluation: Evaluation, dataset: Dataset, progress: Progress, known: Mapping[str, np.ndarray] | None = None
) -> None:
    """Add the grounding and/or diversity columns the options ask for to `evaluation` (in place); `known`: the
    vectors the semantic metrics read (not read again)."""
    options = evaluation.options
    embed, notes = grounding.store_embedder(options.embedding_model, options.embedding_backend, known)
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
    counts = grounding.counts(found, sizes.tolist())
    for name, values in (counts | grounding.shares(counts)).items():
        evaluation.scores[name] = values


def _add_diversity(evaluation: Evaluation, dataset: Dataset, groups: pd.DataFrame, embed: grounding.Embedder) -> None:
    """dup_token_ratio and self_similarity of each group's predictions as given (strings, rank order, repeats kept)."""
    preds = dataset.predictions
    keyword = preds["keyword"].to_numpy(dtype=object)
    is_text = np.fromiter(map(isinstance, keyword, itertools.repeat(str)), dtype=bool, count=len(keyword))
    rows = preds[is_text]
    group = _group_of(rows, groups) if len(rows) else np.zeros(0, np.int64)
    inside = np.flatnonzero(group >= 0)
    order = inside[np.lexsort((rows["rank"].to_numpy()[inside], group[inside]))]  # stable: ties in file order
    phrases = keyword[is_text][order]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(group[order], minlength=len(groups)))))
    found = diversity.lists_diversity([phrases[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])], embed)
    for name in DIVERSITY_COLUMNS:
        evaluation.scores[name] = found[name]
