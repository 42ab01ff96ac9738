"""What a keyphrase preset decides about each prediction and each gold phrase of a document, read off its own scorer.

Under a preset (pke, kpeval, meng) the explorer's match marks and the Failures
page's categories are the decisions behind `kweval evaluate --protocol P
--per-review`'s numbers, so they come from the same function that makes them,
`kweval.keyphrase.protocols.prepare_document`, never from a second reading of
the preset's rules:

- a prediction's fate is what the scorer makes of the list up to it (a
  preset's filter and de-duplication look only backwards): the entries it
  adds to the scored list, kept at that index (the cut-off counts them) and
  matched or not; adding none, it was dropped, as invalid when the scorer
  drops it on its own, else as a repeat.  pke keeps a repeat in |P| but
  cannot match it again: a kept prediction that matches on its own and not
  in its list is that repeat;
- a gold phrase counts in |G| when adding it to the list grows the scorer's
  |G| (de-duplication drops the others); a kept matched prediction finds the
  first gold phrase still unfound that it matches on its own; a gold phrase
  is present when the scorer counts it present in the document alone.

The categories are docs/metrics.md §10's names (`kweval.metrics.categories`)
with the preset's meaning: `hit` / `hit_beyond_k` by the kept index, `found`
/ `found_beyond_k` by the finder's, `missed` where the preset has no present
rule (pke).  `tests/test_fates.py` checks them against the scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.keyphrase.dataset_protocol import collection_lists, model_lists
from kweval.keyphrase.protocols import PROTOCOLS, Protocol, prepare_document, save_stems
from kweval.metrics.categories import GT, PREDICTION

# the table `preset_failure_table` returns: `kweval.explain.failures.COLUMNS`, then what the explorer shows
FATE_COLUMNS = ["movie", "review_id", "model", "side", "position", "keyword", "category", "detail"]
EXTRA_FATE_COLUMNS = ["other", "rank", "gt_rank", "present"]


@dataclass(frozen=True)
class Fate:
    """One prediction's or gold phrase's fate under a preset.

    `rank`: its 0-based place in the list as given (predictions in rank order, gold in file order); `position`:
    a prediction's index in the preset's scored list (-1 when dropped), a gold phrase's rank again;
    `category`: docs/metrics.md §10's name; `gt_rank`: the rank of the gold phrase a prediction matched, or of
    the prediction that found a gold phrase (-1 for none); `other`: that phrase; `present`: the preset's present
    rule (None without one, or without a text)."""

    rank: int
    position: int
    keyword: str
    category: str
    detail: str = ""
    gt_rank: int = -1
    other: str = ""
    present: bool | None = None


@dataclass(frozen=True)
class GoldList:
    """A document's gold phrases as a preset counts them: the ranks in |G| and whether each is present."""

    phrases: tuple[str, ...]
    counted: tuple[int, ...]  # ranks of the phrases in |G| (the others de-duplicated or dropped by the scorer)
    present: tuple[bool | None, ...]  # per counted phrase; None: the preset has no present rule, or no text
    text: bool  # whether the document has a text


def _kept(protocol: Protocol, gold: Sequence[str], phrases: Sequence[str]) -> list[bool]:
    """The scored list the scorer makes of `phrases` against `gold`: one entry per kept phrase, matched or not."""
    return prepare_document(protocol, gold, phrases, None).matched


def gold_list(protocol: Protocol, gold: Sequence[str], text: str | None) -> GoldList:
    """Which gold phrases count in the scorer's |G| (adding one grows it) and which of them are present (the scorer
    on that phrase alone): the same for every model of the document."""
    counted, before = [], 0
    for j in range(len(gold)):
        n = prepare_document(protocol, gold[: j + 1], [], None).n_gold
        if n > before:
            counted.append(j)
        before = n
    no_rule = protocol.present_rule.startswith("none") or text is None
    present = tuple(
        None if no_rule else prepare_document(protocol, [gold[j]], [], text).n_present_gold > 0 for j in counted
    )
    return GoldList(tuple(gold), tuple(counted), present, text is not None)


def prediction_fates(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str], k: int) -> list[Fate]:
    """Each prediction's fate in rank order (see the module's docstring): the scorer run on each prefix."""
    out: list[Fate] = []
    before = 0  # the length of the scored list of the predictions so far (an empty prefix adds nothing)
    for rank, phrase in enumerate(predictions):
        scored = _kept(protocol, gold, predictions[: rank + 1])
        added, position = scored[before:], before
        before = len(scored)
        if not added:
            alone = _kept(protocol, gold, [phrase])
            category = "duplicate" if alone else "invalid"
            detail = f"a repeat: {protocol.name} drops it" if alone else f"{protocol.name}'s filter drops it"
            out.append(Fate(rank, -1, phrase, category, detail))
        elif any(added):
            first = position + added.index(True)
            out.append(Fate(rank, position, phrase, "hit" if first < k else "hit_beyond_k"))
        elif any(_kept(protocol, gold, [phrase])):  # pke: a repeat stays in |P| but matches once
            detail = f"repeats an earlier match: {protocol.name} counts it in |P|, not as a match again"
            out.append(Fate(rank, position, phrase, "duplicate", detail))
        else:
            out.append(Fate(rank, position, phrase, "off_reference", f"no gold phrase matches under {protocol.name}"))
    return out


def document_fates(
    protocol: Protocol, gold: GoldList, predictions: Sequence[str], k: int
) -> tuple[list[Fate], list[Fate]]:
    """(each prediction's fate, each counted gold phrase's, in file order) of one document and model: each kept
    match finds the first counted gold phrase still unfound that it matches alone."""
    phrases = gold.phrases
    preds = prediction_fates(protocol, phrases, predictions, k)
    finder: dict[int, Fate] = {}
    for i, fate in enumerate(preds):
        if fate.category not in ("hit", "hit_beyond_k"):
            continue
        j = next(
            (j for j in gold.counted if j not in finder and any(_kept(protocol, [phrases[j]], [fate.keyword]))), -1
        )
        if j >= 0:
            finder[j] = fate
        preds[i] = replace(
            fate, gt_rank=j, other=phrases[j] if j >= 0 else "", detail=_hit_detail(protocol, j, phrases)
        )
    golds = []
    for j, present in zip(gold.counted, gold.present):
        found = finder.get(j)
        if found is not None:
            category = "found" if found.position < k else "found_beyond_k"
            detail = f"found by #{found.position} ‘{found.keyword}’"
            golds.append(Fate(j, j, phrases[j], category, detail, found.rank, found.keyword, present))
            continue
        golds.append(
            Fate(j, j, phrases[j], _missed(protocol, gold, present), _repeat(protocol, gold, j), -1, "", present)
        )
    return preds, golds


def _hit_detail(protocol: Protocol, j: int, phrases: Sequence[str]) -> str:
    return f"matches gold ‘{phrases[j]}’ under {protocol.name}" if j >= 0 else f"a match under {protocol.name}"


def _missed(protocol: Protocol, gold: GoldList, present: bool | None) -> str:
    """A missed gold phrase's category: by the preset's present rule; `missed` where it has none (pke)."""
    if protocol.present_rule.startswith("none"):
        return "missed"
    if not gold.text:
        return "missed_no_text"
    return "missed_present" if present else "missed_absent"


def _repeat(protocol: Protocol, gold: GoldList, j: int) -> str:
    """A missed gold phrase's detail: a repeat of an earlier counted one (pke and meng count both) is never found."""
    phrases = gold.phrases
    if j == 0 or not any(_kept(protocol, phrases[:j], [phrases[j]])):
        return ""
    earlier = next((i for i in gold.counted if i < j and any(_kept(protocol, [phrases[i]], [phrases[j]]))), None)
    if earlier is None:  # it matches a phrase de-duplicated away
        return ""
    return f"repeats gold ‘{phrases[earlier]}’: {protocol.name} counts both in |G|, a prediction matches one"


def preset_failure_table(dataset: Dataset, protocol: str, k: int, models: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per prediction and per counted gold phrase of every collection × document × model under the preset
    `protocol` (`FATE_COLUMNS` then `EXTRA_FATE_COLUMNS`), in the layout of `kweval.explain.failures.failure_table`:
    the Failures page and the explorer read it as they read kweval's.  Documents as `kweval evaluate --protocol`
    scores them (`kweval.keyphrase.dataset_protocol`): each with its gold, a document a model left out with no
    prediction."""
    preset = PROTOCOLS[protocol]
    rows: list[tuple] = []
    for movie in dataset.movie_ids:
        gold, texts = collection_lists(dataset, movie)
        lists = {doc: gold_list(preset, phrases, texts.get(doc)) for doc, phrases in gold.items()}
        for model in models if models is not None else dataset.model_names:
            predicted = model_lists(dataset, movie, model)
            for doc, golds in lists.items():
                preds, found = document_fates(preset, golds, predicted.get(doc, []), k)
                rows += [_row(movie, doc, model, PREDICTION, f) for f in preds]
                rows += [_row(movie, doc, model, GT, f) for f in found]
    save_stems()
    return pd.DataFrame(rows, columns=[*FATE_COLUMNS, *EXTRA_FATE_COLUMNS])


def _row(movie: str, doc: str, model: str, side: str, fate: Fate) -> tuple:
    return (
        movie,
        doc,
        model,
        side,
        fate.position,
        fate.keyword,
        fate.category,
        fate.detail,
        fate.other,
        fate.rank,
        fate.gt_rank,
        fate.present,
    )


def matched_counts(table: pd.DataFrame) -> Mapping[tuple[str, str, str], int]:
    """{(movie, document, model): its predictions the preset counts as matches} of a `preset_failure_table`."""
    hits = table[(table["side"] == PREDICTION) & table["category"].isin(["hit", "hit_beyond_k"])]
    return hits.groupby(["movie", "review_id", "model"]).size().to_dict()
