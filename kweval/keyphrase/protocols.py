"""Evaluation protocols of the keyphrase field (pke, KPEval, Meng et al.) as presets.

Every tool of the field computes "F1@5" with its own conventions: how phrases are
tokenised and stemmed, whether duplicates are removed, whether P@k divides by k
or by the number of predictions, and how a macro F1 is formed.  A `Protocol`
names each of those choices; `score_documents` applies one to per-document
ground truth and ranked predictions, and `summarize` aggregates the way that
tool does.  The numbers equal the tools' own on the same inputs (tests/
test_protocols.py holds reference vectors obtained by running them); the
defects each tool has are reproduced on purpose and listed in `Protocol.defects`
and docs/protocols.md.

Precision, recall and F1 at a cut-off are `kweval.metrics.cutoff`'s scalar
definitions, the same the vectorised keyphrase family (`kweval.metrics.keyphrase`)
is tested against; only each tool's conventions are this module's own.  It
cannot call the vectorised families themselves: the `--protocol` command must
not load numpy (bench/bench_keyphrase.py measures its whole process, and
tests/test_protocols.py checks that numpy and pandas stay out), and its lists
are tokenised, stemmed and de-duplicated by each tool's rules, not by
kweval's cleaning and matching.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TypedDict

from kweval.data.keyphrase import split_lines
from kweval.metrics import cutoff as cutoff_metrics
from kweval.text.stemming import save_shared_stems, shared_stems

# Cut-offs every protocol reports: two ranks and the two list-relative ones.
CUTOFFS: tuple[int | str, ...] = (5, 10, "M", "O")
ABSENT_CUTOFFS: tuple[int | str, ...] = (50, "M")


@dataclass(frozen=True)
class Protocol:
    """Every convention that changes a keyphrase score, with the tool that uses it."""

    name: str
    tool: str
    tokenizer: str  # how a phrase / document becomes words: "kweval", "whitespace", "space", "nonword"
    stemming: str  # "porter" (NLTK's) or "none"
    prediction_dedup: str  # "stemmed" (later duplicates dropped), "numerator" (pke), "none"
    gt_dedup: bool  # duplicate gold phrases (after stemming) removed before |G| is counted
    cutoff: str  # "hard": P@k = matches / k;  "flexible": / min(k, |P|)
    macro_f1: str  # "mean_f1": mean of per-document F1;  "f1_of_means": F1 of macro P and macro R
    present_rule: str  # when a gold phrase counts as present in its document
    empty_predictions: str  # what a document without predictions scores
    invalid_predictions: str  # which predictions are dropped before scoring
    defects: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """Plain fields, for the protocol card."""
        out = asdict(self)
        out["defects"] = list(self.defects)
        return out


# The conventions that change the numbers, one row per preset (docs/protocols.md's table), in `Protocol`'s
# field order after `tool`.
_CONVENTIONS: dict[str, tuple[str, str, str, bool, str, str]] = {
    #          tokenizer      stemming  prediction_dedup gt_dedup cutoff       macro_f1
    "kweval": ("kweval", "none", "stemmed", True, "hard", "mean_f1"),
    "pke": ("whitespace", "porter", "numerator", False, "flexible", "mean_f1"),
    "kpeval": ("space", "porter", "stemmed", True, "hard", "f1_of_means"),
    "meng": ("nonword", "porter", "stemmed", False, "flexible", "mean_f1"),
}


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

# The `kweval` entry names kweval's conventions for the protocol card and `kweval describe`'s present rule; kweval's
# numbers are the pipeline's (docs/metrics.md), which `kweval evaluate --protocol kweval` runs and
# scripts/protocol_table.py reports: score_documents under it is no second definition of them (its F1@O is hard and
# its present F1 compares present predictions with present gold, where the pipeline's differ).
PROTOCOLS: dict[str, Protocol] = {
    name: Protocol(
        name,
        _DESCRIPTIONS[name]["tool"],
        *row,
        present_rule=_DESCRIPTIONS[name]["present_rule"],
        empty_predictions=_DESCRIPTIONS[name]["empty_predictions"],
        invalid_predictions=_DESCRIPTIONS[name]["invalid_predictions"],
        defects=_DESCRIPTIONS[name].get("defects", ()),
    )
    for name, row in _CONVENTIONS.items()
}


# Per process: a phrase's words, and a document's words with their index, under each tokenizer
# (documents and gold are the same for every model of a run).
_phrases: dict[tuple[str, str], tuple[str, ...]] = {}
_documents: dict[tuple[str, str], tuple[tuple[str, ...], dict[str, list[int]]]] = {}


def stem_words(words: Sequence[str]) -> tuple[str, ...]:
    """NLTK's Porter stems (lower-cased) of `words`, through the process's persistent stem cache
    (`kweval.text.stemming.shared_stems`, shared with stem matching): every preset's stemmer."""
    return shared_stems().stem_many(words)


def save_stems() -> None:
    """Keep the stems computed so far for the next run (no-op when nothing new was stemmed); what went wrong is
    kept for `stem_cache_notes`."""
    _notes.extend(save_shared_stems())


_notes: list[str] = []


def stem_cache_notes() -> list[str]:
    """What went wrong with the persistent stem cache since the last call (a write refused by a full disk), once."""
    notes = list(_notes)
    _notes.clear()
    return notes


_NON_WORD = re.compile(r"\W")


def phrase_words(protocol: Protocol, phrase: str) -> tuple[str, ...]:
    """The (stemmed) words of one phrase under the protocol's tokenizer (remembered for the process)."""
    key = (protocol.name, phrase)
    words = _phrases.get(key)
    if words is None:
        words = _phrases[key] = _phrase_words(protocol, phrase)
    return words


def _phrase_words(protocol: Protocol, phrase: str) -> tuple[str, ...]:
    if protocol.tokenizer == "kweval":
        from kweval.text.normalize import normalize

        words = normalize(phrase).split()
    elif protocol.tokenizer == "whitespace":
        words = phrase.split()
    elif protocol.tokenizer == "space":  # KPEval: lower-case, the BERT '##' joins, then single spaces
        cleaned = phrase.lower().strip().replace(" ##", "").replace("[ digit ]", "[digit]")
        words = [w.strip().lower() for w in cleaned.split(" ")]
    elif protocol.tokenizer == "nonword":
        words = [w.lower() for w in _NON_WORD.split(phrase) if w]
    else:
        raise ValueError(f"unknown tokenizer {protocol.tokenizer!r}")
    if protocol.stemming == "porter":
        return stem_words(words)
    return tuple(words)


KPEVAL_SEPARATOR = ";"  # KPEval's kp_sep: one line holds a document's phrases, joined by it
KPEVAL_TITLE_SEPARATOR = "[sep]"  # KPEval's title_sep, removed from the (lower-cased) document


def kpeval_phrases(phrases: Sequence[str]) -> list[str]:
    """A list as KPEval reads it: joined into its one-line format and split on ';' again.

    So a phrase holding ';' is several, and an empty list is one empty phrase
    (`[]` -> `[""]`), for predictions and gold alike (metric.py process_kp_string).
    """
    return KPEVAL_SEPARATOR.join(phrases).split(KPEVAL_SEPARATOR)


def kpeval_document_words(text: str) -> list[str]:
    """The unstemmed words of a document as KPEval splits it (metric.py process_single_doc).

    The physical lines (\\r, \\n only) joined by spaces, stripped and
    lower-cased; '[sep]' removed with each side stripped; then split on single
    spaces.  KPEval stops on two or more '[sep]'; here every one is removed
    (`document_problems` reports the document).
    """
    line = " ".join(split_lines(text)).strip().lower()
    return [w for part in line.split(KPEVAL_TITLE_SEPARATOR) for w in part.strip().split(" ")]


def document_words(protocol: Protocol, text: str) -> tuple[str, ...]:
    """The (stemmed) words of a document, as the protocol checks presence in it."""
    if protocol.tokenizer == "space":  # KPEval reads one line per document
        return stem_words([w.strip().lower() for w in kpeval_document_words(text)])
    return _phrase_words(protocol, text)


def document_problems(protocol: Protocol, texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """(document id, reason) for each document the protocol's tool could not read and kweval reads its own way."""
    if protocol.name != "kpeval":
        return []
    return [
        (doc, f"{n} '[sep]' title separators: KPEval stops on more than one (ValueError); kweval removes every one")
        for doc, text in texts.items()
        if (n := text.lower().count(KPEVAL_TITLE_SEPARATOR)) > 1
    ]


def _indexed_document(protocol: Protocol, text: str) -> tuple[tuple[str, ...], dict[str, list[int]]]:
    key = (protocol.name, text)
    found = _documents.get(key)
    if found is None:
        doc = document_words(protocol, text)
        found = _documents[key] = (doc, _word_index(doc))
    return found


def _dedup_key(protocol: Protocol, words: tuple[str, ...]) -> object:
    return "_".join(words) if protocol.name in ("kpeval", "meng") else words


MENG_UNK = "unk"  # OpenNMT-kpg's unk token under split_nopunc (kp_evaluate.py), compared with raw words


def _is_valid(protocol: Protocol, phrase: str, words: tuple[str, ...]) -> bool:
    """Whether a prediction is kept: kweval drops one empty after normalization, OpenNMT-kpg one with no \\W-split
    word or a raw word exactly 'unk' (onmt/keyphrase/utils.py validate_phrases: case-sensitive, not stemmed)."""
    if protocol.invalid_predictions.startswith("none"):
        return True
    if protocol.name == "meng":
        raw = [w for w in _NON_WORD.split(phrase) if w]
        return bool(raw) and MENG_UNK not in raw
    return bool(words)


def _occurs(protocol: Protocol, doc: tuple[str, ...], phrase: tuple[str, ...], index: Mapping[str, list[int]]) -> bool:
    """Whether `phrase` occurs as consecutive words of `doc` (index: positions of each word)."""
    if not phrase:  # OpenNMT-kpg's loop finds a phrase without words everywhere
        return protocol.name == "meng"
    if not " ".join(phrase).strip():
        return False
    n = len(phrase)
    return any(doc[start : start + n] == phrase for start in index.get(phrase[0], ()))


def _word_index(doc: tuple[str, ...]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for pos, word in enumerate(doc):
        index.setdefault(word, []).append(pos)
    return index


@dataclass(frozen=True)
class DocumentLists:
    """One document's scored lists under a protocol."""

    matched: list[bool]  # per kept prediction, in rank order: it counts as a match
    n_gold: int
    present_matched: list[bool] | None  # the same for present predictions vs present gold
    n_present_gold: int
    absent_matched: list[bool] | None
    n_absent_gold: int


def prepare_document(
    protocol: Protocol, gold: Sequence[str], predictions: Sequence[str], text: str | None
) -> DocumentLists:
    """Tokenise, stem, filter and de-duplicate one document's lists; mark matches and presence."""
    if protocol.name == "kpeval":
        gold = kpeval_phrases(gold)  # an empty gold list is one empty gold phrase, as KPEval reads it
    gold_words = [phrase_words(protocol, g) for g in gold]
    if protocol.tokenizer == "kweval":
        gold_words = [g for g in gold_words if g]
    if protocol.gt_dedup:
        seen: set[object] = set()
        unique = []
        for g in gold_words:
            key = _dedup_key(protocol, g)
            if key not in seen:
                seen.add(key)
                unique.append(g)
        gold_words = unique
    preds = kpeval_phrases(predictions) if protocol.name == "kpeval" else list(predictions)
    kept: list[tuple[str, ...]] = []
    first: list[bool] = []  # pke: a repeated prediction is kept in the list but cannot match again
    seen_pred: set[object] = set()
    # OpenNMT-kpg marks duplicates over every prediction, invalid ones included, then keeps valid * ~duplicate
    dedup_first = protocol.name == "meng"
    for phrase in preds:
        words = phrase_words(protocol, phrase)
        key = _dedup_key(protocol, words)
        repeated = key in seen_pred
        if dedup_first:
            seen_pred.add(key)
        if not _is_valid(protocol, phrase, words):
            continue
        if repeated and protocol.prediction_dedup == "stemmed":
            continue
        first.append(not repeated)
        seen_pred.add(key)
        kept.append(words)
    gold_set = {" ".join(g) for g in gold_words}
    matched = [f and " ".join(w) in gold_set for w, f in zip(kept, first)]
    if text is None or protocol.present_rule.startswith("none"):
        return DocumentLists(matched, len(gold_words), None, 0, None, 0)
    doc, index = _indexed_document(protocol, text)
    gold_present = [_occurs(protocol, doc, g, index) for g in gold_words]
    pred_present = [_occurs(protocol, doc, w, index) for w in kept]
    present_gold = {" ".join(g) for g, p in zip(gold_words, gold_present) if p}
    absent_gold = {" ".join(g) for g, p in zip(gold_words, gold_present) if not p}
    present_preds = [w for w, p in zip(kept, pred_present) if p]
    absent_preds = [w for w, p in zip(kept, pred_present) if not p]
    present_first = [f for f, p in zip(first, pred_present) if p]
    absent_first = [f for f, p in zip(first, pred_present) if not p]
    return DocumentLists(
        matched,
        len(gold_words),
        [f and " ".join(w) in present_gold for w, f in zip(present_preds, present_first)],
        sum(gold_present),
        [f and " ".join(w) in absent_gold for w, f in zip(absent_preds, absent_first)],
        len(gold_words) - sum(gold_present),
    )


def prf_at(protocol: Protocol, matched: Sequence[bool], n_gold: int, cutoff: int | str) -> tuple[float, float, float]:
    """Precision, recall and F1 of one ranked match list at a cut-off (an int, "M" = all, "O" = |G|).

    The arithmetic is `kweval.metrics.cutoff`'s (the definitions the metric
    families use); the protocol decides the cut-off's P denominator (hard or
    flexible) and OpenNMT-kpg's rule that a document without gold scores 0.
    """
    n = len(matched)
    k = n if cutoff == "M" else n_gold if cutoff == "O" else int(cutoff)
    hits = float(sum(matched[: max(k, 0)])) if n else 0.0
    if protocol.name == "meng" and n_gold == 0:
        return 0.0, 0.0, 0.0
    return cutoff_metrics.precision_recall_f1(
        hits, cutoff_metrics.precision_denominator(k, n, flexible=protocol.cutoff == "flexible"), n_gold
    )


def score_documents(
    protocol: Protocol,
    gold: Mapping[str, Sequence[str]],
    predictions: Mapping[str, Sequence[str]],
    texts: Mapping[str, str] | None = None,
    cutoffs: Sequence[int | str] = CUTOFFS,
) -> dict[str, list]:
    """Per-document precision/recall/F1 at each cut-off (and present/absent when texts are given).

    Every document of `gold` is scored; one missing from `predictions` has an
    empty list.  Returns columns (lists) of equal length, "doc" first.  Plain
    Python, no numpy: the `--protocol` command's whole process stays small.
    """
    docs = list(gold)
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
        else:
            row.update({name: float("nan") for name in present_cols + absent_cols})
        for name, value in row.items():
            columns.setdefault(name, []).append(value)
    save_stems()
    out: dict[str, list] = {"doc": docs}
    out.update({name: [float(v) for v in values] for name, values in columns.items()})
    return out


def summarize(protocol: Protocol, per_document: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Macro scores as the protocol's tool forms them: F1 as a mean of F1s or as F1 of mean P and R."""
    means = {
        name: math.fsum(values) / len(values) if len(values) else 0.0
        for name, values in per_document.items()
        if name not in ("doc", "n_gold", "n_predictions")
    }
    if protocol.macro_f1 == "f1_of_means":
        for name in [n for n in means if n.startswith("f1@")]:
            means[name] = cutoff_metrics.harmonic_mean(means["p" + name[2:]], means["r" + name[2:]])
    means["n_documents"] = float(len(per_document["doc"]))
    return means


def present_in(protocol: Protocol, phrases: Sequence[str], text: str) -> list[bool]:
    """Whether each phrase occurs in `text` under the protocol's present rule (grounding, docs/metrics.md §12); a
    preset without one (pke) uses kweval's."""
    rule = PROTOCOLS["kweval"] if protocol.present_rule.startswith("none") else protocol
    doc, index = _indexed_document(rule, text)
    return [_occurs(rule, doc, phrase_words(rule, phrase), index) for phrase in phrases]
