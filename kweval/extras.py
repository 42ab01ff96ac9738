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

__all__ = ["MissingExtra", "require"]


class MissingExtra(ImportError):
    """An optional package a feature needs is not installed; the message names the extra."""


def require(module: str, extra: str, feature: str) -> ModuleType:
    """`import module`, or raise MissingExtra saying `feature` needs `pip install 'kweval[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingExtra(f"{feature}: needs {top}, which is not installed: pip install 'kweval[{extra}]'") from exc
