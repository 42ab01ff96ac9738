"""kweval: evaluate keyword-extraction models against ranked ground-truth keywords.

    >>> import kweval
    >>> ds = kweval.load_dataset()                 # the embedded demo
    >>> ev = kweval.evaluate(ds, kweval.EvalOptions(k=5))
    >>> kweval.aggregate(ev, "macro")              # movie × model table with ALL rows

The public functions are imported here, so `kweval.evaluate` is the function;
the module of the same name stays importable as `from kweval.evaluate import ...`.
Heavy parts (torch, sentence-transformers, VADER, streamlit) are imported only
where they are used.
"""

from __future__ import annotations

__version__ = "0.1.0"

from kweval.aggregate import aggregate
from kweval.data import Dataset, load_dataset
from kweval.evaluate import EvalOptions, Evaluation, evaluate

__all__ = ["load_dataset", "evaluate", "EvalOptions", "Evaluation", "aggregate", "Dataset", "__version__"]
