"""Whether a headline's verdict holds under every keyphrase preset, in one sentence a stakeholder can repeat.

The same two models on the same documents can be "significant" under one
convention and not under another (kweval's matching, pke's, KPEval's,
OpenNMT-kpg's: docs/protocols.md).  Given the headline of each preset's view
(`kweval.stats.headline` rows: kweval's of the evaluation, each other preset's
of its per-document scores, `kweval.io.report_protocol.protocol_headline`),
`across_presets` adds to the view's rows the verdict of every other preset on
the same metric, grouped by outcome, e.g. "significant under kweval; under
pke, kpeval and meng by 0.010–0.011, not significant".  Each preset's verdict
is its own view's (its own Holm family, `kweval.stats.families`), so the
sentence says what a reader switching presets would see.  Only a metric
every preset's headline leads with is compared (F1@k): the others have no
counterpart in every preset; and only its leader's row (``kind`` lead), not
the story's other rows of the same metric (a model leading elsewhere, a
clearly worse model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from kweval.stats.numbers import decimals_for_interval, format_number

LEAD = "lead"  # `kweval.stats.headline`'s row of a key metric's leader against the runner-up

ACROSS_COLUMNS = ["across_presets", "holds_under_every_preset"]


def _verdicts(headlines: Mapping[str, pd.DataFrame], metric: str, best: str, runner: str) -> dict[str, dict | None]:
    """Per preset: its headline row of `metric` seen from `best` over `runner` (margin signed: negative when the
    runner-up leads there), None when its headline has no row of that metric for these two models."""
    out: dict[str, dict | None] = {}
    for preset, table in headlines.items():
        rows = table[(table["metric"] == metric) & _leads(table)] if len(table) else table
        row = rows.iloc[0].to_dict() if len(rows) else None
        if row is None or {row["best"], row["runner_up"]} != {best, runner}:
            out[preset] = None
            continue
        sign = 1.0 if row["best"] == best else -1.0
        out[preset] = {"margin": sign * float(row["margin"]), "significant": bool(row["significant"]), "best": row}
    return out


def _leads(table: pd.DataFrame) -> pd.Series:
    """Which rows of a headline are a key metric's leader against the runner-up (every row of a table without
    ``kind``)."""
    return table["kind"] == LEAD if "kind" in table.columns else pd.Series(True, index=table.index)


def _names(presets: Sequence[str]) -> str:
    """ "pke", "pke and meng", "pke, kpeval and meng"."""
    items = list(presets)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _by(margins: Sequence[float]) -> str:
    """The margins' range ("0.010–0.011", or one value) with enough decimals to tell them apart from 0."""
    low, high = min(margins), max(margins)
    places = decimals_for_interval((low + high) / 2, low, high)
    a, b = format_number(low, places), format_number(high, places)
    return a if a == b else f"{a}–{b}"


def agreement_sentence(view: str, best: str, runner: str, verdicts: Mapping[str, dict | None]) -> tuple[str, bool]:
    """(the sentence, whether the view's verdict holds under every preset): the view's own verdict first, then the
    other presets grouped by outcome (same leader significant, same leader not significant, the other model
    leading, no such comparison)."""
    own = verdicts[view]
    assert own is not None
    groups: dict[tuple[str, bool], list[str]] = {}
    margins: dict[tuple[str, bool], list[float]] = {}
    missing = []
    for preset, v in verdicts.items():
        if preset == view:
            continue
        if v is None:
            missing.append(preset)
            continue
        key = (best if v["margin"] > 0 else runner, v["significant"])
        groups.setdefault(key, []).append(preset)
        margins.setdefault(key, []).append(abs(v["margin"]))
    verdict = "significant" if own["significant"] else "not significant"
    parts = [f"{verdict} under {view}"]
    for (leader, significant), presets in groups.items():
        said = "significant" if significant else "not significant"
        lead = "" if leader == best else f"{leader} leads "
        parts.append(f"under {_names(presets)} {lead}by {_by(margins[(leader, significant)])}, {said}")
    if missing:
        parts.append(f"{_names(missing)} {'has' if len(missing) == 1 else 'have'} no such comparison")
    holds = not missing and all(leader == best and sig == own["significant"] for leader, sig in groups)
    text = "; ".join(parts)
    return ("Holds under every preset: " if holds else "Across presets: ") + text + ".", holds


def across_presets(
    top: pd.DataFrame, view: str, headlines: Mapping[str, pd.DataFrame], metrics: Sequence[str]
) -> pd.DataFrame:
    """`top` (the view's headline, `view` one of `headlines`' presets) with `ACROSS_COLUMNS`: for each row of
    `metrics` the sentence and whether the verdict holds under every preset ("" and False for the other rows)."""
    out = top.copy()
    sentences, holds = [], []
    for row, lead in zip(top.to_dict("records"), _leads(top)):
        if row["metric"] not in metrics or not lead:
            sentences.append("")
            holds.append(False)
            continue
        verdicts = _verdicts(headlines, row["metric"], row["best"], row["runner_up"])
        verdicts[view] = {"margin": float(row["margin"]), "significant": bool(row["significant"]), "best": row}
        sentence, held = agreement_sentence(view, row["best"], row["runner_up"], verdicts)
        sentences.append(sentence)
        holds.append(held)
    out["across_presets"] = sentences
    out["holds_under_every_preset"] = pd.Series(holds, index=out.index, dtype=bool)
    return out
