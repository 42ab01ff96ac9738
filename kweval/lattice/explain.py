"""The one entry the CLI (`kweval gap`) and the dashboard (the Protocols page) call: a collection's gap between two
protocols, or the protocols behind a reported number, checked and ready to show.

A `Collection` holds plain lists (gold, texts, each model's predictions by document), read from files
(`collection_of_documents`) or from a loaded per-document `Dataset` (`collection_of_dataset`).  Faults
a user can make (an unknown model, protocol, convention or metric; a metric one of the protocols does not
report) are `GapError`s whose message is one line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kweval.keyphrase.conventions import KWEVAL_MATCH, PRESETS, parse_spec, preset_settings, presets_equal_to, spec_of
from kweval.lattice.engine import Lattice, parse_metric
from kweval.lattice.gap import TOP_DOCUMENTS, protocol_gap
from kweval.lattice.search import parse_reported, reported_search

KEY_METRICS: tuple[str, ...] = ("f1@5", "f1@10", "f1@M", "f1@O")
KEY_METRICS += tuple(f"{m}_present" for m in KEY_METRICS) + ("r@50_absent",)
NEEDS_PER_DOCUMENT = (
    "the protocol explainer needs per-document ground truth (each document's own keyphrases: a docsutf8/ + keys/ "
    "folder, a Meng-layout .json/.jsonl file, or a tidy folder whose ground truth has review_id); this data has one "
    "list per movie"
)


class GapError(ValueError):
    """A request the explainer cannot answer (its message is one line)."""


@dataclass
class Collection:
    """One per-document collection and the models' predictions on it, as plain lists."""

    name: str
    gold: dict[str, list[str]]
    texts: dict[str, str]
    predictions: dict[str, dict[str, list[str]]]  # model -> document -> phrases in rank order
    _lattices: dict[str, Lattice] = field(default_factory=dict, repr=False)

    def lattice(self, model: str) -> Lattice:
        """The lattice of one model (GapError for a model the data does not have)."""
        if model not in self.predictions:
            raise GapError(f"unknown model {model!r} (available: {', '.join(self.predictions) or 'none'})")
        if model not in self._lattices:
            self._lattices[model] = Lattice(self.gold, self.predictions[model], self.texts)
        return self._lattices[model]


def collection_of_documents(documents, predictions: Mapping[str, Mapping[str, Sequence[str]]]) -> Collection:
    """A `Collection` from `kweval.data.keyphrase.Documents` and each model's prediction lists."""
    lists = {m: {d: list(p) for d, p in preds.items()} for m, preds in predictions.items()}
    return Collection(str(documents.name), dict(documents.gold), dict(documents.texts), lists)


def collection_of_dataset(dataset, movie: str | None = None) -> Collection:
    """A `Collection` of one collection (movie) of a per-document `Dataset` (the first without `movie`), read as
    `kweval evaluate --protocol` reads its files (`kweval.keyphrase.dataset_protocol`)."""
    from kweval.keyphrase.dataset_protocol import collection_lists, model_lists

    if not dataset.per_document:
        raise GapError(NEEDS_PER_DOCUMENT)
    movie = movie if movie is not None else dataset.movie_ids[0]
    gold, texts = collection_lists(dataset, movie)
    predictions = {m: model_lists(dataset, movie, m) for m in dataset.model_names}
    return Collection(str(movie), gold, texts, predictions)


def protocol_settings(spec: str, match: str = KWEVAL_MATCH, what: str = "protocol") -> dict[str, str]:
    """The settings of a protocol spec (a preset, then CONVENTION=SETTING changes); GapError naming `what`."""
    try:
        return parse_spec(spec, match)
    except ValueError as exc:
        raise GapError(f"{what} {spec!r}: {exc}") from None


def protocol_name(settings: Mapping[str, str], match: str = KWEVAL_MATCH) -> str:
    """A protocol's name: its preset's, or its shortest spec (`kweval.keyphrase.conventions.spec_of`)."""
    equal = presets_equal_to(settings, match)
    return equal[0] if equal else spec_of(settings, match)


def _undefined_reason(settings: Mapping[str, str], metric: str) -> str:
    if settings["present_rule"] == "none" and ("_present" in metric or "_absent" in metric):
        return "it has no present/absent split"
    return "no document defines it (no text)"


def explain_gap(
    collection: Collection,
    model: str,
    metric: str,
    start: str,
    end: str,
    match: str = KWEVAL_MATCH,
    top: int = TOP_DOCUMENTS,
) -> dict[str, object]:
    """`kweval gap`'s answer (`kweval.lattice.gap.Gap.as_dict`, plus the collection's name) for `metric` from the
    protocol spec `start` to `end`."""
    try:
        m = parse_metric(metric)
    except ValueError as exc:
        raise GapError(f"--metric: {exc}") from None
    a, b = protocol_settings(start, match, "--from"), protocol_settings(end, match, "--to")
    lattice = collection.lattice(model)
    for spec, settings in ((start, a), (end, b)):
        if math.isnan(lattice.value(settings, m)):
            raise GapError(f"--metric {m.name}: not reported under {spec} ({_undefined_reason(settings, m.name)})")
    gap = protocol_gap(lattice, m.name, a, b, (protocol_name(a, match), protocol_name(b, match)), model, top)
    if any(math.isnan(f.contribution) for f in gap.factors):  # a mixture leaves the metric undefined
        raise GapError(f"--metric {m.name}: some mixtures of {start} and {end} leave it undefined (no text)")
    return {"collection": collection.name, "kweval_match": match, **gap.as_dict()}


def explain_reported(
    collection: Collection, model: str, reported: str, ks: Sequence[int] = (), match: str = KWEVAL_MATCH
) -> dict[str, object]:
    """`kweval gap --reported`'s answer (`kweval.lattice.search.reported_search`) for one model."""
    try:
        parsed = parse_reported(reported)
    except ValueError as exc:
        raise GapError(str(exc) if str(exc).startswith("--reported") else f"--reported: {exc}") from None
    result = reported_search(collection.lattice(model), parsed, ks, match)
    return {"collection": collection.name, "model": model, **result}


def preset_values(
    collection: Collection, model: str, metrics: Sequence[str] = KEY_METRICS, match: str = KWEVAL_MATCH
) -> dict[str, dict[str, float]]:
    """{preset: {metric: value}} of one model under every preset (NaN where a preset does not report it)."""
    lattice = collection.lattice(model)
    return {p: {m: lattice.value(preset_settings(p, match), parse_metric(m)) for m in metrics} for p in PRESETS}
