"""`kweval gap --reported METRIC=VALUE`: which protocols reproduce a published number.

Every combination of the settings the presets use (`search_space`; the kweval preset under each mode of its
matching family) is scored by the lattice, for the
metric asked and each extra cut-off `--k`; a combination matches when its value rounds to VALUE at the
decimals VALUE was given with (a VALUE above 1 is read as a percentage: 17.44 is 0.1744 to four
decimals).  Only the conventions that can move the metric on this data are listed: the others give
every combination the same value.  Matches come nearest first, each with the presets whose settings
these are; without a match, the nearest combinations are the answer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kweval.keyphrase.conventions import KWEVAL_MATCH, NAMES, PRESETS, moves, preset_settings
from kweval.lattice.engine import Lattice, Metric, parse_metric

CLOSEST = 5  # combinations listed when none matches


@dataclass(frozen=True)
class Reported:
    """A published number: its metric, its value as a fraction, and the half-width of its rounding."""

    metric: Metric
    text: str
    value: float
    tolerance: float


def parse_reported(spec: str) -> Reported:
    """METRIC=VALUE as a `Reported`; ValueError (one line) for a malformed one.

    >>> r = parse_reported("f1@10=17.44")
    >>> r.metric.name, round(r.value, 6), r.tolerance
    ('f1@10', 0.1744, 5e-05)
    """
    name, sep, text = (part.strip() for part in spec.partition("="))
    if not sep or not name or not text:
        raise ValueError(f"--reported: expected METRIC=VALUE (e.g. f1@10=0.1744), got {spec!r}")
    metric = parse_metric(name)
    number = text.removesuffix("%").strip()
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"--reported: {text!r} is not a number") from None
    decimals = len(number.partition(".")[2]) if "." in number else 0
    if not math.isfinite(value) or value < 0 or value > 100 or "e" in number.lower():
        raise ValueError(f"--reported: {text!r} is no metric value (a number in [0, 1], or a percentage)")
    percent = text.endswith("%") or value > 1
    scale = 100.0 if percent else 1.0
    return Reported(metric, text, value / scale, 0.5 * 10.0**-decimals / scale)


SEARCHED_MATCHES = ("approx", "exact", "stem")  # the kweval preset's matching family (issue 27: one more convention)


def search_space(match: str = KWEVAL_MATCH) -> dict[str, list[str]]:
    """Per convention, the settings the presets use, in the presets' order: the kweval preset under every match
    mode of its family (`SEARCHED_MATCHES`, `match` first), so a published number computed without stemming or
    with approximate matching is found whichever mode is in force here."""
    modes = dict.fromkeys((match, *SEARCHED_MATCHES))
    settings = [preset_settings(p, m) for p in PRESETS for m in (modes if p == "kweval" else (match,))]
    return {n: list(dict.fromkeys(s[n] for s in settings)) for n in NAMES}


@dataclass(frozen=True)
class Candidate:
    """One combination of settings (of the conventions that matter here) and its value."""

    metric: str
    settings: dict[str, str]
    value: float
    presets: list[str]

    def as_dict(self) -> dict[str, object]:
        return {"metric": self.metric, "conventions": self.settings, "value": self.value, "presets": self.presets}


def candidates(
    lattice: Lattice, metric: Metric, space: Mapping[str, Sequence[str]], match: str = KWEVAL_MATCH
) -> list[Candidate]:
    """Every combination of `space`'s settings of the conventions that can move `metric` here, with its value (NaN
    values, where a protocol does not report the metric, left out)."""
    names = [n for n in NAMES if moves(n, metric.name) and n not in lattice.inert and len(space[n]) > 1]
    base = preset_settings("kpeval", match)  # any protocol: the conventions not in `names` change nothing here
    base.update({n: space[n][0] for n in NAMES if len(space[n]) == 1})
    presets = {p: preset_settings(p, match) for p in PRESETS}
    out = []
    for combo in itertools.product(*(space[n] for n in names)):
        settings = {**base, **dict(zip(names, combo))}
        value = lattice.value(settings, metric)
        if not math.isnan(value):
            chosen = dict(zip(names, combo))
            equal = [p for p, s in presets.items() if all(s[n] == v for n, v in chosen.items())]
            out.append(Candidate(metric.name, chosen, value, equal))
    return out


def reported_search(
    lattice: Lattice,
    reported: Reported,
    ks: Sequence[int] = (),
    match: str = KWEVAL_MATCH,
    closest: int = CLOSEST,
) -> dict[str, object]:
    """The combinations whose value rounds to the reported one, nearest first (presets before mixtures at equal
    distance); `closest` nearest ones when none does.  Keys: metric, reported, value, tolerance, matches,
    n_combinations, conventions (those that vary), distinguishing (those the matches disagree on), groups (the matches
    by value), closest (the `closest` nearest values' groups when nothing matches)."""
    space = search_space(match)
    metrics = [reported.metric]
    if isinstance(reported.metric.cutoff, int):
        for k in ks:
            m = reported.metric
            name = f"{m.measure}@{k}" + (f"_{m.part}" if m.part else "")
            metrics.append(parse_metric(name))
    found = [c for m in dict.fromkeys(metrics) for c in candidates(lattice, m, space, match)]
    found.sort(key=lambda c: (abs(c.value - reported.value), not c.presets))
    matches = [c for c in found if abs(c.value - reported.value) <= reported.tolerance + 1e-12]
    varying = list(dict.fromkeys(n for c in found for n in c.settings))
    distinguishing = [n for n in varying if len({c.settings.get(n) for c in matches}) > 1]
    return {
        "groups": groups(matches),
        "metric": reported.metric.name,
        "reported": reported.text,
        "value": reported.value,
        "tolerance": reported.tolerance,
        "matches": [c.as_dict() for c in matches],
        "n_combinations": len(found),
        "conventions": varying,
        "distinguishing": distinguishing,
        "closest": [] if matches else groups(_nearest_values(found, closest)),
    }


def groups(matches: Sequence[Candidate]) -> list[dict[str, object]]:
    """The matches by value (nearest first): per value its metric, the settings every combination of it shares
    (`fixed`), the settings its combinations differ in (`free`: this data cannot tell them apart), the presets among
    them and how many there are."""
    by_value: dict[tuple[str, float], list[Candidate]] = {}
    for c in matches:
        by_value.setdefault((c.metric, c.value), []).append(c)
    out = []
    for (metric, value), group in by_value.items():
        names = list(group[0].settings)
        seen = {n: list(dict.fromkeys(c.settings[n] for c in group)) for n in names}
        out.append(
            {
                "metric": metric,
                "value": value,
                "fixed": {n: v[0] for n, v in seen.items() if len(v) == 1},
                "free": {n: v for n, v in seen.items() if len(v) > 1},
                "presets": list(dict.fromkeys(p for c in group for p in c.presets)),
                "n": len(group),
            }
        )
    return out


def _nearest_values(found: Sequence[Candidate], n: int) -> list[Candidate]:
    """The candidates of the `n` nearest distinct values (`found` sorted nearest first)."""
    values = list(dict.fromkeys((c.metric, c.value) for c in found))[:n]
    keep = set(values)
    return [c for c in found if (c.metric, c.value) in keep]
