"""NLTK's Porter stemmer without the rest of NLTK, and a persistent cache of its stems.

pke, KPEval and OpenNMT-kpg stem with NLTK's `PorterStemmer`, so the protocol
presets must too.  `import nltk.stem.porter` runs `nltk/__init__`, which loads
most of NLTK and scipy.stats (seconds); the stemmer itself needs only three
small modules.  `load_porter` imports those from NLTK's installed files under
stand-in parent packages, then removes every `nltk*` entry from `sys.modules`
again, so a later `import nltk` is the ordinary, complete one.

`PorterCache` keeps every stem it computed in a JSON file
(`<kweval cache>/stems/porter-nltk-<version>.json`), so a rerun on the same
collection loads no stemmer at all.  The cache is an optimisation only: an
unreadable or damaged file is ignored and rewritten, a failed write is skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path


def _nltk_root() -> Path:
    spec = importlib.util.find_spec("nltk")  # finding a package does not run its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'nltk'", name="nltk")
    return Path(list(spec.submodule_search_locations)[0])


def nltk_version() -> str:
    """The installed NLTK's version (its VERSION file), without importing NLTK."""
    try:
        return (_nltk_root() / "VERSION").read_text(encoding="utf-8").strip() or "unknown"
    except OSError:
        return "unknown"


def load_porter() -> Callable[[str], str]:
    """NLTK's `PorterStemmer().stem` (default NLTK_EXTENSIONS mode), without importing the `nltk` package."""
    if "nltk" in sys.modules and not getattr(sys.modules["nltk"], "_kweval_stand_in", False):
        from nltk.stem.porter import PorterStemmer  # NLTK is loaded already: nothing to save

        return PorterStemmer().stem
    root = _nltk_root()
    try:
        for name, path in (("nltk", root), ("nltk.stem", root / "stem")):
            package = types.ModuleType(name)
            package.__path__ = [str(path)]
            vars(package)["_kweval_stand_in"] = True  # a mark of our own on the stand-in package
            sys.modules[name] = package
        return importlib.import_module("nltk.stem.porter").PorterStemmer().stem
    finally:
        for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
            del sys.modules[name]


def default_cache_file() -> Path:
    """`<cache>/stems/porter-nltk-<version>.json`, beside kweval's embedding stores."""
    from kweval.cachedir import cache_dir

    return cache_dir() / "stems" / f"porter-nltk-{nltk_version()}.json"


class PorterCache:
    """`stem(word)` through a dict loaded from, and saved back to, a JSON file; the stemmer loads on the first miss."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stems: dict[str, str] = self._read(path)
        self._known = len(self.stems)
        self._stemmer: Callable[[str], str] | None = None

    @staticmethod
    def _read(path: Path | None) -> dict[str, str]:
        if path is None:
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            return {}
        return data

    def stem(self, word: str) -> str:
        stem = self.stems.get(word)
        if stem is None:
            if self._stemmer is None:
                self._stemmer = load_porter()
            stem = self.stems[word] = self._stemmer(word)
        return stem

    def save(self) -> None:
        """Write the stems back when new ones were computed (atomically; a failure only costs the next run time)."""
        if self.path is None or len(self.stems) == self._known:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(self.stems, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.path)
            self._known = len(self.stems)
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
