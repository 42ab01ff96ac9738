"""kweval: evaluate keyword-extraction models against ranked ground-truth keywords.

The public API is small and lazily imported so that `import kweval` stays cheap:

    >>> import kweval
    >>> ds = kweval.load_dataset()                 # the embedded demo
    >>> ev = kweval.evaluate(ds, kweval.EvalOptions(k=5))
    >>> kweval.aggregate(ev, "macro")              # movie × model table with ALL rows
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["load_dataset", "evaluate", "EvalOptions", "Evaluation", "aggregate", "Dataset"]


def __getattr__(name: str):
    if name == "load_dataset":
        from kweval.data import load_dataset

        return load_dataset
    if name == "Dataset":
        from kweval.data.dataset import Dataset

        return Dataset
    if name in ("evaluate", "EvalOptions", "Evaluation"):
        from kweval import evaluate as module

        return getattr(module, name if name != "evaluate" else "evaluate")
    if name == "aggregate":
        from kweval.aggregate import aggregate

        return aggregate
    raise AttributeError(f"module 'kweval' has no attribute {name!r}")
