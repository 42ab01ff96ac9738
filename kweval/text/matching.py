"""Keyword matching (docs/metrics.md §2): match modes and the one-to-one assignment.

Matching is done once per *unique* normalized keyword of a movie against that
movie's GT list (`candidate_table`), then each review's ranked predictions are
assigned greedily, every list at once (`assign_matches_table`).  Real predictions repeat the same
keywords across thousands of reviews, so this shares almost all the work.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kweval._arrays import object_array
from kweval.text.normalize import stem_tokens

MATCH_MODES = ("approx", "exact", "word", "stem")

_SEP = "\x00"  # never survives normalize(), so it cannot occur inside a keyword


def keywords_match(p: str, g: str, mode: str = "approx") -> bool:
    """Whether normalized prediction `p` matches normalized GT keyword `g` under `mode`.

    - ``exact``: equal strings.
    - ``approx``: equal, or one is a substring of the other (the notebooks' rule).
    - ``word``: like approx on whole tokens: "war" matches "star war", not "wars".
    - ``stem``: equal sequences of Porter stems ("lightsaber duels" = "lightsaber duel").
    """
    if mode == "exact":
        return p == g
    if mode == "approx":
        return p in g or g in p
    if mode == "word":
        pp, gg = f" {p} ", f" {g} "
        return pp in gg or gg in pp
    if mode == "stem":
        return stem_tokens(p) == stem_tokens(g)
    raise ValueError(f"unknown match mode {mode!r}; choose one of {', '.join(MATCH_MODES)}")


_INDEXED_LENGTH = 48  # items up to this long have their substrings indexed; longer ones are scanned


def keywords_match_pairs(preds: Sequence[str], gts: Sequence[str], mode: str = "approx") -> np.ndarray:
    """`keywords_match(preds[i], gts[i], mode)` for every i, as a bool array.

    The substring modes test both directions with `operator.contains` mapped
    in C, many times faster than a Python call per pair
    (`keywords_match_indexed` calls it on the pairs its filters keep).
    """
    n = len(preds)
    if mode == "exact":
        return np.fromiter(map(operator.eq, preds, gts), dtype=bool, count=n)
    if mode in ("approx", "word"):
        if mode == "word":
            preds = [f" {p} " for p in preds]
            gts = [f" {g} " for g in gts]
        p_in_g = np.fromiter(map(operator.contains, gts, preds), dtype=bool, count=n)
        return p_in_g | np.fromiter(map(operator.contains, preds, gts), dtype=bool, count=n)
    return np.fromiter(map(keywords_match, preds, gts, itertools.repeat(mode)), dtype=bool, count=n)


def keywords_match_indexed(
    preds: Sequence[str], gts: Sequence[str], pred_of: np.ndarray, gt_of: np.ndarray, mode: str = "approx"
) -> np.ndarray:
    """`keywords_match(preds[pred_of[i]], gts[gt_of[i]], mode)` for every i, as a bool array.

    For many index pairs over few distinct strings (per-review GT lists: each
    review's keywords against its own short list, millions of pairs a movie),
    most pairs are settled by arrays computed once per distinct string:

    - exact and stem match equal keys (the string; the sequence of stems):
      each distinct key gets an integer code, compared per pair;
    - approx and word match only where one string's characters are all
      among the other's (equal strings, or the shorter inside the longer):
      64-bit character masks and lengths find those few pairs, which alone
      are compared as strings (`keywords_match_pairs`).
    """
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode {mode!r}; choose one of {', '.join(MATCH_MODES)}")
    pred_of = np.asarray(pred_of, dtype=np.int64)
    gt_of = np.asarray(gt_of, dtype=np.int64)
    if mode in ("exact", "stem"):
        pred_keys = _stem_keys(preds) if mode == "stem" else list(preds)
        gt_keys = _stem_keys(gts) if mode == "stem" else list(gts)
        code = dict(zip(dict.fromkeys(pred_keys + gt_keys), itertools.count()))
        pred_code = np.fromiter(map(code.__getitem__, pred_keys), dtype=np.int64, count=len(pred_keys))
        gt_code = np.fromiter(map(code.__getitem__, gt_keys), dtype=np.int64, count=len(gt_keys))
        return pred_code[pred_of] == gt_code[gt_of]
    pred_mask, pred_len = _character_masks(preds)
    gt_mask, gt_len = _character_masks(gts)
    p_mask, g_mask = pred_mask[pred_of], gt_mask[gt_of]
    both = p_mask | g_mask
    maybe = np.flatnonzero((both == g_mask) | (both == p_mask))  # one side's characters all among the other's
    p_len, g_len = pred_len[pred_of[maybe]], gt_len[gt_of[maybe]]
    p_within, g_within = both[maybe] == g_mask[maybe], both[maybe] == p_mask[maybe]
    pred_text, gt_text = object_array(preds), object_array(gts)
    hit = np.zeros(len(pred_of), dtype=bool)
    same = maybe[(p_len == g_len) & p_within & g_within]  # same length: a match only if equal
    hit[same] = pred_text[pred_of[same]] == gt_text[gt_of[same]]
    inside = maybe[((p_len < g_len) & p_within) | ((g_len < p_len) & g_within)]
    hit[inside] = keywords_match_pairs(pred_text[pred_of[inside]].tolist(), gt_text[gt_of[inside]].tolist(), mode)
    return hit


def _stem_keys(items: Sequence[str]) -> list[tuple[str, ...]]:
    """`stem_tokens(item)` of every item, each distinct token stemmed once (the stemmer works word by word)."""
    tokens = [item.split() for item in items]
    distinct = list(dict.fromkeys(token for item_tokens in tokens for token in item_tokens))
    stem_of = dict(zip(distinct, stem_tokens(" ".join(distinct))))
    return [tuple(map(stem_of.__getitem__, item_tokens)) for item_tokens in tokens]


_BITS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))  # bit i set, for i < 64
_SPACE_BIT = _BITS[ord(" ") % 64]


def _character_masks(items: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per string, a 64-bit mask of its characters (bit: code point mod 64) and its length.

    A string inside another has its mask inside the other's.  The space bit
    is set in every mask, since word mode pads both sides with spaces.
    """
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    code_points = np.frombuffer("".join(items).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    masks = np.zeros(len(items), dtype=np.uint64)
    if len(code_points):
        bits = np.append(_BITS[code_points & np.uint32(63)], np.uint64(0))  # the final 0: where trailing "" start
        masks = np.where(lengths > 0, np.bitwise_or.reduceat(bits, np.cumsum(lengths) - lengths), masks)
    return masks | _SPACE_BIT, lengths


def _substrings(items: Sequence[str]) -> frozenset[str]:
    """Every substring of every item: a cheap test that lets most needles skip the blob scan.

    Only for short items: the set grows with the square of an item's length.
    Speed: a list of up to `_MEMO_ITEMS` items is served by `_substrings_memo` (the explorer asks
    for the same GT list's index review after review); a longer one (a whole collection's lists in
    the pipeline) is built and dropped, so memory never holds it.
    """
    if len(items) <= _MEMO_ITEMS:
        return _substrings_memo(tuple(items))
    return _all_substrings(items)


def _all_substrings(items: Sequence[str]) -> frozenset[str]:
    return frozenset(s[a:b] for s in items for a in range(len(s)) for b in range(a + 1, len(s) + 1))


_MEMO_ITEMS = 2_000  # a DNLP movie's list (~300 keywords) has a 1–2 MB index


@lru_cache(maxsize=16)
def _substrings_memo(items: tuple[str, ...]) -> frozenset[str]:
    """`_all_substrings` of the 16 latest short lists."""
    return _all_substrings(items)


def _needles_in_items(needles: Sequence[str], items: Sequence[str]) -> tuple[list[int], list[int]]:
    """(needle index, item index) for every item containing a needle.

    Short items (most GT keywords) are searched through an index of their
    substrings, which lets most needles skip the scan; long ones are scanned
    by every needle, so memory stays linear in the items' total length
    (a 2,500-character GT keyword costs kilobytes, not gigabytes).
    """
    short = [j for j, s in enumerate(items) if len(s) <= _INDEXED_LENGTH]
    long = [j for j, s in enumerate(items) if len(s) > _INDEXED_LENGTH]
    needle_idx: list[int] = []
    item_idx: list[int] = []
    for part, index in ((short, True), (long, False)):
        if not part:
            continue
        texts = [items[j] for j in part]
        blob, starts = _joined(texts)
        found, segments = _occurrences(needles, blob, starts, _substrings(texts) if index else None)
        needle_idx += found
        item_idx += [part[s] for s in segments]
    return needle_idx, item_idx


def _occurrences(
    needles: Sequence[str],
    blob: str,
    starts: np.ndarray,
    present: frozenset[str] | set[str] | None = None,
    scan_end: Sequence[int] | None = None,
) -> tuple[list[int], list[int]]:
    """(needle index, segment index) for every segment of `blob` containing a needle.

    `present`, when given, holds every substring of the blob's items: needles
    outside it cannot occur and are not scanned for.  `scan_end[i]`, when
    given, bounds the part of the blob where needle i can occur.
    """
    needle_idx: list[int] = []
    positions: list[int] = []
    for i, needle in enumerate(needles):
        if present is not None and needle not in present:
            continue
        end = len(blob) if scan_end is None else scan_end[i]
        pos = blob.find(needle, 0, end)
        while pos != -1:
            needle_idx.append(i)
            positions.append(pos)
            pos = blob.find(needle, pos + 1, end)
    segments = np.searchsorted(starts, np.asarray(positions, dtype=np.int64), side="right") - 1
    return needle_idx, segments.tolist()


def _joined(items: Sequence[str]) -> tuple[str, np.ndarray]:
    """`items` joined by a separator, with the start offset of each item."""
    lengths = np.fromiter((len(s) + 1 for s in items), dtype=np.int64, count=len(items))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(items) else np.zeros(0, np.int64)
    return _SEP.join(items) + _SEP, starts


def _gt_in_pred_by_scan(preds_s: list[str], gt_s: list[str]) -> tuple[list[int], list[int]]:
    """(prediction, GT) pairs with the GT string inside the prediction string.

    Predictions longest first, so each GT string scans only the prefix of
    predictions at least as long as itself.
    """
    pred_lengths = np.fromiter(map(len, preds_s), dtype=np.int64, count=len(preds_s))
    by_length = np.argsort(-pred_lengths, kind="stable")
    pred_blob, pred_starts = _joined([preds_s[i] for i in by_length.tolist()])
    gt_lengths = np.fromiter(map(len, gt_s), dtype=np.int64, count=len(gt_s))
    n_long_enough = np.searchsorted(-pred_lengths[by_length], -gt_lengths, side="right")
    blob_ends = np.append(pred_starts, len(pred_blob))[n_long_enough].tolist()
    jg, slots = _occurrences(gt_s, pred_blob, pred_starts, scan_end=blob_ends)
    return by_length[np.asarray(slots, dtype=np.int64)].tolist(), jg


def _gt_in_pred_by_tokens(preds: list[str], gt: list[str]) -> tuple[list[int], list[int]]:
    """`_gt_in_pred_by_scan` for normalized strings (tokens joined by single spaces), via their distinct tokens.

    - A GT keyword without a space lies inside one token of the prediction:
      search the (much shorter) blob of distinct tokens, then take every
      prediction holding a token found.
    - A GT keyword with spaces ends with a whole word that starts a token of
      the prediction: only predictions with a token beginning with that word
      can hold it, and each is tested directly.
    """
    holders: dict[str, list[int]] = {}  # token -> predictions holding it
    for i, p in enumerate(preds):
        for t in p.split(" "):
            lst = holders.get(t)
            if lst is None:
                holders[t] = [i]
            elif lst[-1] != i:
                lst.append(i)
    tokens = sorted(holders)
    pairs_p: list[int] = []
    pairs_g: list[int] = []
    single = [j for j, g in enumerate(gt) if " " not in g]
    if single:
        blob, starts = _joined(tokens)
        found, slots = _occurrences([gt[j] for j in single], blob, starts)
        for k, slot in zip(found, slots):
            held = holders[tokens[slot]]
            pairs_p += held
            pairs_g += [single[k]] * len(held)
    for j, g in enumerate(gt):
        if " " not in g:
            continue
        last = g[g.rindex(" ") + 1 :]
        lo = bisect.bisect_left(tokens, last)
        hi = bisect.bisect_left(tokens, last + "\U0010ffff", lo)  # tokens starting with `last`
        if lo == hi:
            continue
        candidates = set(holders[tokens[lo]]) if hi == lo + 1 else {i for t in tokens[lo:hi] for i in holders[t]}
        for i in candidates:
            if g in preds[i]:
                pairs_p.append(i)
                pairs_g.append(j)
    return pairs_p, pairs_g


def candidate_lists(preds: Sequence[str], gt: Sequence[str], mode: str = "approx") -> list[np.ndarray]:
    """For each normalized prediction, the sorted GT positions it matches under `mode`.

    `preds` should be unique (the caller maps each review's keywords to them).
    Substring modes search each string once in the other side joined into one
    blob, so the cost is linear in the text rather than |preds| × |gt| Python
    comparisons.
    """
    bounds, flat = candidate_table(preds, gt, mode)
    return [flat[bounds[i] : bounds[i + 1]] for i in range(len(preds))]


def candidate_table(preds: Sequence[str], gt: Sequence[str], mode: str = "approx") -> tuple[np.ndarray, np.ndarray]:
    """`candidate_lists` as one table: prediction i matches the GT positions ``flat[bounds[i]:bounds[i + 1]]``
    (sorted)."""
    if mode not in MATCH_MODES:
        raise ValueError(f"unknown match mode {mode!r}; choose one of {', '.join(MATCH_MODES)}")
    n_pred = len(preds)
    if n_pred == 0 or len(gt) == 0:
        return np.zeros(n_pred + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)

    pairs_p: list[int] = []
    pairs_g: list[int] = []
    if mode == "exact":
        index = {g: j for j, g in enumerate(gt)}
        for i, p in enumerate(preds):
            j = index.get(p)
            if j is not None:
                pairs_p.append(i)
                pairs_g.append(j)
    elif mode == "stem":
        by_stem: dict[tuple[str, ...], list[int]] = {}
        for j, key in enumerate(_stem_keys(gt)):
            by_stem.setdefault(key, []).append(j)
        for i, key in enumerate(_stem_keys(preds)):
            for j in by_stem.get(key, ()):
                pairs_p.append(i)
                pairs_g.append(j)
    else:
        if mode == "word":
            preds_s = [f" {p} " for p in preds]
            gt_s = [f" {g} " for g in gt]
        else:
            preds_s, gt_s = list(preds), list(gt)
        # prediction inside a GT keyword
        ip, jg = _needles_in_items(preds_s, gt_s)
        pairs_p += ip
        pairs_g += jg
        # GT keyword inside a prediction
        if mode == "approx":
            ip, jg = _gt_in_pred_by_tokens(preds_s, gt_s)
        else:
            ip, jg = _gt_in_pred_by_scan(preds_s, gt_s)
        pairs_p += ip
        pairs_g += jg

    if not pairs_p:
        return np.zeros(n_pred + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_gt = len(gt)
    keys = np.unique(np.asarray(pairs_p, dtype=np.int64) * n_gt + np.asarray(pairs_g, dtype=np.int64))
    p_idx, g_idx = np.divmod(keys, n_gt)
    return np.searchsorted(p_idx, np.arange(n_pred + 1)), g_idx


def assign_matches_table(group: np.ndarray, cand_id: np.ndarray, bounds: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """The one-to-one assignment (docs/metrics.md §2) of many ranked lists at once, candidates given as a
    `candidate_table`.

    Within a list, rows in rank order each take the lowest GT position among
    their candidates not yet taken, or -1 when none is left.

    `group[r]` is the list (review × model) of row `r`, rows sorted by group
    then rank; `cand_id[r]` indexes the table (the row's unique keyword).
    Returns the GT position assigned to each row, or -1.

    Fast path: if within a list the matched rows' first candidates are all
    different, every row takes its first candidate (no earlier row can have
    taken it), which numpy does at once.  Lists with a collision are replayed
    rank by rank, all of them together: at step s, the s-th row of every such
    list takes its lowest candidate not taken by the list's earlier rows.
    """
    group = np.asarray(group, dtype=np.int64)
    cand_id = np.asarray(cand_id, dtype=np.int64)
    n = len(group)
    counts = bounds[1:] - bounds[:-1]
    first = np.full(len(counts), -1, dtype=np.int64)
    has = counts > 0
    first[has] = flat[bounds[:-1][has]]
    row_first = first[cand_id] if n else np.zeros(0, dtype=np.int64)
    assigned = row_first.copy()
    matched = np.flatnonzero(row_first >= 0)
    if len(matched) < 2:
        return assigned
    g = group[matched]
    f = row_first[matched]
    order = np.lexsort((f, g))
    gs, fs = g[order], f[order]
    clash = (gs[1:] == gs[:-1]) & (fs[1:] == fs[:-1])
    if not clash.any():
        return assigned
    bad_groups = np.unique(gs[1:][clash])
    rows = np.flatnonzero(np.isin(group, bad_groups))  # in list order, each list's rows by rank
    row_group = group[rows]
    step = np.arange(len(rows)) - np.searchsorted(row_group, row_group, side="left")  # rank within its list
    row_cands = cand_id[rows]
    n_cands = counts[row_cands]
    pair_row = np.repeat(np.arange(len(rows)), n_cands)
    offsets = np.arange(len(pair_row)) - np.repeat(np.cumsum(n_cands) - n_cands, n_cands)
    pair_gt = flat[np.repeat(bounds[:-1][row_cands], n_cands) + offsets]
    width = int(flat.max()) + 1
    # (list, GT keyword) of each pair as a compact code, so "taken" is one flag per code
    _, pair_code = np.unique(row_group[pair_row] * width + pair_gt, return_inverse=True)
    pair_code = pair_code.reshape(-1)
    taken = np.zeros(int(pair_code.max(initial=-1)) + 1, dtype=bool)
    by_step = np.argsort(step[pair_row], kind="stable")  # pairs step by step, then by row, then by GT rank
    pair_step = step[pair_row][by_step]
    step_bounds = np.searchsorted(pair_step, np.arange(int(step.max()) + 2))
    result = np.full(len(rows), -1, dtype=np.int64)
    for s in range(len(step_bounds) - 1):
        sel = by_step[step_bounds[s] : step_bounds[s + 1]]
        free = sel[~taken[pair_code[sel]]]
        if len(free) == 0:
            continue
        owner = pair_row[free]
        first_free = free[np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))]  # each row's lowest
        result[pair_row[first_free]] = pair_gt[first_free]
        taken[pair_code[first_free]] = True
    assigned[rows] = result
    return assigned
