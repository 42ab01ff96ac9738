"""Where kweval keeps its files (caches, judgments, anything it records); its own module so that finding it imports
nothing heavy.

One root, `home_dir()`: ``$KWEVAL_HOME``, else ``user_cache_dir("kweval")``.  The caches (embedding stores, ONNX
exports, stems) live in `cache_dir()` under it, the judgments in the cache's ``judgments/`` folder: pointing
``KWEVAL_HOME`` at one folder (a container's volume) keeps all of them.  ``KWEVAL_CACHE_DIR`` (and
``KWEVAL_JUDGMENTS_DIR``, `kweval.judgments.store`) still move a part elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "KWEVAL_HOME"
CACHE_ENV = "KWEVAL_CACHE_DIR"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def home_dir() -> Path:
    """The root of kweval's files: ``$KWEVAL_HOME``, else ``user_cache_dir("kweval")`` (XDG's ``~/.cache/kweval``
    without platformdirs)."""
    home = _env_path(HOME_ENV)
    if home is not None:
        return home
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("kweval"))
    except ImportError:  # platformdirs is optional: the XDG default
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kweval"


def cache_dir() -> Path:
    """The folder holding the stores: ``$KWEVAL_CACHE_DIR``, else ``home_dir()/embeddings``."""
    return _env_path(CACHE_ENV) or home_dir() / "embeddings"
