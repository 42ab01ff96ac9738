"""Grounding and diversity under a keyphrase preset (`kweval evaluate --protocol P --grounding/--diversity`).

The per-document columns of `kweval.beyond` beside the preset's scores: a
prediction is `present` under the preset's own present rule
(`protocols.present_in`; kweval's for pke, which has none), and the
predictions are the preset's input lists as read (repeats and empty strings
included: KPEval and pke count them).  The same definitions as the pipeline's
add-on (`kweval.evaluation.beyond_columns`), per document; the summary is the
mean over the documents where a column is defined (docs/metrics.md §12).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kweval.beyond import diversity, grounding
from kweval.keyphrase.protocols import Protocol, present_in


def beyond_columns(
    protocol: Protocol,
    docs: Sequence[str],
    texts: Mapping[str, str],
    predictions: Mapping[str, Sequence[str]],
    embed: grounding.Embedder,
    *,
    grounded: bool,
    diverse: bool,
    threshold: float = grounding.TAU_G,
) -> dict[str, list[float]]:
    """Per document of `docs` (in order): the grounding shares and/or diversity of its predictions."""
    lists = [list(predictions.get(d, ())) for d in docs]
    out: dict[str, list[float]] = {}
    if grounded:
        found = grounding.ground(
            [texts.get(d) for d in docs], lists, lambda p, t: present_in(protocol, p, t), embed, threshold
        )
        out.update(
            {k: v.tolist() for k, v in grounding.shares(grounding.counts(found, [len(x) for x in lists])).items()}
        )
    if diverse:
        out.update({k: v.tolist() for k, v in diversity.lists_diversity(lists, embed).items()})
    return out


def means(columns: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """The mean of each column over the documents where it is defined (NaN where none is)."""
    out = {}
    for name, values in columns.items():
        defined = [v for v in values if not math.isnan(v)]
        out[name] = math.fsum(defined) / len(defined) if defined else math.nan
    return out
