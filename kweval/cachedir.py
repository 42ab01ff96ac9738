"""Where kweval keeps its caches (embedding stores, stems); its own module so that finding it imports nothing heavy."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The folder holding the stores: ``$KWEVAL_CACHE_DIR`` or ``user_cache_dir("kweval")/embeddings``."""
    env = os.environ.get("KWEVAL_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("kweval"))
    except ImportError:  # platformdirs is optional: the XDG default
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kweval"
    return base / "embeddings"
