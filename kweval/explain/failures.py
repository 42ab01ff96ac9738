"""Why a model loses points: the failure category of every keyword (docs/metrics.md §10).

`failure_table(dataset, evaluation)` gives one row per predicted keyword
(before cleaning, so `invalid` and `duplicate` show) and per GT keyword of
every evaluated review × model, each with its category under the
evaluation's match mode, k and τ (`kweval.metrics.categories`, the one table
of rules) and a `detail` naming the GT keyword, the mode that would match or
the cosine.  The categories add up against the per-review metrics: per
review × model, the `hit` rows are ``p@k · k`` and ``hit + hit_beyond_k =
found + found_beyond_k = n_matched``.  `failure_summary` counts them per movie
× model × category.  The CLI (`kweval failures`), the explorer and the
dashboard read these two functions; nothing else decides a category.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
import pandas as pd

from kweval.beyond.grounding import GRADES
from kweval.data.dataset import Dataset
from kweval.evaluation.options import Evaluation
from kweval.explain.failure_grounding import grades_of
from kweval.explain.failure_gt import GtCategories, gt_categories, gt_category_counts, review_categories
from kweval.explain.failure_lists import GroupLists, group_lists
from kweval.explain.failure_predictions import CODE, PredictionCategories, prediction_categories
from kweval.metrics.categories import CATEGORY_NAMES, NEAR_MODES, PREDICTION_CATEGORIES, SIDES

COLUMNS = ["movie", "review_id", "model", "side", "position", "keyword", "category", "detail"]
EXTRA_COLUMNS = ["other", "cosine"]  # the keyword the detail names (GT or predicted), the best cosine (semantic)
_N_PRED = len(PREDICTION_CATEGORIES)


def failure_table(dataset: Dataset, evaluation: Evaluation, vectors=None) -> pd.DataFrame:
    """One row per keyword of every evaluated review × model: `COLUMNS` then `EXTRA_COLUMNS`.

    `evaluation` is `evaluate(dataset, options)` with its per-keyword table
    (``keywords=True``, the default).  Rows come group by group (the order of
    `Evaluation.scores`), predictions in list order, then the GT list in rank
    order.  ``position``: a prediction's position after cleaning (the
    metrics' i; -1 for a keyword cleaning drops), a GT keyword's rank.  With
    semantic matching (``options.semantic``) the cosines come from `vectors`
    (a mapping norm → vector or an embedder function), else from the
    embedding store the evaluation filled.  Text columns are categorical.
    ``table.attrs["notes"]``: what could not be tested (near_lexical under
    stem without nltk), for the caller to show.  With grounding
    (``options.grounding``) a ``grounding`` column gives each kept
    prediction's grade, and an `off_reference` detail says it
    (`kweval.explain.failure_grounding`).
    """
    return parts_table(failure_parts(dataset, evaluation, vectors))


@dataclass
class FailureParts:
    """Every keyword's category, side by side, before the rows are laid out: what `failure_table` assembles, and what
    `parts_summary` and `parts_reviews_with` count without the rows (a movie-level GT list repeated per review ×
    model is millions of rows on DNLP).  The GT side is made when first read (`gt_side`): the reviews holding a
    prediction category (the explorer's filter) need only the prediction side."""

    lists: GroupLists
    pred: PredictionCategories
    gt_side: Callable[[], GtCategories]
    semantic: bool
    notes: list[str]
    grounded: tuple[np.ndarray, list[str]] | None = None  # with grounding: `failure_grounding.grades_of`'s
    gt_count_side: Callable[[], np.ndarray] | None = None  # the GT side's counts per group without its rows

    @cached_property
    def gt(self) -> GtCategories:
        """The GT side's categories (made once, on first read)."""
        return self.gt_side()

    @cached_property
    def pred_counts(self) -> np.ndarray:
        """Per group × category (`CATEGORY_NAMES`), how many prediction rows the table has (computed once)."""
        n_cat, n_groups = len(CATEGORY_NAMES), len(self.lists.groups)
        cells = np.bincount(self.pred.group.astype(np.int64) * n_cat + self.pred.category, minlength=n_groups * n_cat)
        return cells.reshape(n_groups, n_cat)

    @cached_property
    def counts(self) -> np.ndarray:
        """Per group × category (`CATEGORY_NAMES`), how many rows the table has (computed once; the GT side's from
        `gt_count_side` when given, without laying out its rows: `failure_gt.gt_category_counts`)."""
        if self.gt_count_side is not None:
            out = self.pred_counts.copy()
            out[:, _N_PRED:] += self.gt_count_side()
            return out
        n_cat, n_groups = len(CATEGORY_NAMES), len(self.lists.groups)
        cells = np.bincount(
            self.gt.group.astype(np.int64) * n_cat + self.gt.category + _N_PRED, minlength=n_groups * n_cat
        )
        return self.pred_counts + cells.reshape(n_groups, n_cat)


def failure_parts(dataset: Dataset, evaluation: Evaluation, vectors=None) -> FailureParts:
    """The categories of both sides of every evaluated review × model (`failure_table`'s arguments); the GT side
    made when first read."""
    lists = group_lists(evaluation)
    if evaluation.options.semantic and vectors is None:
        vectors = _stored_vectors(evaluation, lists)
    pred = prediction_categories(dataset, evaluation, lists, vectors if evaluation.options.semantic else None)
    matched = (pred.category == CODE["hit"]) | (pred.category == CODE["hit_beyond_k"])
    options = evaluation.options
    pair_group, pair_rank = pred.group[matched].astype(np.int64), pred.gt_rank[matched].astype(np.int64)
    pair_position = pred.position[matched]

    @cache
    def before():  # each review's GT categories before its matches: read by both the rows and the counts
        return review_categories(dataset, lists, options.match)

    def gt_side() -> GtCategories:
        return gt_categories(dataset, lists, options.k, options.match, pair_group, pair_rank, pair_position, before())

    def gt_count_side() -> np.ndarray:
        return gt_category_counts(lists, before(), options.k, pair_group, pair_rank, pair_position)

    from kweval.text.stemming import save_shared_stems  # near_lexical's stems: read from disk next time

    grounded = grades_of(evaluation, pred.group, pred.position)
    notes = list(pred.notes) + save_shared_stems()
    return FailureParts(lists, pred, gt_side, evaluation.options.semantic, notes, grounded, gt_count_side)


def parts_table(parts: FailureParts) -> pd.DataFrame:
    """`failure_table` of the parts: the rows laid out."""
    table = _assemble(parts.lists, parts.pred, parts.gt, parts.semantic, parts.grounded)
    table.attrs["notes"] = list(parts.notes)  # e.g. a match mode not tested for want of its package
    return table


def parts_summary(parts: FailureParts, by: Sequence[str] = ("movie", "model"), groups=None) -> pd.DataFrame:
    """`failure_summary` of the rows of the groups `groups` keeps (a bool per group; all by default), counted per
    group × category instead of per row.  `by`: group columns (movie, review_id, model)."""
    counts = parts.counts
    if groups is not None:
        counts = counts * np.asarray(groups, dtype=bool)[:, None]
    group, category = np.nonzero(counts)
    frame = pd.DataFrame({c: _group_column(parts.lists.groups[c], group) for c in by})
    frame["category"] = pd.Categorical.from_codes(category, list(CATEGORY_NAMES), validate=False)
    return failure_summary(frame, by, weights=counts[group, category])


def parts_reviews_with(parts: FailureParts, category: str, model: str | None = None, groups=None) -> pd.DataFrame:
    """`reviews_with` over the rows of the groups `groups` keeps (a bool per group; all by default)."""
    if category not in CATEGORY_NAMES:
        raise ValueError(f"unknown category {category!r} (known: {', '.join(CATEGORY_NAMES)})")
    counts = parts.pred_counts if category in PREDICTION_CATEGORIES else parts.counts  # a prediction category: no GT
    count = counts[:, CATEGORY_NAMES.index(category)]
    keep = count > 0
    if groups is not None:
        keep &= np.asarray(groups, dtype=bool)
    if model is not None:
        keep &= parts.lists.groups["model"].to_numpy(dtype=object) == model
    found = parts.lists.groups.loc[keep, ["movie", "review_id", "model"]].astype(object).reset_index(drop=True)
    return found.assign(count=count[keep])


def failure_summary(table: pd.DataFrame, by: Sequence[str] = ("movie", "model"), weights=None) -> pd.DataFrame:
    """Counts per `by` × side × category (every category of the side, zeros included) and each count's share of its
    `by` × side: by movie × model (the default, `kweval failures --summary`) or, e.g., by model for a page's bars.

    Counted on the categorical codes (one pass over the rows); `weights`: each row stands for that many (the counts
    of `parts_summary`).
    """
    by = list(by)
    if not by:
        raise ValueError("failure_summary needs at least one column to count by (e.g. model)")
    category = pd.Categorical(table["category"], categories=list(CATEGORY_NAMES)).codes.astype(np.int64)
    n_cat = len(CATEGORY_NAMES)
    columns = [pd.Categorical(table[c]) for c in by]  # a categorical column keeps its codes: no text hashed per row
    key = np.zeros(len(table), dtype=np.int64)
    for col in columns:
        key = key * len(col.categories) + col.codes
    used, key_codes = dense_unique(key, int(np.prod([len(col.categories) for col in columns], dtype=np.int64)))
    parts, rest = [], used
    for col in reversed(columns):
        rest, code = np.divmod(rest, len(col.categories))
        parts.append(np.asarray(col.categories, dtype=object)[code])
    keys = pd.MultiIndex.from_arrays(parts[::-1], names=by)
    n_keys = len(keys)
    counts = np.bincount(key_codes.astype(np.int64) * n_cat + category, weights=weights, minlength=n_keys * n_cat)
    counts = counts.astype(np.int64)
    counts = counts.reshape(n_keys, n_cat)
    sides = np.array(_sides(), dtype=object)
    per_side = np.stack([counts[:, sides == s].sum(axis=1) for s in SIDES], axis=1)
    total = per_side[:, (sides == SIDES[1]).astype(int)].ravel()
    out = pd.DataFrame(
        {name: np.repeat(keys.get_level_values(i).to_numpy(dtype=object), n_cat) for i, name in enumerate(by)}
    )
    out["side"] = np.tile(sides, n_keys)
    out["category"] = np.tile(np.array(CATEGORY_NAMES, dtype=object), n_keys)
    out["count"] = counts.ravel()
    out["share"] = np.where(total > 0, counts.ravel() / np.maximum(total, 1), 0.0)
    return out


def reviews_with(table: pd.DataFrame, category: str, model: str | None = None) -> pd.DataFrame:
    """The reviews × models holding at least one keyword of `category` (of `model`, when given), with how many: the
    reviews a page opens in the explorer from a segment of the bars.  Columns: movie, review_id, model, count."""
    if category not in CATEGORY_NAMES:
        raise ValueError(f"unknown category {category!r} (known: {', '.join(CATEGORY_NAMES)})")
    rows = equals(table["category"], category)
    if model is not None:
        rows &= equals(table["model"], model)
    part = table.loc[rows, ["movie", "review_id", "model"]].astype(object)
    return part.groupby(["movie", "review_id", "model"], sort=False).size().rename("count").reset_index()


def dense_unique(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(key, return_inverse=True)` for non-negative integer keys below `space`: the keys present, in order,
    and each row's index among them.  Speed: a count over the key space and a lookup table (two passes over the
    rows) instead of a sort, when the space is small against the rows; the sort otherwise."""
    if space > max(len(key), 1 << 16):
        used, codes = np.unique(key, return_inverse=True)
        return used, codes.reshape(-1)
    used = np.flatnonzero(np.bincount(key, minlength=space))
    lookup = np.zeros(space, dtype=np.int64)
    lookup[used] = np.arange(len(used))
    return used, lookup[key]


def equals(column: pd.Series, value: str) -> np.ndarray:
    """`column.to_numpy() == value` as a bool array; on a categorical column the codes are compared (no text array
    of the rows made: the failure table has millions)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        at = column.cat.categories.get_indexer([value])[0]
        return column.cat.codes.to_numpy() == at if at >= 0 else np.zeros(len(column), dtype=bool)
    return np.asarray(column.to_numpy() == value, dtype=bool)


def _sides() -> list[str]:
    return [SIDES[0]] * _N_PRED + [SIDES[1]] * (len(CATEGORY_NAMES) - _N_PRED)


def _stored_vectors(evaluation: Evaluation, lists: GroupLists) -> dict:
    """The vectors of every normalized keyword, from the embedding store the semantic evaluation filled."""
    from kweval.embeddings import semantic

    options = evaluation.options
    texts = list(dict.fromkeys([*evaluation.keywords["norm"].tolist(), *lists.gt_norm.tolist()]))
    texts = [t for t in texts if isinstance(t, str) and t]
    if not texts:
        return {}
    vectors = semantic.embed_texts(texts, model_id=options.embedding_model, backend=options.embedding_backend)
    return dict(zip(texts, vectors))


def _assemble(
    lists: GroupLists,
    pred: PredictionCategories,
    gt: GtCategories,
    semantic: bool,
    grounded: tuple[np.ndarray, list[str]] | None = None,
) -> pd.DataFrame:
    """The rows of both sides interleaved group by group, as one frame with categorical text columns (and each
    prediction's grounding grade, with `grounded`: `failure_grounding.grades_of`'s)."""
    n_groups = len(lists.groups)
    n_pred = np.bincount(pred.group, minlength=n_groups).astype(np.int64)
    n_gt = np.diff(gt.offsets)
    start = np.concatenate(([0], np.cumsum(n_pred + n_gt)))[:-1]
    pred_at = start[pred.group] + _within(pred.group, n_pred)
    gt_at = start[gt.group] + n_pred[gt.group] + gt.rank
    total = len(pred.group) + len(gt.group)

    def both(pred_values: np.ndarray, gt_values: np.ndarray, dtype) -> np.ndarray:
        out = np.empty(total, dtype=dtype)
        out[pred_at] = pred_values
        out[gt_at] = gt_values
        return out

    group = both(pred.group, gt.group, np.int32)
    kw_codes, kw_values = pd.factorize(np.concatenate([pred.keyword, lists.gt_keyword]))
    keyword = both(kw_codes[: len(pred.group)], kw_codes[len(pred.group) :][gt.gt_index], np.int32)
    gt_rank_keyword = np.full(len(pred.group), -1, dtype=np.int64)
    gt_rank_keyword[pred.gt_rank >= 0] = kw_codes[len(pred.group) :][_gt_index(lists, pred)]
    found = gt.by_position >= 0
    gt_other = np.full(len(gt.group), -1, dtype=np.int32)
    gt_other[found] = _found_keyword_codes(pred, kw_codes[: len(pred.group)], gt.group[found], gt.by_position[found])
    detail_codes, detail_values = _details(
        lists, pred, gt, kw_values, kw_codes, semantic, None if grounded is None else grounded[1]
    )
    frame = pd.DataFrame(
        {
            "movie": _group_column(lists.groups["movie"], group),
            "review_id": _group_column(lists.groups["review_id"], group),
            "model": _group_column(lists.groups["model"], group),
            "side": pd.Categorical.from_codes(
                both(np.zeros(len(pred.group)), np.ones(len(gt.group)), np.int8), SIDES, validate=False
            ),
            "position": both(pred.position, gt.rank, np.int32),
            "keyword": pd.Categorical.from_codes(keyword, kw_values, validate=False),
            "category": pd.Categorical.from_codes(
                both(pred.category, gt.category + _N_PRED, np.int8), list(CATEGORY_NAMES), validate=False
            ),
            "detail": pd.Categorical.from_codes(
                both(detail_codes[0], detail_codes[1], np.int32), detail_values, validate=False
            ),
            "other": pd.Categorical.from_codes(both(gt_rank_keyword, gt_other, np.int32), kw_values, validate=False),
            "cosine": both(pred.cosine, np.full(len(gt.group), np.nan, np.float32), np.float32),
        },
        copy=False,
    )
    if grounded is not None:
        grade = both(grounded[0], np.full(len(gt.group), "", dtype=object), object)
        frame["grounding"] = pd.Categorical(grade, categories=["", *GRADES])
    return frame


def _within(group: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row (rows sorted by group), its index within its group."""
    starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
    return np.arange(len(group), dtype=np.int64) - starts[group]


def _gt_index(lists: GroupLists, pred: PredictionCategories) -> np.ndarray:
    """Per prediction row with a GT rank, that GT keyword's index in `lists.gt_keyword`."""
    at = pred.gt_rank >= 0
    return lists.starts()[pred.group[at]] + pred.gt_rank[at]


def _found_keyword_codes(
    pred: PredictionCategories, pred_codes: np.ndarray, group: np.ndarray, position: np.ndarray
) -> np.ndarray:
    """The keyword code of the kept prediction at (`group`, `position`)."""
    kept = np.flatnonzero(pred.position >= 0)
    width = int(pred.position.max(initial=0)) + 1
    keys = pred.group[kept].astype(np.int64) * width + pred.position[kept]  # sorted: kept rows are in list order
    at = np.searchsorted(keys, group.astype(np.int64) * width + position)
    return pred_codes[kept[at]]


def _group_column(values: pd.Series, group: np.ndarray) -> pd.Categorical:
    """A per-group column repeated over the rows, as a categorical (codes, one copy of each value)."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    return pd.Categorical.from_codes(codes.astype(np.int32)[group], uniques, validate=False)


def _details(
    lists: GroupLists,
    pred: PredictionCategories,
    gt: GtCategories,
    kw_values: pd.Index,
    kw_codes: np.ndarray,
    semantic: bool,
    grounded: list[str] | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], list[str]]:
    """(per prediction row, per GT row) codes of the `detail` text, and the distinct texts (code 0: ""); an
    off_reference prediction's detail ends with its grounding (`grounded`: per prediction row, or None)."""
    gt_kw = lists.gt_keyword
    starts = lists.starts()
    names = PREDICTION_CATEGORIES
    texts = []
    grounding_of = iter(grounded if grounded is not None else [])
    for g, kw, cat, rank, holder, mode, cos in zip(
        pred.group.tolist(),
        pred.keyword.tolist(),
        pred.category.tolist(),
        pred.gt_rank.tolist(),
        pred.holder.tolist(),
        pred.mode.tolist(),
        pred.cosine.tolist(),
    ):
        text = _prediction_detail(
            names[cat],
            gt_kw[starts[g] + rank] if rank >= 0 else None,
            rank,
            holder,
            NEAR_MODES[mode] if mode >= 0 else "",
            cos,
            kw,
            semantic,
        )
        grade = next(grounding_of, "")
        texts.append("; ".join(t for t in (text, grade) if t) if names[cat] == "off_reference" else text)
    found = np.flatnonzero(gt.by_position >= 0)
    pred_kw = _found_keyword_codes(pred, kw_codes[: len(pred.group)], gt.group[found], gt.by_position[found])
    gt_texts = [f"#{p} ‘{kw_values[c]}’" for p, c in zip(gt.by_position[found].tolist(), pred_kw.tolist())]
    codes, values = pd.factorize(np.array(["", *texts, *gt_texts], dtype=object))
    pred_codes = codes[1 : 1 + len(texts)].astype(np.int32)
    gt_codes = np.zeros(len(gt.group), dtype=np.int32)
    gt_codes[found] = codes[1 + len(texts) :]
    return (pred_codes, gt_codes), list(values)


def _prediction_detail(
    category: str, gt_keyword, rank: int, holder: int, mode: str, cosine: float, keyword, semantic: bool
) -> str:
    """The `detail` text of one prediction row."""
    cos = "" if cosine != cosine else f", cosine {cosine:.3f}"
    if category in ("hit", "hit_beyond_k"):
        return f"GT ‘{gt_keyword}’ (rank {rank})"
    if category == "taken":
        return f"GT ‘{gt_keyword}’ already taken by #{holder}"
    if category == "near_lexical":
        return f"{mode}: GT ‘{gt_keyword}’"
    if category == "near_semantic":
        return f"GT ‘{gt_keyword}’{cos}"
    if category == "off_reference":
        return f"nearest GT ‘{gt_keyword}’{cos}" if semantic and gt_keyword is not None else ""
    if category == "duplicate":
        return f"repeats #{holder}"
    return "not a string" if not isinstance(keyword, str) else "empty after normalization"
