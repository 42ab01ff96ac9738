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

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.keyphrase.dataset_protocol import collection_lists, model_lists
from kweval.keyphrase.phrases import read_list
from kweval.keyphrase.protocols import PROTOCOLS, Protocol, prepare_document, save_stems, scored_sources
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
    """A document's gold phrases as a preset counts them: the ranks in |G|, whether each is present, and what a missed
    one repeats (the same for every model)."""

    phrases: tuple[str, ...]
    counted: tuple[int, ...]  # ranks of the phrases in |G| (the others de-duplicated or dropped by the scorer)
    present: tuple[bool | None, ...]  # per counted phrase; None: the preset has no present rule, or no text
    text: bool  # whether the document has a text
    repeats: tuple[str, ...]  # per counted phrase, the detail it has when missed (`_repeat`; "" for none)


def _kept(protocol: Protocol, gold: Sequence[str], phrases: Sequence[str]) -> list[bool]:
    """The scored list the scorer makes of `phrases` against `gold`: one entry per kept phrase, matched or not."""
    return prepare_document(protocol, gold, phrases, None).matched


def _alone(protocol: Protocol, gold: Sequence[str], phrase: str) -> list[bool]:
    """`_kept` of one phrase."""
    return _kept(protocol, gold, [phrase])


# What each phrase of a list adds to the scorer's lists: a prediction its entries of the scored list (matched or
# not), a gold phrase its entries of |G| (their number); and the gold phrase each match finds.  The definitions are
# the scorer on each prefix (`_by_prefix`, ~n runs on growing lists: n² work) and on each (gold phrase, match) pair;
# the speed trick (`ONE_RUN`) reads the same off one run of the whole lists (`ScoredRun`: each entry's source, the
# |G| entry its match takes, whether it is a repeat), since the scorer only looks backwards and assigns each match
# the first gold phrase still free that it matches.  tests/test_fates.py checks the trick against the definitions.


@dataclass(frozen=True)
class ScoredRun:
    """One run of the scorer on a document's gold and predictions (`protocols.scored_sources`, the run
    `prepare_document` makes), read once per document × model for every question the fates ask of it."""

    gold: list[int]  # per entry of |G|, its gold phrase's index as given (-1: KPEval's one empty phrase of [])
    sources: list[int]  # per entry of the scored list, its prediction's index as given (-1: likewise)
    taken: list[int]  # per entry of the scored list, the |G| entry its match takes (-1: none)
    first: list[bool]  # per entry of the scored list, whether it is no repeat (pke keeps repeats, unmatched)
    pieces: list[int]  # per prediction as given, the phrases the scorer reads it as (a ';' under KPEval: several)


def scored_run(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> ScoredRun:
    """The scorer's one run on the whole lists, with what the fates read off it."""
    pieces = [len(read_list(protocol.split, protocol.empty_list, [p])) for p in predictions]
    return ScoredRun(*scored_sources(protocol, gold, predictions), pieces)


@dataclass(frozen=True)
class PredictionReading:
    """What the fates ask of a document × model's scorer: per prediction the entries it adds to the scored list
    (matched or not), the gold phrase (rank) its match takes (-1: none; None for the list: pair by pair), and
    whether the scorer matches it alone where that is known (None: `prediction_fates` runs the scorer on it)."""

    added: list[list[bool]]
    taken: list[int] | None
    matches_alone: list[bool | None]


def added_by_prefix(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> list[list[bool]]:
    """Per prediction, the entries it adds to the scored list: the scorer on the list up to it, less the list before
    it (the definition)."""
    out, before = [], 0  # the length of the scored list of the predictions so far (an empty prefix adds nothing)
    for rank in range(len(predictions)):
        scored = _kept(protocol, gold, predictions[: rank + 1])
        out.append(scored[before:])
        before = len(scored)
    return out


def added_of(run: ScoredRun) -> list[list[bool]]:
    """`added_by_prefix` read off one run of the scorer on the whole list, by each entry's source."""
    out: list[list[bool]] = [[] for _ in run.pieces]
    for taken, source in zip(run.taken, run.sources):
        if source >= 0:  # not KPEval's one empty phrase of an empty list (no prefix holds it)
            out[source].append(taken >= 0)
    return out


def added_in_one_run(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> list[list[bool]]:
    """`added_of` the scorer's one run."""
    return added_of(scored_run(protocol, gold, predictions))


def counted_by_prefix(protocol: Protocol, gold: Sequence[str]) -> list[int]:
    """Per gold phrase, how much it grows the scorer's |G|: on the list up to it, less the list before it (the
    definition)."""
    out, before = [], 0
    for j in range(len(gold)):
        n = prepare_document(protocol, gold[: j + 1], [], None).n_gold
        out.append(n - before)
        before = n
    return out


def counted_in_one_run(protocol: Protocol, gold: Sequence[str]) -> list[int]:
    """`counted_by_prefix` read off one run of the scorer on the whole list, by each entry's source."""
    sources = Counter(scored_sources(protocol, gold, [])[0])
    return [sources[j] for j in range(len(gold))]


def taken_of(run: ScoredRun) -> list[int] | None:
    """Per prediction, the rank of the gold phrase its match takes in one run of the scorer (-1: none): the one
    `document_fates` finds pair by pair, where each phrase is one entry; None where one is several (a ';' under
    KPEval: the scorer assigns the pieces, a fate the phrase)."""
    if len(set(run.gold)) < len(run.gold) or len(set(run.sources)) < len(run.sources):
        return None
    out = [-1] * len(run.pieces)
    for source, t in zip(run.sources, run.taken):
        if source >= 0:
            out[source] = run.gold[t] if t >= 0 else -1
    return out


def taken_in_one_run(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> list[int] | None:
    """`taken_of` the scorer's one run."""
    return taken_of(scored_run(protocol, gold, predictions))


def alone_in_runs(
    protocol: Protocol, gold: Sequence[str], predictions: Sequence[str], run: ScoredRun, added: list[list[bool]]
) -> list[bool | None]:
    """Per prediction the scorer keeps unmatched as one phrase (pke's repeat in |P|, an off-reference one), whether
    it matches alone; None for the others (`prediction_fates` asks the scorer).  Read off `run`, then off one run
    on those still unknown, and so on: in a run, an entry of a phrase read as one, no repeat, before any entry took a
    gold phrase, is what the phrase alone is (the same entry: kept, so valid; no repeat alone either) facing the
    same |G| all free, so it matches alone as it matches there.  Each run settles its first phrase at least; one
    that matches alone stops a run, so there are about as many runs as such phrases (few)."""
    out: list[bool | None] = [None] * len(predictions)
    asked = [i for i, a in enumerate(added) if a and not any(a) and run.pieces[i] == 1]
    wanted = set(asked)  # a hit the first run settles too is left None: its fate needs no alone run
    batch = list(range(len(predictions)))  # the first run is the whole list's
    while True:
        for taken, source, first in zip(run.taken, run.sources, run.first):
            if source >= 0 and first and run.pieces[source] == 1 and out[batch[source]] is None:
                out[batch[source]] = taken >= 0
            if taken >= 0:
                break  # from here on a gold phrase it could match alone may be taken
        batch = [i for i in asked if out[i] is None]
        if not batch:
            return [out[i] if i in wanted else None for i in range(len(predictions))]
        run = scored_run(protocol, gold, [predictions[i] for i in batch])


def in_one_run(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> PredictionReading:
    """The speed trick: added, taken and the alone matches off the scorer's one run on the whole lists (and runs on
    the predictions it leaves unmatched, `alone_in_runs`)."""
    run = scored_run(protocol, gold, predictions)
    added = added_of(run)
    return PredictionReading(added, taken_of(run), alone_in_runs(protocol, gold, predictions, run, added))


def by_prefix_and_pairs(protocol: Protocol, gold: Sequence[str], predictions: Sequence[str]) -> PredictionReading:
    """The definitions: the scorer on every prefix; `document_fates` asks it about each (counted gold phrase, match)
    pair and `prediction_fates` about each prediction alone."""
    return PredictionReading(added_by_prefix(protocol, gold, predictions), None, [None] * len(predictions))


@dataclass(frozen=True)
class Reading:
    """How the fates read the scorer: what each prediction adds and each match takes, what each gold phrase adds."""

    predictions: Callable[[Protocol, Sequence[str], Sequence[str]], PredictionReading]
    counted: Callable[[Protocol, Sequence[str]], list[int]]


ONE_RUN = Reading(in_one_run, counted_in_one_run)  # the speed trick
REFERENCE = Reading(by_prefix_and_pairs, counted_by_prefix)  # the definitions, for tests and bench/


def gold_list(protocol: Protocol, gold: Sequence[str], text: str | None, reading: Reading = ONE_RUN) -> GoldList:
    """Which gold phrases count in the scorer's |G| (adding one grows it) and which of them are present (the scorer
    on that phrase alone): the same for every model of the document."""
    counted = [j for j, n in enumerate(reading.counted(protocol, gold)) if n > 0]
    no_rule = protocol.present_rule.startswith("none") or text is None
    present = tuple(
        None if no_rule else prepare_document(protocol, [gold[j]], [], text).n_present_gold > 0 for j in counted
    )
    repeats = tuple(_repeat(protocol, gold, counted, j) for j in counted)  # once, not per model
    return GoldList(tuple(gold), tuple(counted), present, text is not None, repeats)


def prediction_fates(
    protocol: Protocol, gold: Sequence[str], predictions: Sequence[str], k: int, read: PredictionReading
) -> list[Fate]:
    """Each prediction's fate in rank order (see the module's docstring), from what it adds to the scored list."""
    out: list[Fate] = []
    position = 0  # its index in the scored list: the entries the predictions before it added
    for rank, (phrase, added, alone) in enumerate(zip(predictions, read.added, read.matches_alone)):
        if not added:
            kept = _alone(protocol, gold, phrase)
            category = "duplicate" if kept else "invalid"
            detail = f"a repeat: {protocol.name} drops it" if kept else f"{protocol.name}'s filter drops it"
            out.append(Fate(rank, -1, phrase, category, detail))
        elif any(added):
            first = position + added.index(True)
            out.append(Fate(rank, position, phrase, "hit" if first < k else "hit_beyond_k"))
        elif alone if alone is not None else any(_alone(protocol, gold, phrase)):  # pke: a repeat matches once
            detail = f"repeats an earlier match: {protocol.name} counts it in |P|, not as a match again"
            out.append(Fate(rank, position, phrase, "duplicate", detail))
        else:
            out.append(Fate(rank, position, phrase, "off_reference", f"no gold phrase matches under {protocol.name}"))
        position += len(added)
    return out


def document_fates(
    protocol: Protocol, gold: GoldList, predictions: Sequence[str], k: int, reading: Reading = ONE_RUN
) -> tuple[list[Fate], list[Fate]]:
    """(each prediction's fate, each counted gold phrase's, in file order) of one document and model: each kept
    match finds the first counted gold phrase still unfound that it matches alone."""
    phrases = gold.phrases
    read = reading.predictions(protocol, phrases, predictions)  # the speed trick: one scorer run
    preds = prediction_fates(protocol, phrases, predictions, k, read)
    taken = read.taken
    finder: dict[int, Fate] = {}
    for i, fate in enumerate(preds):
        if fate.category not in ("hit", "hit_beyond_k"):
            continue
        if taken is not None:
            j = taken[fate.rank]
        else:
            j = next(
                (j for j in gold.counted if j not in finder and any(_alone(protocol, [phrases[j]], fate.keyword))), -1
            )
        if j >= 0:
            finder[j] = fate
        preds[i] = replace(
            fate, gt_rank=j, other=phrases[j] if j >= 0 else "", detail=_hit_detail(protocol, j, phrases)
        )
    golds = []
    for j, present, repeat in zip(gold.counted, gold.present, gold.repeats):
        found = finder.get(j)
        if found is not None:
            category = "found" if found.position < k else "found_beyond_k"
            detail = f"found by #{found.position} ‘{found.keyword}’"
            golds.append(Fate(j, j, phrases[j], category, detail, found.rank, found.keyword, present))
            continue
        golds.append(Fate(j, j, phrases[j], _missed(protocol, gold, present), repeat, -1, "", present))
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


def _repeat(protocol: Protocol, phrases: Sequence[str], counted: Sequence[int], j: int) -> str:
    """A missed gold phrase's detail: a repeat of an earlier counted one (pke and meng count both) is never found."""
    if j == 0 or not any(_alone(protocol, phrases[:j], phrases[j])):
        return ""
    earlier = next((i for i in counted if i < j and any(_alone(protocol, [phrases[i]], phrases[j]))), None)
    if earlier is None:  # it matches a phrase de-duplicated away
        return ""
    return f"repeats gold ‘{phrases[earlier]}’: {protocol.name} counts both in |G|, a prediction matches one"


def preset_failure_table(
    dataset: Dataset,
    protocol: str,
    k: int,
    models: Sequence[str] | None = None,
    reading: Reading = ONE_RUN,
) -> pd.DataFrame:
    """One row per prediction and per counted gold phrase of every collection × document × model under the preset
    `protocol` (`FATE_COLUMNS` then `EXTRA_FATE_COLUMNS`), in the layout of `kweval.explain.failures.failure_table`:
    the Failures page and the explorer read it as they read kweval's.  Documents as `kweval evaluate --protocol`
    scores them (`kweval.keyphrase.dataset_protocol`): each with its gold, a document a model left out with no
    prediction.  `reading`: the speed trick, or `REFERENCE` (the definitions)."""
    preset = PROTOCOLS[protocol]
    rows: list[tuple] = []
    for movie in dataset.movie_ids:
        gold, texts = collection_lists(dataset, movie)
        lists = {doc: gold_list(preset, phrases, texts.get(doc), reading) for doc, phrases in gold.items()}
        for model in models if models is not None else dataset.model_names:
            predicted = model_lists(dataset, movie, model)
            for doc, golds in lists.items():
                preds, found = document_fates(preset, golds, predicted.get(doc, []), k, reading)
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
