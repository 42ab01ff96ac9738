"""`kweval gap`: a metric under two protocols, the gap between them and each differing convention's share of it.

The shares are exact Shapley values (`kweval.lattice.shapley`) over the conventions the two protocols set
differently, every subset scored by the lattice (`kweval.lattice.engine.Lattice`): they sum to the gap,
do not depend on any order, change sign when the protocols are swapped, and a convention that changes
nothing on this data has 0.  The documents that move most are those whose own value changes most
between the two protocols, each with the convention that moves it most (its own Shapley values).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kweval.keyphrase.conventions import BY_NAME, NAMES, moves
from kweval.lattice.engine import Lattice, Metric, parse_metric
from kweval.lattice.shapley import shapley, shapley_rows, subset_values
from kweval.stats.numbers import decimals_for, format_number

TOP_DOCUMENTS = 10  # the documents that move most, listed by default


@dataclass(frozen=True)
class Factor:
    """One convention the two protocols set differently, and its share of the gap."""

    factor: str
    from_setting: str
    to_setting: str
    contribution: float

    def as_dict(self) -> dict[str, object]:
        return {
            "factor": self.factor,
            "from": self.from_setting,
            "to": self.to_setting,
            "contribution": self.contribution,
        }


@dataclass(frozen=True)
class MovingDocument:
    """A document whose own value changes between the protocols, and the convention that moves it most."""

    id: str
    from_value: float
    to_value: float
    convention: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "from": self.from_value,
            "to": self.to_value,
            "change": self.to_value - self.from_value,
            "convention": self.convention,
        }


@dataclass(frozen=True)
class Gap:
    """The answer of `kweval gap`: the metric under both protocols, the gap and its decomposition."""

    model: str
    metric: str
    from_protocol: str
    to_protocol: str
    from_value: float
    to_value: float
    factors: list[Factor]
    documents: list[MovingDocument]
    n_documents: int
    sentence: str = field(default="")

    @property
    def gap(self) -> float:
        return self.to_value - self.from_value

    def as_dict(self) -> dict[str, object]:
        """The JSON form: model, metric, from and to ({protocol, value}), gap, factors, documents, sentence."""
        return {
            "model": self.model,
            "metric": self.metric,
            "from": {"protocol": self.from_protocol, "value": self.from_value},
            "to": {"protocol": self.to_protocol, "value": self.to_value},
            "gap": self.gap,
            "factors": [f.as_dict() for f in self.factors],
            "documents": [d.as_dict() for d in self.documents],
            "n_documents": self.n_documents,
            "sentence": self.sentence,
        }


def mixed(start: Mapping[str, str], end: Mapping[str, str], moved: Sequence[str]) -> dict[str, str]:
    """`start`'s settings with the conventions `moved` set as in `end`."""
    return {name: end[name] if name in moved else start[name] for name in NAMES}


def protocol_gap(
    lattice: Lattice,
    metric: str,
    start: Mapping[str, str],
    end: Mapping[str, str],
    names: tuple[str, str],
    model: str,
    top: int = TOP_DOCUMENTS,
) -> Gap:
    """The gap of `metric` from the protocol `start` to `end` (settings; `names` say them) and its Shapley
    decomposition over the conventions they set differently."""
    m = parse_metric(metric)
    differing = [n for n in NAMES if start[n] != end[n]]
    players = [n for n in differing if moves(n, m.name)]  # the others cannot move this metric: 0 by definition
    values = subset_values(len(players), lambda moved: lattice.value(mixed(start, end, [players[i] for i in moved]), m))
    shares = dict(zip(players, shapley(values, len(players))))
    factors = [Factor(n, start[n], end[n], shares.get(n, 0.0)) for n in differing]
    documents = moving_documents(lattice, m, start, end, players, top)
    gap = Gap(model, m.name, names[0], names[1], values[0], values[-1], factors, documents, len(lattice.docs))
    return Gap(**{**gap.__dict__, "sentence": gap_sentence(gap)})


def moving_documents(
    lattice: Lattice, m: Metric, start: Mapping[str, str], end: Mapping[str, str], players: Sequence[str], top: int
) -> list[MovingDocument]:
    """The `top` documents whose value changes most from `start` to `end` (ties: the collection's order), each with
    the convention of largest per-document Shapley value."""
    before, after = lattice.document_values(start, m), lattice.document_values(end, m)
    change = np.abs(after - before)
    finite = np.flatnonzero(np.isfinite(change) & (change > 0))
    chosen = finite[np.argsort(-change[finite], kind="stable")][:top]
    if not len(chosen):
        return []
    rows = [lattice.document_values(mixed(start, end, moved), m)[chosen] for moved in _subsets(players)]
    shares = shapley_rows(rows, len(players)) if players else np.zeros((0, len(chosen)))
    out = []
    for j, d in enumerate(chosen.tolist()):
        column = np.abs(shares[:, j]) if len(players) else np.zeros(0)
        name = players[int(np.argmax(column))] if len(column) and column.max() > 0 else None
        out.append(MovingDocument(lattice.docs[d], float(before[d]), float(after[d]), name))
    return out


def _subsets(players: Sequence[str]) -> list[list[str]]:
    return [[p for i, p in enumerate(players) if mask >> i & 1] for mask in range(1 << len(players))]


def metric_label(metric: str) -> str:
    """A metric column as prose: f1@5 -> F1@5, r@50_absent -> R@50 absent."""
    measure, _, rest = metric.partition("@")
    cutoff, _, part = rest.partition("_")
    return f"{measure.upper()}@{cutoff}" + (f" {part}" if part else "")


def signed(x: float) -> str:
    """A contribution with a sign and 4 decimals, more where a non-zero one would read 0.0000; exactly 0 is "0"."""
    return "0" if x == 0 else f"{x:+.{decimals_for([x], minimum=4)}f}"


def gap_sentence(gap: Gap) -> str:
    """One sentence: which protocol gives more and by how much, then the conventions' shares, largest first."""
    metric, start, end = metric_label(gap.metric), gap.from_protocol, gap.to_protocol
    before, after = format_number(gap.from_value, 4), format_number(gap.to_value, 4)
    if math.isnan(gap.gap):
        return f"{metric} is {before} under {start} and {after} under {end}."
    if gap.gap == 0:
        lead = f"{end}'s {metric} equals {start}'s ({after})"
    else:
        side = "higher" if gap.gap > 0 else "lower"
        lead = f"{end}'s {metric} ({after}) is {signed(abs(gap.gap))[1:]} {side} than {start}'s ({before})"
    moving = sorted((f for f in gap.factors if f.contribution != 0), key=lambda f: -abs(f.contribution))
    idle = len(gap.factors) - len(moving)
    parts = [f"{signed(f.contribution)} from {BY_NAME[f.factor].label}" for f in moving]
    tail = (
        f"; {idle} other differing convention{'s' if idle != 1 else ''} change{'' if idle != 1 else 's'} nothing here"
    )
    return lead + (": " + ", ".join(parts) if parts else "") + (tail if idle else "") + "."
