"""A per-document dataset's card: its size, its present and absent keyphrases under a preset's rule, a lint.

The field reports, per dataset, #documents, #keyphrases, how many documents
have a present (absent) keyphrase and how many keyphrases are present
(absent).  `describe` counts them under the present rule of one preset, as
that preset scores the gold:

- `kweval`: the gold normalized (docs/metrics.md §1), empty and repeated
  keyphrases left out; present when it occurs in the normalized text under
  the match mode (kweval.text.present, as `kweval evaluate --present`);
- `pke`: every keyphrase as read; pke defines no present / absent (None);
- `kpeval`: as the preset scores it (`;` split, stem duplicates removed,
  single-space words; a document without gold has KPEval's one empty, absent
  gold phrase);
- `meng`: the processing behind OpenNMT-kpg's published statistics
  (kweval.keyphrase.meng17: title + `.` + abstract, meng17 tokens, `<digit>`,
  brackets removed), every keyphrase counted; `plain_reading` gives the
  counts under the `meng` preset's own (`\\W` split) rule for comparison.

The lint looks at the gold as written (`Documents.raw_keys`).  Pure
functions on plain data: the CLI (`kweval describe`) and the dashboard call
`describe` (one collection) or `describe_dataset` (a loaded Dataset).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kweval.data.keyphrase import Documents
from kweval.keyphrase import meng17
from kweval.keyphrase.protocols import PROTOCOLS, prepare_document, save_stems

if TYPE_CHECKING:
    from kweval.data.dataset import Dataset

STATISTICS = (
    "documents",
    "keyphrases",
    "present_documents",
    "present_keyphrases",
    "absent_documents",
    "absent_keyphrases",
)
LONG_KEY_WORDS = 10  # a key with more words than this is flagged
MAX_EXAMPLES = 5
LINT_CHECKS: dict[str, str] = {
    "blank_lines": "blank key lines (or empty ';' pieces, blank list items)",
    "duplicate_keys": "keys repeated within their document (case-insensitive, stripped)",
    "keys_with_tab_or_cr": "keys holding a tab, a carriage return or a line feed",
    "documents_without_text": "documents whose text is empty or blank",
    "documents_without_keys": "documents without any gold keyphrase",
    "long_keys": f"keys longer than {LONG_KEY_WORDS} words",
}
PRESENT_RULES = {
    "kweval": "the normalized keyphrase occurs in the normalized text (match mode {match})",
    "pke": "none: pke has no present / absent split",
    "kpeval": "KPEval's: stems of the ';'-split, space-split keyphrase occur consecutively in the space-split, "
    "lower-cased text ('[sep]' removed)",
    "meng": "OpenNMT-kpg's published statistics: meng17 tokens of title + '.' + abstract, brackets removed from "
    "keyphrases, <digit> for numbers of 2+ digits, consecutive Porter stems, punctuation tokens included",
}


@dataclass(frozen=True)
class LintFinding:
    """How many times one lint check fired, with the first few (document id, key) pairs ("" for no key)."""

    count: int
    examples: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DatasetCard:
    """One collection's statistics under a preset and the lint of its gold (None: the preset has no such count)."""

    name: str
    protocol: str
    present_rule: str
    documents: int
    keyphrases: int
    present_documents: int | None
    present_keyphrases: int | None
    absent_documents: int | None
    absent_keyphrases: int | None
    lint: dict[str, LintFinding]
    plain_reading: dict[str, int | None] | None = None  # meng: the counts under the `meng` preset's \W-split rule
    notes: tuple[str, ...] = field(default=())

    def statistics(self) -> dict[str, int | None]:
        """The six numbers, by their names (STATISTICS)."""
        return {name: getattr(self, name) for name in STATISTICS}

    def as_dict(self) -> dict[str, object]:
        """Plain JSON-ready fields: name, protocol, present_rule, the six statistics, lint, plain_reading, notes."""
        return {
            "name": self.name,
            "protocol": self.protocol,
            "present_rule": self.present_rule,
            **self.statistics(),
            "lint": {
                check: {"count": f.count, "examples": [list(e) for e in f.examples]} for check, f in self.lint.items()
            },
            "plain_reading": self.plain_reading,
            "notes": list(self.notes),
        }


def describe(documents: Documents, protocol: str = "kweval", match: str | None = None) -> DatasetCard:
    """The card of one collection under `protocol`'s present rule (`match`: the kweval preset's match mode)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")
    gold = documents.gold
    texts = documents.texts
    notes: list[str] = []
    plain = None
    counts: list[tuple[int, int | None]]
    if protocol == "kweval":
        from kweval.evaluation.options import default_match

        match = match or default_match(True)  # per-document GT: the field's stem match, as `kweval evaluate`
        counts = _kweval_counts(texts, gold, match)
    elif protocol == "pke":
        counts = [(len(keys), None) for keys in gold.values()]
    elif protocol == "kpeval":
        counts = _preset_counts("kpeval", texts, gold)
        if any(not keys for keys in gold.values()):
            notes.append("a document without gold counts KPEval's one empty gold phrase (absent)")
    else:
        counts = _meng17_counts(texts, gold, documents.titles)
        plain = dict(zip(STATISTICS[2:], _totals(_preset_counts("meng", texts, gold))[2:]))
        if not documents.titles:
            notes.append("the texts have no title apart: each is read as an abstract after an empty title")
    save_stems()
    rule = PRESENT_RULES[protocol].format(match=match)
    return DatasetCard(
        documents.name, protocol, rule, *_totals(counts), lint=lint(documents), plain_reading=plain, notes=tuple(notes)
    )


def _totals(
    counts: Sequence[tuple[int, int | None]],
) -> tuple[int, int, int | None, int | None, int | None, int | None]:
    """The six statistics (STATISTICS' order) from (keyphrases, present keyphrases or None) per document."""
    documents, keyphrases = len(counts), sum(n for n, _ in counts)
    if any(p is None for _, p in counts):
        return documents, keyphrases, None, None, None, None
    present = [p or 0 for _, p in counts]
    absent = [n - p for (n, _), p in zip(counts, present)]
    return documents, keyphrases, sum(p > 0 for p in present), sum(present), sum(a > 0 for a in absent), sum(absent)


def _kweval_counts(texts: Mapping[str, str], gold: Mapping[str, list[str]], match: str) -> list[tuple[int, int | None]]:
    from kweval.text.normalize import normalize_many
    from kweval.text.present import present_flags

    counts: list[tuple[int, int | None]] = []
    for doc, keys in gold.items():
        norms = list(dict.fromkeys(n for n in normalize_many(keys) if n))
        counts.append((len(norms), sum(present_flags(norms, texts.get(doc), match))))
    return counts


def _preset_counts(name: str, texts: Mapping[str, str], gold: Mapping[str, list[str]]) -> list[tuple[int, int | None]]:
    """(gold phrases, present ones) per document as the preset scores them (`prepare_document`)."""
    counts: list[tuple[int, int | None]] = []
    for doc, keys in gold.items():
        lists = prepare_document(PROTOCOLS[name], keys, [], texts.get(doc, ""))
        counts.append((lists.n_gold, lists.n_present_gold))
    return counts


def title_and_abstract(text: str, title: str) -> tuple[str, str]:
    """A text split back into the title and abstract it was joined from (`title + "\\n" + abstract`)."""
    if title and text.startswith(title + "\n"):
        return title, text[len(title) + 1 :]
    if title and text == title:
        return title, ""
    return "", text


def _meng17_counts(
    texts: Mapping[str, str], gold: Mapping[str, list[str]], titles: Mapping[str, str]
) -> list[tuple[int, int | None]]:
    counts: list[tuple[int, int | None]] = []
    for doc, keys in gold.items():
        title, abstract = title_and_abstract(texts.get(doc, ""), titles.get(doc, ""))
        counts.append((len(keys), sum(meng17.present_flags(title, abstract, keys))))
    return counts


def lint(documents: Documents) -> dict[str, LintFinding]:
    """Every LINT_CHECKS check on the gold as written (`raw_keys`; the read keys where a reader kept none)."""
    found: dict[str, list[tuple[str, str]]] = {check: [] for check in LINT_CHECKS}
    for doc in documents.doc_ids:
        raw = documents.raw_keys.get(doc, documents.keys.get(doc, []))
        if not documents.texts[doc].strip():
            found["documents_without_text"].append((doc, ""))
        if not documents.keys.get(doc):
            found["documents_without_keys"].append((doc, ""))
        seen: set[str] = set()
        for key in raw:
            folded = key.strip().casefold()
            if not folded:
                found["blank_lines"].append((doc, key))
                continue
            if folded in seen:
                found["duplicate_keys"].append((doc, key))
            seen.add(folded)
            if any(c in key for c in "\t\r\n"):
                found["keys_with_tab_or_cr"].append((doc, key))
            if len(key.split()) > LONG_KEY_WORDS:
                found["long_keys"].append((doc, key))
    return {check: LintFinding(len(items), tuple(items[:MAX_EXAMPLES])) for check, items in found.items()}


def documents_of_dataset(dataset: Dataset) -> list[Documents]:
    """Each movie of a loaded Dataset with per-document gold as `Documents` (texts, gold in rank order, titles)."""
    gt = dataset.ground_truth
    own = gt[gt["review_id"].notna()] if "review_id" in gt.columns else gt.iloc[0:0]
    out = []
    for movie in dataset.movie_ids:
        reviews = dataset.reviews[dataset.reviews["movie"] == movie]
        texts = {str(r): t if isinstance(t, str) else "" for r, t in zip(reviews["review_id"], reviews["text"])}
        titles = {str(r): t for r, t in zip(reviews["review_id"], reviews["title"]) if isinstance(t, str)}
        keys: dict[str, list[str]] = {doc: [] for doc in texts}
        rows = own[own["movie"] == movie].sort_values("rank", kind="stable")
        for doc, keyword in zip(rows["review_id"], rows["keyword"]):
            if str(doc) in keys and isinstance(keyword, str):
                keys[str(doc)].append(keyword)
        out.append(Documents(str(movie), texts, keys, None, titles=titles))
    return out


def describe_dataset(dataset: Dataset, protocol: str = "kweval", match: str | None = None) -> list[DatasetCard]:
    """`describe` of every collection (movie) of a loaded Dataset; [] when it has no per-document gold."""
    if not dataset.per_document:
        return []
    return [describe(docs, protocol, match) for docs in documents_of_dataset(dataset)]
