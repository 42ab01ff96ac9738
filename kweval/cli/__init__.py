"""The `kweval` command: the same numbers as the dashboard, for scripts and CI pipelines.

Exit status: 0 when something was evaluated; 1 when a --fail-under threshold
is not met; 2 for usage errors or when nothing could be evaluated.  Data
problems never raise: each is one line on stderr and the rest is evaluated.
Without --semantic nothing imports torch or sentence-transformers.

`dispatch` builds the parser and dispatches; one `cmd_*` module per command
(`evaluate`, `embed` and `cache`, `convert`, `synth`, `extract`, `export`);
`common` holds what they share; `fast` runs `evaluate --protocol` without
pandas or numpy, tried first by `python -m kweval`.  `build_parser`, `main`
and `run` are imported from `kweval.cli.dispatch` on first use, so importing a
command module (or the fast path) loads nothing else.
"""

from __future__ import annotations

import importlib

__all__ = ["COMMANDS", "build_parser", "main", "run"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module 'kweval.cli' has no attribute {name!r}")
    return getattr(importlib.import_module("kweval.cli.dispatch"), name)
