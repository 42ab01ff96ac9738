"""The failure category of every predicted keyword, before cleaning (docs/metrics.md §10, prediction side).

The raw predictions are put in each list's order (rank, ties in file order,
as the match stage orders them) and cleaned by the rule the evaluation uses
(`clean.clean_keyword_lists`): what cleaning drops is `invalid` or
`duplicate`.  The kept keywords take their match from the evaluation itself
(`Evaluation.keywords`: `hit`, `hit_beyond_k`); the unmatched ones are tested
against their list under the match mode (`taken`), then the other lexical
modes (`near_lexical`), then by cosine (`near_semantic`); the rest are
`off_reference`.  Matching is done once per distinct (list, keyword), with
`kweval.text.matching`'s candidate tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.evaluation.clean import clean_keyword_lists
from kweval.evaluation.options import Evaluation
from kweval.explain.failure_lists import GroupLists, group_index
from kweval.extras import MissingExtra
from kweval.metrics.categories import NEAR_MODES, PREDICTION_CATEGORIES
from kweval.text.matching import candidate_table

CODE = {name: i for i, name in enumerate(PREDICTION_CATEGORIES)}
# modes that cannot match where the evaluation's mode did not (a match under them is a match under it)
_IMPLIED = {"approx": {"exact", "word"}, "word": {"exact"}, "stem": {"exact"}, "exact": set()}


@dataclass
class PredictionCategories:
    """One row per raw predicted keyword of the evaluated groups, in each group's list order."""

    group: np.ndarray  # per row: its group (a row of Evaluation.scores)
    position: np.ndarray  # per row: its position after cleaning (the metrics' i), -1 if dropped by cleaning
    keyword: np.ndarray  # per row: the keyword as given (object; None if not a string)
    category: np.ndarray  # per row: a code of PREDICTION_CATEGORIES (int8)
    gt_rank: np.ndarray  # per row: the GT keyword the detail names (matched, taken, near, nearest), -1 if none
    holder: np.ndarray  # per row: taken: the position holding that GT keyword; duplicate: the position repeated
    mode: np.ndarray  # per row: near_lexical: the index in NEAR_MODES of the mode that matches, else -1
    cosine: np.ndarray  # per row: the best cosine to the list (float32, NaN without semantic matching)
    notes: list[str] = field(default_factory=list)  # what could not be tested (a match mode whose package is missing)


def prediction_categories(
    dataset: Dataset, evaluation: Evaluation, lists: GroupLists, vectors=None
) -> PredictionCategories:
    """Every raw predicted keyword of `evaluation`'s groups with its category (docs/metrics.md §10).

    `vectors` (a mapping norm → vector or an embedder function), when given,
    enables `near_semantic` at the evaluation's τ.
    """
    options = evaluation.options
    rows, group = _raw_rows(dataset, lists)
    keyword = dataset.predictions["keyword"].to_numpy(dtype=object)[rows]
    cleaned = clean_keyword_lists(keyword, group)
    invalid = cleaned.norm < 0
    empty = np.flatnonzero(cleaned.norm_values == "")
    if len(empty):
        invalid |= cleaned.norm == empty[0]
    keep = cleaned.keep
    n = len(rows)
    out = PredictionCategories(
        group=group,
        position=np.full(n, -1, dtype=np.int32),
        keyword=keyword,
        category=np.where(invalid, CODE["invalid"], CODE["duplicate"]).astype(np.int8),
        gt_rank=np.full(n, -1, dtype=np.int32),
        holder=np.full(n, -1, dtype=np.int32),
        mode=np.full(n, -1, dtype=np.int8),
        cosine=np.full(n, np.nan, dtype=np.float32),
    )
    kept = np.flatnonzero(keep)
    kept_group = group[kept]
    position = _position_in_group(kept_group)
    out.position[kept] = position
    out.holder[~keep & ~invalid] = _repeated_positions(group, cleaned.norm, keep, out.position)[~keep & ~invalid]
    gt_rank = _evaluated_matches(evaluation, lists, kept_group, position, cleaned.norm_values[cleaned.norm[kept]])
    _categorize_kept(out, kept, gt_rank, cleaned.norm, cleaned.norm_values, lists, options.match, options.k)
    if vectors is not None:
        _semantic(out, cleaned.norm, cleaned.norm_values, lists, vectors, options.threshold)
    return out


def kept_categories(
    group: np.ndarray,
    norms: Sequence[str],
    gt_rank: np.ndarray,
    group_gt: Sequence[Sequence[str]],
    mode: str,
    k: int,
) -> PredictionCategories:
    """The categories of cleaned, matched keywords (rows of `Evaluation.keywords`), for callers that hold only those.

    Rows sorted by `group` (0..n-1, each group one ranked list) then
    position; `gt_rank`: the evaluation's match (-1: none); `group_gt[g]`: the
    normalized GT list group g was matched against.  The same rules as
    `prediction_categories` on its kept rows (no cleaning, no semantic step).
    """
    group = np.asarray(group, dtype=np.int64)
    sizes = np.array([len(g) for g in group_gt], dtype=np.int64)
    lists = GroupLists(
        groups=pd.DataFrame(index=range(len(group_gt))),
        group_list=np.arange(len(group_gt), dtype=np.int64),
        group_review=np.zeros(len(group_gt), dtype=np.int64),
        review_keys=pd.DataFrame(),
        review_list=np.zeros(0, dtype=np.int64),
        list_start=np.concatenate(([0], np.cumsum(sizes)))[:-1].astype(np.int64),
        list_size=sizes,
        gt_keyword=np.array([g for lst in group_gt for g in lst], dtype=object),
        gt_norm=np.array([g for lst in group_gt for g in lst], dtype=object),
    )
    n = len(group)
    norm_code, norm_values = pd.factorize(np.asarray(list(norms), dtype=object))
    out = PredictionCategories(
        group=group,
        position=_position_in_group(group),
        keyword=np.asarray(list(norms), dtype=object),
        category=np.zeros(n, dtype=np.int8),
        gt_rank=np.full(n, -1, dtype=np.int32),
        holder=np.full(n, -1, dtype=np.int32),
        mode=np.full(n, -1, dtype=np.int8),
        cosine=np.full(n, np.nan, dtype=np.float32),
    )
    rank = np.asarray(gt_rank, dtype=np.int32)
    _categorize_kept(out, np.arange(n), rank, norm_code, np.asarray(norm_values, dtype=object), lists, mode, k)
    return out


def _categorize_kept(
    out: PredictionCategories,
    kept: np.ndarray,
    gt_rank: np.ndarray,
    norm_code: np.ndarray,
    norm_values: np.ndarray,
    lists: GroupLists,
    mode: str,
    k: int,
) -> None:
    """The kept rows' categories: hit / hit_beyond_k from the evaluation's match, then the unmatched ones'."""
    matched = gt_rank >= 0
    out.category[kept] = np.where(matched & (out.position[kept] < k), CODE["hit"], CODE["hit_beyond_k"])
    out.gt_rank[kept[matched]] = gt_rank[matched]
    open_rows = kept[~matched]
    _unmatched(out, open_rows, norm_code[open_rows], norm_values, lists, mode, kept, gt_rank)


def _raw_rows(dataset: Dataset, lists: GroupLists) -> tuple[np.ndarray, np.ndarray]:
    """The prediction rows of the evaluated groups in list order (group, rank, file order), and each row's group.

    A group whose one row has no keyword is an empty list (docs/metrics.md §1): it has no keyword to categorize.
    """
    pred = dataset.predictions
    of_row = group_index(lists.groups, pred)
    rows = np.flatnonzero(of_row >= 0)
    rank = pd.to_numeric(pred["rank"], errors="coerce").to_numpy(dtype="float64")[rows]
    rows = rows[np.lexsort((rows, rank, of_row[rows]))]
    group = of_row[rows]
    size = np.bincount(group, minlength=len(lists.groups))
    keyword = pred["keyword"].to_numpy(dtype=object)[rows]
    marker = (size[group] == 1) & pd.isna(keyword)
    return rows[~marker], group[~marker]


def _position_in_group(group: np.ndarray) -> np.ndarray:
    """Per row (rows sorted by group), its position within its group."""
    if len(group) == 0:
        return np.zeros(0, dtype=np.int32)
    at = np.arange(len(group), dtype=np.int64)
    head = np.r_[True, group[1:] != group[:-1]]
    return (at - np.maximum.accumulate(np.where(head, at, 0))).astype(np.int32)


def _repeated_positions(group: np.ndarray, norm: np.ndarray, keep: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Per row, the position of the kept row of its group with the same normalized keyword (the one a duplicate
    repeats), -1 if none."""
    out = np.full(len(group), -1, dtype=np.int32)
    if len(group) == 0:
        return out
    width = int(norm.max()) + 2
    key = group.astype(np.int64) * width + norm + 1
    kept_keys, kept_at = key[keep], np.flatnonzero(keep)
    order = np.argsort(kept_keys, kind="stable")
    found = np.searchsorted(kept_keys[order], key)
    found = np.minimum(found, max(len(order) - 1, 0))
    ok = (len(order) > 0) & (kept_keys[order][found] == key) if len(order) else np.zeros(len(key), bool)
    out[ok] = position[kept_at[order[found[ok]]]]
    return out


def _evaluated_matches(
    evaluation: Evaluation, lists: GroupLists, group: np.ndarray, position: np.ndarray, norm: np.ndarray
) -> np.ndarray:
    """The GT rank each kept row was matched to by the evaluation (`Evaluation.keywords`), or -1.

    The kept rows must be the evaluation's keywords (same groups, positions and normalized keywords): an evaluation
    made without its per-keyword table, or of other data, is refused.
    """
    kw = evaluation.keywords
    kw_group = group_index(lists.groups, kw)
    kw_position = kw["position"].to_numpy(dtype=np.int64)
    order = np.lexsort((kw_position, kw_group))
    if len(kw) != len(group) or not (
        np.array_equal(kw_group[order], group) and np.array_equal(kw_position[order], position)
    ):
        raise ValueError(
            "the evaluation's per-keyword table does not match the predictions "
            "(evaluate with keywords=True, on the same dataset)"
        )
    if len(norm) and not np.array_equal(kw["norm"].to_numpy(dtype=object)[order], norm):
        raise ValueError("the evaluation's keywords were normalized differently from the predictions")
    return kw["gt_rank"].to_numpy(dtype=np.int64)[order].astype(np.int32)


def _first_candidates(
    row_list: np.ndarray, norm_code: np.ndarray, norm_values: np.ndarray, lists: GroupLists, mode: str
) -> np.ndarray:
    """Per row, the lowest GT rank of its list that its normalized keyword matches under `mode`, or -1.

    One candidate table per list, over the list's distinct keywords (`kweval.text.matching.candidate_table`).
    """
    out = np.full(len(row_list), -1, dtype=np.int32)
    if len(row_list) == 0:
        return out
    order = np.argsort(row_list, kind="stable")
    bounds = np.flatnonzero(np.r_[True, row_list[order][1:] != row_list[order][:-1], True])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        at = order[a:b]
        lst = int(row_list[at[0]])
        if lst < 0:
            continue
        start, size = int(lists.list_start[lst]), int(lists.list_size[lst])
        codes, inverse = np.unique(norm_code[at], return_inverse=True)
        cand_bounds, flat = candidate_table(
            norm_values[codes].tolist(), lists.gt_norm[start : start + size].tolist(), mode
        )
        first = np.full(len(codes), -1, dtype=np.int32)
        has = cand_bounds[1:] > cand_bounds[:-1]
        first[has] = flat[cand_bounds[:-1][has]]
        out[at] = first[inverse]
    return out


def _unmatched(
    out: PredictionCategories,
    rows: np.ndarray,
    norm_code: np.ndarray,
    norm_values: np.ndarray,
    lists: GroupLists,
    mode: str,
    kept: np.ndarray,
    kept_gt_rank: np.ndarray,
) -> None:
    """Categorize the kept rows the evaluation left unmatched: taken, near_lexical, else off_reference (for now)."""
    out.category[rows] = CODE["off_reference"]
    row_list = lists.group_list[out.group[rows]]
    first = _first_candidates(row_list, norm_code, norm_values, lists, mode)
    taken = first >= 0
    out.category[rows[taken]] = CODE["taken"]
    out.gt_rank[rows[taken]] = first[taken]
    out.holder[rows[taken]] = _holders(
        out.group[rows[taken]], first[taken], out.group[kept], out.position[kept], kept_gt_rank
    )
    open_at = np.flatnonzero(~taken)
    for m, other in enumerate(NEAR_MODES):
        if other == mode or other in _IMPLIED[mode] or len(open_at) == 0:
            continue
        try:
            first = _first_candidates(row_list[open_at], norm_code[open_at], norm_values, lists, other)
        except MissingExtra as exc:  # stem matching without nltk: the other modes are still tried
            out.notes.append(f"near_lexical not tested under {other}: {exc}")
            continue
        near = first >= 0
        hit = rows[open_at[near]]
        out.category[hit] = CODE["near_lexical"]
        out.gt_rank[hit] = first[near]
        out.mode[hit] = m
        open_at = open_at[~near]


def _holders(
    group: np.ndarray, gt_rank: np.ndarray, kept_group: np.ndarray, kept_position: np.ndarray, kept_gt: np.ndarray
) -> np.ndarray:
    """Per (group, GT rank), the position of the kept row of that group matched to it (-1 if none)."""
    matched = kept_gt >= 0
    width = int(max(kept_gt.max(initial=0), gt_rank.max(initial=0))) + 1
    keys = kept_group[matched].astype(np.int64) * width + kept_gt[matched]
    order = np.argsort(keys)
    want = group.astype(np.int64) * width + gt_rank
    at = np.minimum(np.searchsorted(keys[order], want), max(len(keys) - 1, 0))
    out = np.full(len(want), -1, dtype=np.int32)
    if len(keys):
        ok = keys[order][at] == want
        out[ok] = kept_position[matched][order[at[ok]]]
    return out


def _semantic(
    out: PredictionCategories, norm_code: np.ndarray, norm_values: np.ndarray, lists: GroupLists, vectors, tau: float
) -> None:
    """Each kept row's best cosine to its list; near_semantic (cosine ≥ τ) for those off the reference lexically."""
    from kweval.embeddings.similarity import nearest_gt

    kept = np.flatnonzero(out.position >= 0)
    row_list = lists.group_list[out.group[kept]]
    order = np.argsort(row_list, kind="stable")
    if len(kept) == 0:
        return
    bounds = np.flatnonzero(np.r_[True, row_list[order][1:] != row_list[order][:-1], True])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        at = kept[order[a:b]]
        lst = int(row_list[order[a]])
        if lst < 0 or lists.list_size[lst] == 0:
            continue
        start, size = int(lists.list_start[lst]), int(lists.list_size[lst])
        codes, inverse = np.unique(norm_code[at], return_inverse=True)
        idx, cos = nearest_gt(norm_values[codes].tolist(), lists.gt_norm[start : start + size].tolist(), vectors)
        out.cosine[at] = cos[inverse].astype(np.float32)
        off = at[out.category[at] == CODE["off_reference"]]
        nearest = idx[inverse][out.category[at] == CODE["off_reference"]].astype(np.int32)
        out.gt_rank[off] = nearest
        near = out.cosine[off] >= np.float32(tau)
        out.category[off[near]] = CODE["near_semantic"]
