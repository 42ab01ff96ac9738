"""kweval: evaluate keyword-extraction models against ranked ground-truth keywords.

    >>> import kweval
    >>> ds = kweval.load_dataset()                 # the embedded demo
    >>> ev = kweval.evaluate(ds, kweval.EvalOptions(k=5))
    >>> table = kweval.aggregate(ev, "macro")      # movie × model table with ALL rows

The subpackages, from the bottom up: `data` (datasets and their readers),
`text` (normalization, stemming, matching, present/absent), `metrics` (one
unit per metric family and the registry), `evaluation` (options, the
pipeline, aggregation), `stats`, `embeddings`, `scale` (processes, dask),
`io` (reports, the protocol card, output files), `keyphrase` (the field's
protocols and extractors), `explain`, `legacy` and `cli`.

The public functions below are imported on first use (PEP 562): `import
kweval` costs nothing, so a command that needs no pandas (the `--protocol`
path) does not load it.  Heavy parts (torch, sentence-transformers, VADER,
streamlit) are imported only where they are used.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "aggregate": "kweval.evaluation.aggregate",
    "Dataset": "kweval.data",
    "load_dataset": "kweval.data",
    "EvalOptions": "kweval.evaluation.pipeline",
    "Evaluation": "kweval.evaluation.pipeline",
    "evaluate": "kweval.evaluation.pipeline",
}

__all__ = ["load_dataset", "evaluate", "EvalOptions", "Evaluation", "aggregate", "Dataset", "__version__"]


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kweval' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value
