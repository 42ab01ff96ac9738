"""Evaluation protocols of the keyphrase field (pke, KPEval, Meng et al.) and every mixture of their conventions.

Every tool of the field computes "F1@5" with its own conventions: how phrases are
tokenised and stemmed, whether repeats are removed, whether P@k divides by k
or by the number of predictions, how a macro F1 is formed, ...  Each is a
`kweval.keyphrase.conventions.Convention`; a `Protocol` is one setting of every
one, so the four presets and any mixture of them are scored by the same
`score_documents` and aggregated by the same `summarize`.  The presets' numbers
equal the tools' own on the same inputs (tests/test_protocols.py and
tests/test_protocol_vectors.py hold reference vectors obtained by running them);
the defects each tool has are reproduced on purpose and listed in
`Protocol.defects` and docs/protocols.md.  The kweval preset's numbers are the
pipeline's (docs/metrics.md, `kweval evaluate`): tests/test_lattice.py checks that
`score_documents` under its conventions gives them.

Precision, recall and F1 at a cut-off are `kweval.metrics.cutoff`'s scalar
definitions, the same the vectorised keyphrase family (`kweval.metrics.keyphrase`)
is tested against.  Plain Python: the `--protocol` command must not load numpy
(bench/bench_keyphrase.py measures its whole process, and tests/test_protocols.py
checks that numpy and pandas stay out).  `kweval.keyphrase.lattice` is the
vectorised form for many protocols at once, tested against this one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import TypedDict

from kweval.keyphrase import phrases
from kweval.keyphrase.conventions import NAMES, PRESETS, check_settings, preset_settings, spec_of
from kweval.keyphrase.phrases import (  # noqa: F401  (the names other modules import from here)
    KPEVAL_SEPARATOR,
    KPEVAL_TITLE_SEPARATOR,
    MENG_UNK,
    Words,
    kpeval_document_words,
    kpeval_phrases,
    save_stems,
    stem_cache_notes,
    stem_words,
)
from kweval.metrics import cutoff as cutoff_metrics

# Cut-offs every protocol reports: two ranks and the two list-relative ones.
CUTOFFS: tuple[int | str, ...] = (5, 10, "M", "O")
ABSENT_CUTOFFS: tuple[int | str, ...] = (50, "M")
# per-document counts beside the metrics: the gold and predictions scored, the gold present and absent (NaN without
# the split); `summarize` and every caller that takes the other columns as metrics leave them out
COUNT_COLUMNS: tuple[str, ...] = ("n_gold", "n_predictions", "n_gt_present", "n_gt_absent")
# (a present/absent metric's prefixes, the count whose 0 leaves its recall and F1 without a denominator)
SPLIT_COUNTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("_present", ("r@", "f1@"), "n_gt_present"),
    ("_absent", ("r@",), "n_gt_absent"),
)


@dataclass(frozen=True)
class Protocol:
    """A protocol: one setting of every convention (`kweval.keyphrase.conventions.CONVENTIONS`, same names), and
    the tool whose conventions these are."""

    name: str
    tool: str
    defects: tuple[str, ...] = field(default=())
    _: KW_ONLY
    split: str
    empty_list: str
    tokenizer: str
    stemming: str
    matching: str
    invalid: str
    prediction_dedup: str
    gold_dedup: str
    dedup_key: str
    cutoff: str
    macro: str
    present_rule: str
    present_form: str
    averaged: str

    def settings(self) -> dict[str, str]:
        """{convention: setting}, in `CONVENTIONS` order."""
        return {name: getattr(self, name) for name in NAMES}

    def as_dict(self) -> dict[str, object]:
        """Plain fields, for the protocol card."""
        out = asdict(self)
        out["defects"] = list(self.defects)
        return out


MIXTURE_TOOL = "a mixture of the presets' conventions (docs/protocols.md)"


def make_protocol(settings: Mapping[str, str], name: str | None = None, tool: str = MIXTURE_TOOL) -> Protocol:
    """The protocol of `settings` (every convention; ValueError for an unknown one), named by its spec when no
    `name` is given (`kweval.keyphrase.conventions.spec_of`)."""
    checked = check_settings(settings)
    return Protocol(name or spec_of(checked), tool, (), **checked)


class _Description(TypedDict, total=False):
    """What each tool is, and the rules it states in words (the protocol card prints them)."""

    tool: str
    present_rule: str
    empty_predictions: str
    invalid_predictions: str
    defects: tuple[str, ...]


_DESCRIPTIONS: dict[str, _Description] = {
    "kweval": _Description(
        tool="kweval (docs/metrics.md)",
        present_rule="normalized phrase's words occur consecutively in the normalized document",
        empty_predictions="scores 0 and is counted",
        invalid_predictions="empty after normalization",
    ),
    "pke": _Description(
        tool="pke (boudinfl/pke, examples/benchmarking-models.py evaluate + utils.load_references)",
        present_rule="none (pke has no present/absent split; not reported)",
        empty_predictions="pke divides by zero; kweval scores 0 and counts the document",
        invalid_predictions="none: an empty or blank prediction is a phrase without words and counts in |P|",
        defects=(
            "P divides by the number of predictions returned (flexible cut-off), so a list shorter than k is not "
            "penalised",
            "duplicate gold phrases are counted in |G| (recall denominator)",
            "a duplicated prediction counts once in the numerator but twice in the denominator",
            "phrases are split on whitespace only: 'non-linear' and 'non linear' differ",
            "external predictions are read like the gold (load_references(normalize_reference=True)): split on "
            "whitespace, punctuation kept on words, Snowball 'porter' stems of the words as written (NLTK < 3.10 "
            "stems capitalised irregular forms such as 'News', 'Dying' differently)",
        ),
    ),
    "kpeval": _Description(
        tool="KPEval (uclanlp/KPEval, metrics/exact_matching_metric.py)",
        present_rule="stemmed words occur consecutively in the lower-cased document split on single spaces "
        "(punctuation stays on words; the title separator '[sep]' removed, each side stripped)",
        empty_predictions="an empty list is one empty prediction and an empty gold list one empty gold phrase "
        "(KPEval's one-line format); the two match, so a document with neither scores p@5 0.2, r 1, f1@M 1",
        invalid_predictions="none (the validity filter is switched off by invalidate_unk=True, passed as "
        "disable_valid_filter)",
        defects=(
            "filter_prediction receives invalidate_unk as disable_valid_filter: with the shipped config the "
            "validity filter never runs",
            "documents are split on single spaces: a word followed by punctuation ('langevin,') never matches, so "
            "presence is under-counted",
            "duplicate detection joins words with '_': 'a_b' and 'a b' are duplicates",
            "SemR's exact-match shortcut compares the whole label list with the predictions (labels_stemmed in "
            "preds_stemmed), so it never fires (semantic metrics, not reproduced here)",
            "phrases are split on ';' (its one-line input format), predictions and gold alike: 'alpha; beta' is two "
            "phrases",
            "a document with two or more '[sep]' stops KPEval (ValueError); kweval removes every '[sep]' and "
            "reports the document",
        ),
    ),
    "meng": _Description(
        tool="OpenNMT-kpg (memray/OpenNMT-kpg-release, kp_evaluate.py with tokenizer split_nopunc)",
        present_rule="stemmed words (split on \\W) occur consecutively in the stemmed document",
        empty_predictions="scores 0 and is counted",
        invalid_predictions="no words, or a word that is exactly 'unk' as written (case-sensitive, not stemmed: "
        "'<unk>' and 'unk model' are dropped, 'UNK' and 'unks' are not); duplicates are marked over every "
        "prediction first, so a repeat of an invalid one is dropped too",
        defects=(
            "duplicate gold phrases are counted in |G| (targets are not de-duplicated)",
            "under split_nopunc any prediction containing the word 'unk' is dropped as if it were the <unk> token",
            "a document without gold phrases but with a valid prediction stops OpenNMT-kpg (IndexError, "
            "kp_evaluate.py:103); kweval scores it 0 and averages it in",
        ),
    ),
}


# The card's words for each preset (`kweval.io.card`); the conventions themselves are `preset_settings`.
PROTOCOLS: dict[str, Protocol] = {
    name: Protocol(name, _DESCRIPTIONS[name]["tool"], _DESCRIPTIONS[name].get("defects", ()), **preset_settings(name))
    for name in PRESETS
}


def preset_description(preset: str) -> _Description:
    """The tool and the rules it states in words (present rule, empty and invalid predictions, defects)."""
    return _DESCRIPTIONS[preset]


# Per process: a phrase's words before and after stemming, and a document's words with their index and their join,
# under each (tokenizer, stemming): documents and gold are the same for every model of a run.
_phrases: dict[tuple[str, str, str], tuple[phrases.Words, phrases.Words]] = {}
_documents: dict[tuple[str, str, str], tuple[phrases.Words, str]] = {}


def read_phrase(protocol: Protocol, phrase: str) -> tuple[phrases.Words, phrases.Words]:
    """(words before stemming, words) of one phrase under the protocol's tokenizer and stemming (remembered; the
    stemmed reading starts from the unstemmed one)."""
    key = (protocol.tokenizer, protocol.stemming, phrase)
    found = _phrases.get(key)
    if found is None:
        plain_key = (protocol.tokenizer, "none", phrase)
        plain = _phrases.get(plain_key)
        if plain is None:
            words = tuple(phrases.tokens(protocol.tokenizer, phrase))
            plain = _phrases[plain_key] = (words, words)
        found = _phrases[key] = (plain[0], phrases.stemmed(protocol.stemming, plain[0]))
    return found


def phrase_words(protocol: Protocol, phrase: str) -> phrases.Words:
    """The (stemmed) words of one phrase under the protocol's tokenizer and stemming."""
    return read_phrase(protocol, phrase)[1]


def document_words(protocol: Protocol, text: str) -> phrases.Words:
    """The (stemmed) words of a document, as the protocol checks presence in it."""
    return _read_document(protocol, text)[0]


def document_text(protocol: Protocol, text: str) -> str:
    """A document's (stemmed) words joined by spaces (one string per distinct text, remembered)."""
    return _read_document(protocol, text)[1]


def _read_document(protocol: Protocol, text: str) -> tuple[phrases.Words, str]:
    """(words, their join) of a document under the protocol's tokenizer and stemming (remembered; the stemmed
    reading starts from the unstemmed one)."""
    key = (protocol.tokenizer, protocol.stemming, text)
    found = _documents.get(key)
    if found is None:
        plain_key = (protocol.tokenizer, "none", text)
        plain = _documents.get(plain_key)
        if plain is None:
            words = tuple(phrases.document_tokens(protocol.tokenizer, text))
            plain = _documents[plain_key] = (words, " ".join(words))
        doc = phrases.stemmed(protocol.stemming, plain[0])
        found = _documents[key] = (doc, " ".join(doc))
    return found


def document_problems(protocol: Protocol, texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """(document id, reason) for each document the protocol's tool could not read and kweval reads its own way."""
    return [
        (doc, f"{n} '[sep]' title separators: KPEval stops on more than one (ValueError); kweval removes every one")
        for doc, text in texts.items()
        if (n := phrases.title_separators(protocol.tokenizer, text)) > 1
    ]


def occurs(protocol: Protocol, phrase: phrases.Words, text: str) -> bool:
    """Whether a gold or predicted phrase (its words) is present in the document `text` (`present_rule`)."""
    if not phrase:  # OpenNMT-kpg's loop finds a phrase without words everywhere
        return protocol.present_rule == "words_empty_everywhere"
    needle = " ".join(phrase)
    if not needle.strip():
        return False
    joined = _read_document(protocol, text)[1]
    if protocol.present_rule == "matching" and protocol.matching == "approx":
        return needle in joined
    # its words a run of the document's: no word holds a space, so a run is the joins padded by spaces
    return f" {needle} " in f" {joined} "


def assign(matching: str, predictions: Sequence[phrases.Words], first: Sequence[bool], gold: Sequence[phrases.Words]):
    """The one-to-one assignment: per prediction in rank order the first gold phrase not yet taken that it matches
    (its index), or -1; a repeat (`first` False, pke) takes none.

    Matching (`matching`): equal words; for approx also a non-empty one's words joined by spaces inside the
    other's, for word as a run of whole words (the joins padded by spaces).
    """
    taken: list[int] = []
    if matching == "exact":
        free: dict[phrases.Words, list[int]] = {}
        for j, g in reversed(list(enumerate(gold))):
            free.setdefault(g, []).append(j)  # each key's positions, the first last (popped first)
        for words, f in zip(predictions, first):
            slots = free.get(words) if f else None
            taken.append(slots.pop() if slots else -1)
        return taken
    pad = matching == "word"
    texts = [_joined(g, pad) for g in gold]  # joined once per list
    left = list(range(len(gold)))
    for words, f in zip(predictions, first):
        j = -1
        if f:
            a = _joined(words, pad)
            j = next((j for j in left if words == gold[j] or a and a in texts[j] or texts[j] and texts[j] in a), -1)
        if j >= 0:
            left.remove(j)
        taken.append(j)
    return taken


def _joined(words: phrases.Words, pad: bool) -> str:
    """A phrase's words joined by spaces (padded by spaces for word matching); "" without words."""
    text = " ".join(words)
    return f" {text} " if pad and text else text


@dataclass(frozen=True)
class DocumentLists:
    """One document's scored lists under a protocol."""

    matched: list[bool]  # per kept prediction, in rank order: it counts as a match
    n_gold: int
    present_matched: list[bool] | None  # the list the present metrics score (`present_form`), None: no split
    n_present_gold: int
    absent_matched: list[bool] | None
    n_absent_gold: int


@functools.lru_cache(maxsize=1 << 14)  # a document's gold is read once for every model and `fates` question
def _gold_words(protocol: Protocol, gold: tuple[str, ...]) -> tuple[tuple[Words, ...], tuple[int, ...]]:
    """(the gold phrases scored, their indices in the list as read): invalid ones (kweval) and repeats dropped."""
    read = phrases.read_list(protocol.split, protocol.empty_list, gold)
    rows = list(enumerate(read_phrase(protocol, g) for g in read))
    if protocol.invalid == "no_words":
        rows = [r for r in rows if r[1][1]]
    if protocol.gold_dedup == "drop":
        first = {phrases.repeat_key(protocol.dedup_key, *r): n for n, (_, r) in reversed(list(enumerate(rows)))}
        rows = [rows[n] for n in sorted(first.values())]
    return tuple(words for _, (_, words) in rows), tuple(i for i, _ in rows)


def _kept_predictions(protocol: Protocol, predictions: Sequence[str]) -> tuple[list[Words], list[bool], list[int]]:
    """(each kept prediction's words, whether it is no repeat, its index as read): invalid ones and repeats dropped."""
    kept: list[Words] = []
    first, at = [], []
    seen: set[object] = set()
    for i, phrase in enumerate(phrases.read_list(protocol.split, protocol.empty_list, predictions)):
        unstemmed, words = read_phrase(protocol, phrase)
        key = phrases.repeat_key(protocol.dedup_key, unstemmed, words)
        repeated = key in seen
        if protocol.invalid == "meng":  # OpenNMT-kpg marks repeats among every prediction, invalid ones included
            seen.add(key)
        if not phrases.is_valid(protocol.invalid, phrase, words) or repeated and protocol.prediction_dedup == "drop":
            continue
        first.append(not repeated)
        seen.add(key)
        kept.append(words)
        at.append(i)
    return kept, first, at


def scored_sources(
    protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]
) -> tuple[list[int], list[int], list[int], list[bool]]:
    """`prepare_document`'s run, read by `kweval.keyphrase.fates`: per entry of |G| and of `matched` the index of
    its phrase as given (-1: an empty list's one empty phrase); per entry of `matched` the |G| entry it takes (-1:
    none, so `matched` is `taken >= 0`) and whether it is no repeat (a repeat pke keeps takes none)."""
    gold_at, pred_at = (phrases.list_sources(protocol.split, protocol.empty_list, x) for x in (gold, predictions))
    gold_words, gold_rows = _gold_words(protocol, tuple(gold))
    kept, first, pred_rows = _kept_predictions(protocol, predictions)
    taken = assign(protocol.matching, kept, first, gold_words)
    return [gold_at[i] for i in gold_rows], [pred_at[i] for i in pred_rows], taken, first


def prepare_document(
    protocol: Protocol, gold: Sequence[str], predictions: Sequence[str], text: str | None
) -> DocumentLists:
    """Read, filter and de-duplicate one document's lists; assign matches; split them by presence."""
    gold_words = _gold_words(protocol, tuple(gold))[0]
    kept, first, _ = _kept_predictions(protocol, predictions)
    taken = assign(protocol.matching, kept, first, gold_words)
    matched = [j >= 0 for j in taken]
    blank = text is None or protocol.averaged == "with_gold" and not text.strip()
    if blank or protocol.present_rule == "none":
        return DocumentLists(matched, len(gold_words), None, 0, None, 0)
    assert text is not None
    gold_present = [occurs(protocol, g, text) for g in gold_words]
    n_present = sum(gold_present)
    if protocol.present_form == "credit":
        present = [j >= 0 and gold_present[j] for j in taken]
        absent = [j >= 0 and not gold_present[j] for j in taken]
    else:
        pred_present = [occurs(protocol, w, text) for w in kept]
        present, absent = (
            _matched_within(protocol, kept, first, pred_present, gold_words, gold_present, side)
            for side in (True, False)
        )
    return DocumentLists(matched, len(gold_words), present, n_present, absent, len(gold_words) - n_present)


def _matched_within(protocol, kept, first, pred_present, gold_words, gold_present, side: bool) -> list[bool]:
    """The `filter` form: the predictions on one side of the split (present: `side` True) assigned to the gold on
    the same side, as lists of their own."""
    rows = [i for i, p in enumerate(pred_present) if p == side]
    gold = [g for g, p in zip(gold_words, gold_present) if p == side]
    return [j >= 0 for j in assign(protocol.matching, [kept[i] for i in rows], [first[i] for i in rows], gold)]


def prf_at(protocol: Protocol, matched: Sequence[bool], n_gold: int, cutoff: int | str) -> tuple[float, float, float]:
    """Precision, recall and F1 of one ranked match list at a cut-off (an int, "M" = all, "O" = |G|): the arithmetic
    is `kweval.metrics.cutoff`'s (the metric families' definitions); the `cutoff` convention decides P's denominator."""
    n = len(matched)
    k = n if cutoff == "M" else n_gold if cutoff == "O" else int(cutoff)
    hits = float(sum(matched[: max(k, 0)])) if n else 0.0
    flexible = protocol.cutoff == "flexible" or protocol.cutoff == "hard_oracle_flexible" and cutoff == "O"
    return cutoff_metrics.precision_recall_f1(hits, cutoff_metrics.precision_denominator(k, n, flexible), n_gold)


def scored_documents(protocol: Protocol, gold: Mapping[str, Sequence[str]]) -> list[str]:
    """The documents the protocol averages (`averaged`): every one, or those with gold phrases."""
    return [d for d in gold if gold[d]] if protocol.averaged == "with_gold" else list(gold)


def score_documents(
    protocol: Protocol,
    gold: Mapping[str, Sequence[str]],
    predictions: Mapping[str, Sequence[str]],
    texts: Mapping[str, str] | None = None,
    cutoffs: Sequence[int | str] = CUTOFFS,
) -> dict[str, list]:
    """Per-document precision/recall/F1 at each cut-off (and present/absent when texts are given).

    Every document of `gold` the protocol averages is scored; one missing
    from `predictions` has an empty list.  Returns columns (lists) of equal
    length, "doc" first.  Plain Python, no numpy: the `--protocol` command's
    whole process stays small.
    """
    docs = scored_documents(protocol, gold)
    columns: dict[str, list[float]] = {}
    present_cols = [f"{m}@{c}_present" for c in cutoffs for m in ("p", "r", "f1")]
    absent_cols = [f"r@{c}_absent" for c in ABSENT_CUTOFFS]
    for doc_id in docs:
        lists = prepare_document(
            protocol, gold[doc_id], predictions.get(doc_id, ()), None if texts is None else texts.get(doc_id)
        )
        row: dict[str, float] = {"n_gold": lists.n_gold, "n_predictions": len(lists.matched)}
        for c in cutoffs:
            row[f"p@{c}"], row[f"r@{c}"], row[f"f1@{c}"] = prf_at(protocol, lists.matched, lists.n_gold, c)
        if lists.present_matched is not None and lists.absent_matched is not None:
            for c in cutoffs:
                p, r, f = prf_at(protocol, lists.present_matched, lists.n_present_gold, c)
                row[f"p@{c}_present"], row[f"r@{c}_present"], row[f"f1@{c}_present"] = p, r, f
            for c in ABSENT_CUTOFFS:
                row[f"r@{c}_absent"] = prf_at(protocol, lists.absent_matched, lists.n_absent_gold, c)[1]
            row["n_gt_present"], row["n_gt_absent"] = lists.n_present_gold, lists.n_absent_gold
            if protocol.averaged == "with_gold":
                _undefined_splits(row)
        else:
            row.update({name: float("nan") for name in present_cols + absent_cols + ["n_gt_present", "n_gt_absent"]})
        for name, value in row.items():
            columns.setdefault(name, []).append(value)
    save_stems()
    out: dict[str, list] = {"doc": docs}
    out.update({name: [float(v) for v in values] for name, values in columns.items()})
    return out


def split_undefined(name: str) -> str | None:
    """The count column whose 0 leaves the present/absent metric `name` without a denominator (its recall and F1:
    no such gold), None for any other column."""
    for suffix, prefixes, count in SPLIT_COUNTS:
        if name.endswith(suffix) and name.startswith(prefixes):
            return count
    return None


def _undefined_splits(row: dict[str, float]) -> None:
    """kweval's rule (`averaged` with_gold, docs/metrics.md §9): a document without present (absent) gold has no
    present (absent) recall or F1: NaN, not 0.  The tools' presets score 0 there, as the tools do."""
    for name in list(row):
        count = split_undefined(name)
        if count is not None and row[count] == 0:
            row[name] = float("nan")


def _mean(values: Sequence[float], skip_undefined: bool) -> float:
    """The mean of `values` (NaN when one is; `skip_undefined`: of the defined ones, NaN when none is)."""
    if skip_undefined:
        values = [v for v in values if not math.isnan(v)]
        if not values:
            return float("nan")
    return math.fsum(values) / len(values) if len(values) else 0.0


def f1_of_means(p: float, r: float) -> float:
    """The F1 of a macro P and a macro R (KPEval's macro F1); undefined when either is."""
    return math.nan if math.isnan(p) or math.isnan(r) else cutoff_metrics.harmonic_mean(p, r)


def summarize(protocol: Protocol, per_document: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Macro scores as the protocol forms them: F1 as a mean of F1s or as F1 of mean P and R; a metric a document
    leaves undefined (no text; under kweval's `with_gold` also a present or absent recall or F1 without such gold)
    is averaged over the others under `averaged=with_gold`, else undefined."""
    skip = protocol.averaged == "with_gold"
    means = {name: _mean(values, skip) for name, values in per_document.items() if name not in ("doc", *COUNT_COLUMNS)}
    if protocol.macro == "f1_of_means":
        for name in [n for n in means if n.startswith("f1@")]:
            means[name] = f1_of_means(means["p" + name[2:]], means["r" + name[2:]])
    means["n_documents"] = float(len(per_document["doc"]))
    return means


def present_in(protocol: Protocol, phrases: Sequence[str], text: str) -> list[bool]:
    """Whether each phrase occurs in `text` under the protocol's present rule (grounding, docs/metrics.md §12); a
    preset without one (pke) uses kweval's."""
    rule = PROTOCOLS["kweval"] if protocol.present_rule == "none" else protocol
    return [occurs(rule, phrase_words(rule, phrase), text) for phrase in phrases]
