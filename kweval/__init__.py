"""kweval: evaluate keyword-extraction models against ranked ground-truth keywords.

    >>> import kweval
    >>> ds = kweval.load_dataset()                 # the embedded demo
    >>> ev = kweval.evaluate(ds, kweval.EvalOptions(k=5))
    >>> kweval.aggregate(ev, "macro")              # movie × model table with ALL rows

The public functions are attributes of the package, so `kweval.evaluate` is the
function; the module of the same name stays importable as
`from kweval.evaluate import ...`.  They are imported on first use (PEP 562):
`import kweval` costs nothing, so a command that needs no pandas (the
`--protocol` path, `python -m kweval` fast paths) does not load it.  Heavy parts
(torch, sentence-transformers, VADER, streamlit) are imported only where they
are used.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

_PUBLIC = {
    "aggregate": "kweval.aggregate",
    "Dataset": "kweval.data",
    "load_dataset": "kweval.data",
    "EvalOptions": "kweval.evaluate",
    "Evaluation": "kweval.evaluate",
    "evaluate": "kweval.evaluate",
}

__all__ = ["load_dataset", "evaluate", "EvalOptions", "Evaluation", "aggregate", "Dataset", "__version__"]


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kweval' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """Keeps `kweval.evaluate` / `kweval.aggregate` the functions when their modules are imported.

    Importing a submodule binds it on its package under its name; two
    submodules share a name with the function they define, and the public name
    is the function's.
    """

    def __setattr__(self, name: str, value) -> None:
        if name in _PUBLIC and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
