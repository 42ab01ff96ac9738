"""The lattice: one collection × model's scores under any protocol, every stage computed once and shared.

Speed: `Lattice` is `kweval.keyphrase.protocols.score_documents` + `summarize` (the plain definition)
vectorised over documents and shared between protocols.  Each stage depends on a few conventions only
and is cached under them: the rows of a list reading (`split`, `empty_list`), their words (+ tokenizer,
stemming), the kept predictions and gold and their one-to-one assignment (+ matching, invalid,
prediction_dedup, gold_dedup, dedup_key), the present split (+ present_rule, present_form); the cut-off,
macro form and documents averaged are arithmetic on those.  So the 1,024 protocols of a gap with ten
differing conventions cost a few dozen list stages.  tests/test_lattice.py checks every document's value
and every summary against `score_documents` and `summarize` under many protocols.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kweval._arrays import position_in_run, run_heads
from kweval.keyphrase.protocols import f1_of_means, make_protocol
from kweval.lattice.rows import Reading, Side, Words, haystacks, presence, read_rows, read_words
from kweval.text.matching import assign_matches_table, keywords_match_indexed

Settings = Mapping[str, str]
_READING = ("split", "empty_list")
_WORDS = (*_READING, "tokenizer", "stemming")
_KEPT = (*_WORDS, "invalid", "prediction_dedup", "gold_dedup", "dedup_key")  # the kept lists
ALIASES = {"recall_present": "r@M_present", "recall_absent": "r@M_absent"}  # the pipeline's names of two columns


@dataclass(frozen=True)
class Metric:
    """A column of a protocol's table: measure p, r or f1 at a cut-off (an int, "M", "O"), over a part of the gold
    ("" all, "present", "absent")."""

    name: str
    measure: str
    cutoff: int | str
    part: str


def parse_metric(name: str) -> Metric:
    """The metric a column name means (the pipeline's recall_present / recall_absent are r@M_present /
    r@M_absent); ValueError for a name no protocol reports."""
    column = ALIASES.get(name, name)
    measure, at, rest = column.partition("@")
    cutoff_text, _, part = rest.partition("_")
    ok = at and measure in ("p", "r", "f1") and part in ("", "present", "absent")
    cutoff: int | str = cutoff_text
    if ok and cutoff_text not in ("M", "O"):
        ok = cutoff_text.isdigit() and int(cutoff_text) > 0
        cutoff = int(cutoff_text) if ok else cutoff_text
    if not ok or part == "absent" and measure != "r":
        raise ValueError(
            f"{name!r} is no protocol metric (p@K, r@K, f1@K with K a number, M or O, their _present forms, r@K_absent)"
        )
    return Metric(column, measure, cutoff, part)


@dataclass(frozen=True)
class Lists:
    """A protocol's kept predictions (rank order) assigned to its kept gold."""

    gold_keep: np.ndarray  # bool per gold row
    rows: np.ndarray  # the kept prediction rows
    first: np.ndarray  # bool per kept row: no repeat (a pke repeat stays in |P| and matches nothing)
    assigned: np.ndarray  # per kept row: the gold row it takes, or -1
    cand_kept: np.ndarray  # candidate pairs: kept index (sorted), then
    cand_gold: np.ndarray  # the gold row it could take


@dataclass(frozen=True)
class Scored:
    """One list the cut-off metrics read: per row its document, position and whether it counts; per document the
    list's length and the relevant gold phrases."""

    doc: np.ndarray
    position: np.ndarray
    hit: np.ndarray
    n_list: np.ndarray
    n_relevant: np.ndarray


def _first_of_key(doc: np.ndarray, key: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Per row: whether it is the first of the rows `among` with its (document, key); False outside `among`."""
    out = np.zeros(len(doc), dtype=bool)
    rows = np.flatnonzero(among)
    if len(rows):
        _, first = np.unique(doc[rows] * (int(key.max()) + 1) + key[rows], return_index=True)
        out[rows[first]] = True
    return out


_NONE = np.zeros(0, dtype=np.int64)


def _exact_assign(words: Words, rows: np.ndarray, first: np.ndarray, gold_ok: np.ndarray) -> np.ndarray:
    """The one-to-one assignment under exact matching, at once: the c-th prediction (rank order) of a document with
    some words takes the c-th gold row (file order) with the same words among `gold_ok`, or -1 (a repeat: -1)."""
    width = len(words.vocabulary) + 1
    gold_rows = np.flatnonzero(gold_ok)
    gold_key = words.gold.doc[gold_rows] * width + words.gold.words[gold_rows]
    order = np.argsort(gold_key, kind="stable")
    sorted_key, sorted_rows = gold_key[order], gold_rows[order]
    eligible = np.flatnonzero(first)
    key = words.pred.doc[rows[eligible]] * width + words.pred.words[rows[eligible]]
    by_key = np.argsort(key, kind="stable")
    rank = np.empty(len(key), dtype=np.int64)
    rank[by_key] = position_in_run(run_heads(key[by_key])) if len(key) else rank
    lo = np.searchsorted(sorted_key, key, side="left")
    ok = rank < np.searchsorted(sorted_key, key, side="right") - lo
    out = np.full(len(rows), -1, dtype=np.int64)
    out[eligible[ok]] = sorted_rows[lo[ok] + rank[ok]]
    return out


def _assign(doc: np.ndarray, cand_kept: np.ndarray, cand_gold: np.ndarray) -> np.ndarray:
    """The one-to-one assignment of rows in rank order (`kweval.text.matching.assign_matches_table`): each takes the
    first gold row among its candidates not yet taken in its document, or -1."""
    n = len(doc)
    if n == 0 or len(cand_kept) == 0:
        return np.full(n, -1, dtype=np.int64)
    bounds = np.searchsorted(cand_kept, np.arange(n + 1))
    return assign_matches_table(doc, np.arange(n), bounds, cand_gold)


class Lattice:
    """The scores of one model's `predictions` on a collection (`gold`, `texts` by document) under any protocol."""

    def __init__(
        self,
        gold: Mapping[str, Sequence[str]],
        predictions: Mapping[str, Sequence[str]],
        texts: Mapping[str, str] | None = None,
    ) -> None:
        self.docs = list(gold)
        self.gold, self.predictions = gold, predictions
        self.texts: Mapping[str, str | None] = texts if texts is not None else {}
        self.has_gold = np.array([bool(gold[d]) for d in self.docs], dtype=bool)
        text = [self.texts.get(d) for d in self.docs]
        self.no_text = np.array([t is None for t in text], dtype=bool)
        self.blank = np.array([t is None or not t.strip() for t in text], dtype=bool)
        self._cache: dict[tuple, object] = {}
        self._ids: dict[bytes, int] = {}
        self.inert = self._inert()

    def _inert(self) -> frozenset[str]:
        """The conventions whose settings read this data identically, so they cannot change any value here: `split`
        when no phrase holds ';', `empty_list` when no list is empty, `averaged` when every document has gold and a
        non-blank text."""
        lists = [*(self.gold[d] for d in self.docs), *(self.predictions.get(d, ()) for d in self.docs)]
        out = set()
        if not any(";" in phrase for phrases in lists for phrase in phrases):
            out.add("split")
        if all(lists):
            out.add("empty_list")
        if self.has_gold.all() and not self.blank.any():
            out.add("averaged")
        return frozenset(out)

    def _key(self, s: Settings, names: Sequence[str]) -> tuple[str, ...]:
        """The settings of `names` (an inert convention's as "*": one stage serves every setting of it)."""
        return tuple("*" if n in self.inert else s[n] for n in names)

    def _memo(self, key: tuple, make):
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = make()
        return found

    # ------------------------------------------------------------------ the stages
    def reading(self, s: Settings) -> Reading:
        key = ("reading", *self._key(s, _READING))
        return self._memo(key, lambda: read_rows(self.docs, self.gold, self.predictions, s["split"], s["empty_list"]))

    def words(self, s: Settings) -> Words:
        key = ("words", *self._key(s, _WORDS))
        return self._memo(key, lambda: read_words(self.reading(s), make_protocol(s)))

    def _candidates(self, s: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(prediction row, gold row) of every same-document pair that matches under approx or word matching."""
        key = ("candidates", *self._key(s, _WORDS), s["matching"])
        return self._memo(key, lambda: _substring_pairs(self.words(s), s["matching"]))

    def _content(self, *parts: object) -> int:
        """A small number naming `parts` (arrays and keys) by their content: stages whose inputs are equal share
        one result, whichever settings led to them (most conventions read most data alike)."""
        digest = hashlib.blake2b(digest_size=16)
        for part in parts:
            digest.update(part.tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
            digest.update(b"|")
        return self._ids.setdefault(digest.digest(), len(self._ids))

    def _kept(self, s: Settings) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(content id, gold rows kept, prediction rows kept, which of those are no repeat): the filters and
        repeats of `invalid`, `prediction_dedup`, `gold_dedup`, `dedup_key`."""
        key = ("kept", *self._key(s, _KEPT))
        return self._memo(key, lambda: self._make_kept(s))

    def _make_kept(self, s: Settings) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        w = self.words(s)
        gold, pred = w.gold, w.pred
        gold_keep = ~gold.no_words if s["invalid"] == "no_words" else np.ones(len(gold.doc), dtype=bool)
        if s["gold_dedup"] == "drop":
            gold_keep &= _first_of_key(gold.doc, gold.keys[s["dedup_key"]], gold_keep)
        valid = _valid(pred, s["invalid"])
        key = pred.keys[s["dedup_key"]]
        first_all = _first_of_key(pred.doc, key, valid if s["invalid"] != "meng" else np.ones(len(key), dtype=bool))
        rows = np.flatnonzero(valid & (first_all | (s["prediction_dedup"] != "drop")))
        first = first_all[rows]
        return self._content(self._key(s, _WORDS), gold_keep, rows, first), gold_keep, rows, first

    def lists(self, s: Settings) -> Lists:
        """The kept lists of `s` and their one-to-one assignment under `matching`."""
        kept = self._kept(s)
        return self._memo(("lists", kept[0], s["matching"]), lambda: self._make_lists(s, *kept[1:]))

    def _make_lists(self, s: Settings, gold_keep: np.ndarray, rows: np.ndarray, first: np.ndarray) -> Lists:
        w = self.words(s)
        if s["matching"] == "exact":
            return Lists(gold_keep, rows, first, _exact_assign(w, rows, first, gold_keep), _NONE, _NONE)
        pairs_pred, pairs_gold = self._candidates(s)
        index = np.full(len(w.pred.doc), -1, dtype=np.int64)
        index[rows[first]] = np.flatnonzero(first)
        keep = (index[pairs_pred] >= 0) & gold_keep[pairs_gold]
        cand_kept, cand_gold = index[pairs_pred[keep]], pairs_gold[keep]  # sorted by prediction row, then gold row
        return Lists(gold_keep, rows, first, _assign(w.pred.doc[rows], cand_kept, cand_gold), cand_kept, cand_gold)

    def _presence(self, s: Settings) -> tuple[int, np.ndarray, np.ndarray]:
        """(content id, per gold row present, per prediction row present) under `present_rule`."""
        rule = s["present_rule"]
        if rule == "matching" and s["matching"] != "approx":
            rule = "words"  # the matching's rule is a run of words except under approx
        key = ("presence", *self._key(s, _WORDS), rule)

        def make():
            w = self.words(s)
            hay = self._memo(
                ("hay", s["tokenizer"], s["stemming"]), lambda: haystacks(self.docs, self.texts, make_protocol(s))
            )
            gold, pred = (presence(w, side, hay, rule, "approx") for side in (w.gold, w.pred))
            return self._content(self._key(s, _WORDS), gold, pred), gold, pred

        return self._memo(key, make)

    def _scored_key(self, s: Settings, part: str) -> tuple:
        lists = self.lists(s)
        if not part:
            return ("scored", id(lists), part)
        return ("scored", id(lists), part, self._presence(s)[0], s["present_form"])

    def scored(self, s: Settings, part: str) -> Scored:
        """The list the metrics of `part` ("" all gold, "present", "absent") score under `s`."""
        return self._memo(self._scored_key(s, part), lambda: self._make_scored(s, part))

    def _make_scored(self, s: Settings, part: str) -> Scored:
        lists, w, n = self.lists(s), self.words(s), len(self.docs)
        doc = w.pred.doc[lists.rows]
        if not part:
            return _scored(doc, lists.assigned >= 0, np.bincount(w.gold.doc[lists.gold_keep], minlength=n), n)
        _, gold_present, pred_present = self._presence(s)
        side = part == "present"
        relevant = np.bincount(w.gold.doc[lists.gold_keep & (gold_present == side)], minlength=n)
        taken = lists.assigned
        if s["present_form"] == "credit":
            return _scored(doc, (taken >= 0) & (gold_present[np.maximum(taken, 0)] == side), relevant, n)
        mine = np.flatnonzero(pred_present[lists.rows] == side)
        if s["matching"] == "exact":
            # presence is a function of a phrase's words, and exact matches have equal words: each match stays on
            # one side, so assigning within a side is the whole assignment restricted to it
            return _scored(doc[mine], taken[mine] >= 0, relevant, n)
        local = np.full(len(lists.rows), -1, dtype=np.int64)
        local[mine] = np.arange(len(mine))
        keep = (local[lists.cand_kept] >= 0) & (gold_present[lists.cand_gold] == side)
        assigned = _assign(doc[mine], local[lists.cand_kept[keep]], lists.cand_gold[keep])
        return _scored(doc[mine], assigned >= 0, relevant, n)

    # ------------------------------------------------------------------ values
    def scores(self, s: Settings, part: str, cutoff: int | str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per document P, R and F1 of the `part` list at `cutoff` (`protocols.prf_at`)."""
        flexible = s["cutoff"] == "flexible" or s["cutoff"] == "hard_oracle_flexible" and cutoff == "O"
        key = ("scores", *self._scored_key(s, part), cutoff, cutoff != "M" and flexible)
        return self._memo(key, lambda: _cutoff_scores(self.scored(s, part), cutoff, flexible))

    def document_values(self, s: Settings, metric: Metric) -> np.ndarray:
        """Per document (the collection's order) the metric's value under `s`, as `score_documents` gives it; NaN
        where it is undefined (no text for a present metric) or the document is not averaged."""
        if metric.part and s["present_rule"] == "none":
            return np.full(len(self.docs), np.nan)
        p, r, f = self.scores(s, metric.part, metric.cutoff)
        key = ("values", id(p), metric.measure, *self._key(s, ("averaged",)))
        return self._memo(key, lambda: self._defined({"p": p, "r": r, "f1": f}[metric.measure], s, metric))

    def _defined(self, values: np.ndarray, s: Settings, metric: Metric) -> np.ndarray:
        """`values` with NaN where the protocol leaves a document's value undefined or does not average it."""
        with_gold = s["averaged"] == "with_gold"
        undefined = (self.blank if with_gold else self.no_text) if metric.part else np.zeros(len(self.docs), bool)
        if with_gold:
            undefined = undefined | ~self.has_gold
            if metric.part and metric.measure != "p":  # no such gold: no recall, no F1 (`protocols._undefined_splits`)
                undefined = undefined | (self.scored(s, metric.part).n_relevant == 0)
        return np.where(undefined, np.nan, values) if undefined.any() else values

    def averaged(self, s: Settings) -> np.ndarray:
        """The documents the protocol averages (`averaged`)."""
        return self.has_gold if s["averaged"] == "with_gold" else np.ones(len(self.docs), dtype=bool)

    def value(self, s: Settings, metric: Metric) -> float:
        """The collection's value of `metric` under `s`: `summarize(protocol, score_documents(...))[metric]`."""
        if metric.part and s["present_rule"] == "none":
            return math.nan
        if metric.measure == "f1" and s["macro"] == "f1_of_means":
            p, r = (self.value(s, Metric(m + metric.name[2:], m, metric.cutoff, metric.part)) for m in ("p", "r"))
            return f1_of_means(p, r)
        values = self.document_values(s, metric)
        key = ("value", id(values), *self._key(s, ("averaged",)))
        return self._memo(key, lambda: self._mean(values, s))

    def _mean(self, values: np.ndarray, s: Settings) -> float:
        """`summarize`'s mean: over the averaged documents; under `with_gold` of the defined values (NaN when none)."""
        values = values[self.averaged(s)]
        if s["averaged"] == "with_gold":
            values = values[~np.isnan(values)]
            if not len(values):
                return math.nan
        return math.fsum(values.tolist()) / len(values) if len(values) else 0.0


def _valid(pred: Side, invalid: str) -> np.ndarray:
    if invalid == "no_words":
        return ~pred.no_words
    return pred.meng_valid.copy() if invalid == "meng" else np.ones(len(pred.doc), dtype=bool)


def _scored(doc: np.ndarray, hit: np.ndarray, relevant: np.ndarray, n: int) -> Scored:
    position = position_in_run(run_heads(doc)) if len(doc) else np.zeros(0, dtype=np.int64)
    return Scored(doc, position, hit, np.bincount(doc, minlength=n), relevant)


def _cutoff_scores(scored: Scored, cutoff: int | str, flexible: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document P, R and F1 at `cutoff` (`protocols.prf_at` on every document at once)."""
    n_list, relevant = scored.n_list, scored.n_relevant
    k = n_list if cutoff == "M" else relevant if cutoff == "O" else np.full(len(n_list), int(cutoff))
    within = scored.hit & (scored.position < k[scored.doc])
    hits = np.bincount(scored.doc[within], minlength=len(n_list)).astype("float64")
    den = np.where(n_list == 0, 0, np.minimum(k, n_list) if flexible else k)
    p = np.zeros(len(n_list))
    np.divide(hits, den, out=p, where=den > 0)
    r = np.zeros(len(n_list))
    np.divide(hits, relevant, out=r, where=relevant > 0)
    f = np.zeros(len(n_list))
    np.divide(2.0 * p * r, p + r, out=f, where=p + r > 0)
    return p, r, f


_PAIR_CHUNK = 1 << 20  # same-document pairs tested at once: bounds the working memory on large collections


def _substring_pairs(words: Words, matching: str) -> tuple[np.ndarray, np.ndarray]:
    """Every same-document (prediction row, gold row) that matches under approx or word (`protocols.assign`'s rule,
    by `kweval.text.matching.keywords_match_indexed` on the words joined by spaces), sorted; `_PAIR_CHUNK` pairs
    at a time."""
    pred, gold = words.pred, words.gold
    n = int(max(pred.doc.max(initial=-1), gold.doc.max(initial=-1))) + 1
    n_gold = np.bincount(gold.doc, minlength=n)
    gold_start = np.cumsum(n_gold) - n_gold
    per_pred = n_gold[pred.doc]
    ends = np.cumsum(per_pred)
    cuts = np.unique(np.searchsorted(ends, np.arange(_PAIR_CHUNK, int(ends[-1]) if len(ends) else 0, _PAIR_CHUNK)))
    joined = [" ".join(v) for v in words.vocabulary]
    empty = np.array([not j for j in joined], dtype=bool)
    found_pred, found_gold = [], []
    for rows in np.split(np.arange(len(pred.doc)), cuts):
        counts = per_pred[rows]
        pair_pred = np.repeat(rows, counts)
        offsets = np.arange(len(pair_pred)) - np.repeat(np.cumsum(counts) - counts, counts)
        pair_gold = np.repeat(gold_start[pred.doc[rows]], counts) + offsets
        p_code, g_code = pred.words[pair_pred], gold.words[pair_gold]
        hit = keywords_match_indexed(joined, joined, p_code, g_code, matching)
        either = empty[p_code] | empty[g_code]
        hit[either] = p_code[either] == g_code[either]  # a phrase without words matches only its equal
        found_pred.append(pair_pred[hit])
        found_gold.append(pair_gold[hit])
    return np.concatenate(found_pred), np.concatenate(found_gold)
