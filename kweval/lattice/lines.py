"""One line per key metric saying what the other presets give the same predictions: the protocol card's and the
preset report's note (`kweval evaluate --protocol P`, `kweval report --protocol P`).

Plain Python (`score_documents`, `summarize`: the `--protocol` command imports neither numpy nor pandas);
`kweval gap` says where each of these gaps comes from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kweval.keyphrase.conventions import PRESETS, preset_label
from kweval.keyphrase.protocols import PROTOCOLS, score_documents, summarize

GAP_NOTE = "other preset's value (its gap: other − this); `kweval gap DATA --model M --from P --to Q` decomposes one"


def _label(metric: str) -> str:
    measure, _, rest = metric.partition("@")
    cutoff, _, part = rest.partition("_")
    return f"{measure.upper()}@{cutoff}" + (f" {part}" if part else "")


def card_metrics(summary: Mapping[str, float], k: int) -> list[str]:
    """The key metrics a summary reports, in order: F1@5, F1@k, F1@10, F1@M, F1@O, their present forms, R@50
    absent."""
    plain = list(dict.fromkeys(["f1@5", f"f1@{k}", "f1@10", "f1@M", "f1@O"]))
    wanted = plain + [f"{m}_present" for m in plain] + ["r@50_absent"]
    return [m for m in wanted if m in summary and not math.isnan(summary[m])]


def preset_summaries(
    gold: Mapping[str, Sequence[str]],
    predictions: Mapping[str, Sequence[str]],
    texts: Mapping[str, str] | None,
    cutoffs: Sequence[int | str],
    presets: Sequence[str] = PRESETS,
) -> dict[str, dict[str, float]]:
    """{preset: its summary} of one model's predictions (the kweval preset's: `kweval evaluate`'s numbers)."""
    return {
        p: summarize(PROTOCOLS[p], score_documents(PROTOCOLS[p], gold, predictions, texts, cutoffs)) for p in presets
    }


def gap_lines(here: str, summaries: Mapping[str, Mapping[str, float]], k: int, prefix: str = "") -> list[str]:
    """One line per key metric of the preset `here`: its value, then each other preset's and the gap, e.g.
    "F1@5 0.1178 under pke; kweval 0.2658 (+0.1480), kpeval 0.1245 (+0.0067), meng 0.1187 (+0.0009)"."""
    mine = summaries[here]
    lines = []
    for metric in card_metrics(mine, k):
        others = []
        for preset, summary in summaries.items():
            value = summary.get(metric, math.nan)
            if preset != here and not math.isnan(value):
                others.append(f"{preset_label(preset)} {value:.4f} ({value - mine[metric]:+.4f})")
        tail = "; " + ", ".join(others) if others else "; no other preset reports it"
        lines.append(f"{prefix}{_label(metric)} {mine[metric]:.4f} under {here}{tail}")
    return lines
