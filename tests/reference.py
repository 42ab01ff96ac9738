"""A deliberately naive, loop-by-loop reading of METRICS.md §1–3 and §6.

It shares no code with `kweval` (own normalization, own matching, own
metrics) so that tests comparing the two catch mistakes in either.
"""

from __future__ import annotations

import math
import unicodedata


def norm(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).casefold()
    s = "".join(c for c in s if c.isalnum() or c.isspace())
    return " ".join(s.split())


def clean_predictions(pairs, direction="higher"):
    """[(keyword, score)] -> [(norm, confidence)] per METRICS.md §1."""
    out, seen = [], set()
    for kw, score in pairs:
        if not isinstance(kw, str):
            continue
        n = norm(kw)
        if not n or n in seen:
            continue
        seen.add(n)
        ok = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score) and score >= 0
        if not ok:
            conf = 0.0
        elif direction == "lower":
            conf = 1.0 / (1.0 + score)
        else:
            conf = float(score)
        out.append((n, conf))
    return out


def clean_gt(keywords):
    out, seen = [], set()
    for kw in keywords:
        if not isinstance(kw, str):
            continue
        n = norm(kw)
        if n and n not in seen:
            seen.add(n)
            out.append(n)
    return out


def matches(p: str, g: str, mode: str) -> bool:
    if mode == "exact":
        return p == g
    if mode == "approx":
        return p == g or p in g or g in p
    if mode == "word":
        pt, gt = p.split(), g.split()

        def contains(a, b):  # b is a contiguous token run of a
            return any(a[i : i + len(b)] == b for i in range(len(a) - len(b) + 1))

        return contains(gt, pt) or contains(pt, gt)
    raise ValueError(mode)


def assign(P, G, mode):
    taken, pairs = set(), []
    for i, p in enumerate(P):
        for j, g in enumerate(G):
            if j not in taken and matches(p, g, mode):
                taken.add(j)
                pairs.append((i, j))
                break
    return pairs


def gain_of(j, gain):
    g = 1.0 / math.log2(j + 2)
    return 2**g - 1 if gain == "exponential" else g


def disc_of(i, discount):
    if discount == "jarvelin":
        return 1.0 if i == 0 else 1.0 / math.log2(i + 1)
    return 1.0 / math.log2(i + 2)


def review_metrics(pred_pairs, gt_keywords, k=5, mode="approx", gain="linear", discount="log2", direction="higher"):
    P = clean_predictions(pred_pairs, direction)
    G = clean_gt(gt_keywords)
    words = [p for p, _ in P]
    s = [c for _, c in P]
    M = assign(words, G, mode)
    n_m = len(M)
    prec = n_m / len(P) if P else 0.0
    rec = n_m / len(G) if G else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    tot = sum(s)
    wp = sum(s[i] for i, _ in M) / tot if tot else 0.0
    gsum = sum(gain_of(j, gain) for j in range(len(G)))
    wr = sum(gain_of(j, gain) for _, j in M) / gsum if gsum else 0.0
    wf = 2 * wp * wr / (wp + wr) if wp + wr else 0.0
    dcg = sum(gain_of(j, gain) * disc_of(i, discount) for i, j in M if i < k)
    idcg = sum(gain_of(j, gain) * disc_of(j, discount) for j in range(min(k, len(G))))
    ndcg = dcg / idcg if idcg else 0.0
    matched_pos = sorted(i for i, _ in M)
    pk = sum(1 for i in matched_pos if i < k) / k
    ap, hits = 0.0, 0
    for i in range(k):
        if i in matched_pos:
            hits += 1
            ap += hits / (i + 1)
    denom = min(k, len(G))
    ap = ap / denom if denom else 0.0
    first = [i for i in matched_pos if i < k]
    rr = 1.0 / (first[0] + 1) if first else 0.0
    return {
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "w_precision": wp,
        "w_recall": wr,
        "w_f1": wf,
        f"ndcg@{k}": ndcg,
        f"p@{k}": pk,
        f"ap@{k}": ap,
        "rr": rr,
        "_counts": (n_m, len(P), len(G), sum(s[i] for i, _ in M), tot, sum(gain_of(j, gain) for _, j in M), gsum),
        "_matched_gt": {j for _, j in M},
    }
