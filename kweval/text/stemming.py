"""NLTK's Porter stemmer without the rest of NLTK, and a persistent cache of its stems.

pke, KPEval and OpenNMT-kpg stem with NLTK's `PorterStemmer`, so the protocol
presets must too.  `import nltk.stem.porter` runs `nltk/__init__`, which loads
most of NLTK and scipy.stats (seconds); the stemmer itself needs only three
small modules.  `load_porter` imports those from NLTK's installed files under
stand-in parent packages, then removes every `nltk*` entry from `sys.modules`
again, so a later `import nltk` is the ordinary, complete one.

`PorterCache` keeps every stem it computed in a JSON file
(`<kweval cache>/stems/porter-nltk-<version>.json`), so a rerun on the same
collection loads no stemmer at all.  The cache is an optimisation only: it is
bounded (entries, word length, file size), an unreadable, damaged or oversized
file is ignored and rewritten, a failed write is one note and skipped.  A process has one
(`shared_stems`): stem matching, the present rule and the protocol presets read the same stems.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import types
from collections.abc import Callable, Sequence
from pathlib import Path

# `load_porter`'s stand-in packages are in sys.modules only while one thread holds this; finding NLTK waits for it
# (a server runs pages in threads: another thread's `find_spec("nltk")` met a stand-in and raised ValueError)
_STAND_IN = threading.Lock()


def _nltk_root() -> Path:
    with _STAND_IN:
        spec = importlib.util.find_spec("nltk")  # finding a package does not run its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'nltk'", name="nltk")
    return Path(list(spec.submodule_search_locations)[0])


def nltk_version() -> str:
    """The installed NLTK's version (its VERSION file), without importing NLTK; "not installed" without it.

    The protocol card names it on every run, and a core install (no `stem` extra) must still write its card.
    """
    try:
        return (_nltk_root() / "VERSION").read_text(encoding="utf-8").strip() or "unknown"
    except ImportError:
        return "not installed"
    except OSError:
        return "unknown"


def load_porter() -> Callable[[str], str]:
    """NLTK's `PorterStemmer().stem` (default NLTK_EXTENSIONS mode), without importing the `nltk` package."""
    if "nltk" in sys.modules and not getattr(sys.modules["nltk"], "_kweval_stand_in", False):
        from nltk.stem.porter import PorterStemmer  # NLTK is loaded already: nothing to save

        return PorterStemmer().stem
    root = _nltk_root()
    with _STAND_IN:
        try:
            for name, path in (("nltk", root), ("nltk.stem", root / "stem")):
                package = types.ModuleType(name)
                package.__path__ = [str(path)]
                package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
                package.__spec__.submodule_search_locations = [str(path)]  # what `find_spec` of it returns
                vars(package)["_kweval_stand_in"] = True  # a mark of our own on the stand-in package
                sys.modules[name] = package
            return importlib.import_module("nltk.stem.porter").PorterStemmer().stem
        finally:
            for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
                del sys.modules[name]


def stems_folder() -> Path:
    """`<cache>/stems`, where `PorterCache` files live (one per NLTK version)."""
    from kweval.cachedir import cache_dir

    return cache_dir() / "stems"


def stem_cache_info() -> list[dict]:
    """One dict per stem cache file: path, bytes, entries (None when it is damaged or oversized: `damage` says)."""
    out = []
    for path in sorted(stems_folder().glob("*.json")) if stems_folder().is_dir() else []:
        cache = PorterCache(path)
        size = path.stat().st_size if path.exists() else 0
        damage = "damaged or over the size bound; ignored and rewritten on the next run" if cache.stale else None
        out.append({"path": str(path), "bytes": size, "entries": len(cache.stems), "damage": damage})
    return out


def stem_cache_clear() -> int:
    """Delete the stem cache files (and unfinished temporary ones); returns the files removed."""
    folder = stems_folder()
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.iterdir():
        if path.name.endswith((".json", ".tmp")) and not path.is_dir():
            path.unlink(missing_ok=True)
            removed += path.name.endswith(".json")
    return removed


def default_cache_file() -> Path:
    """`<cache>/stems/porter-nltk-<version>.json`, beside kweval's embedding stores."""
    return stems_folder() / f"porter-nltk-{nltk_version()}.json"


MAX_ENTRIES = 300_000  # stems kept in the file (~8 MB of JSON, read in ~0.1 s); later ones are computed, not kept
MAX_FILE_BYTES = 16 << 20  # a larger file (damaged, or written by a build without the bound) is ignored, rewritten
MAX_WORD_CHARS = 64  # longer "words" (URLs, junk) are stemmed but never kept
MAX_CALL_WORDS = 50_000  # a phrase or text of more words (a junk keyphrase of 50 MB) bypasses the cache


class PorterCache:
    """`stem(word)` through a dict loaded from, and saved back to, a JSON file; the stemmer loads on the first miss.

    Bounded: at most `MAX_ENTRIES` stems of words up to `MAX_WORD_CHARS` characters are kept, one call of more
    than `MAX_CALL_WORDS` words keeps none, and a file over `MAX_FILE_BYTES` or not a JSON object of strings is
    ignored and rewritten.  A failed write (full disk, quota) is one line in `notes`; the run goes on.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stale = False  # the file is to be rewritten (damaged, oversized) even without new stems
        self.notes: list[str] = []
        self.stems: dict[str, str] = self._read(path)
        self._known = len(self.stems)
        self._stemmer: Callable[[str], str] | None = None

    def _read(self, path: Path | None) -> dict[str, str]:
        if path is None:
            return {}
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return {}
        try:
            data = json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or len(data) > MAX_ENTRIES:
            self.stale = True
            return {}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            self.stale = True
            return {}
        return data

    def _compute(self, word: str) -> str:
        if self._stemmer is None:
            self._stemmer = load_porter()
        return self._stemmer(word)

    def stem(self, word: str) -> str:
        stem = self.stems.get(word)
        if stem is None:
            stem = self._compute(word)
            if len(word) <= MAX_WORD_CHARS and len(self.stems) < MAX_ENTRIES:
                self.stems[word] = stem
        return stem

    def stem_many(self, words: Sequence[str]) -> tuple[str, ...]:
        """The stems of `words`; a call of more than `MAX_CALL_WORDS` words reads the cache but adds nothing."""
        known = self.stems.get
        if len(words) > MAX_CALL_WORDS:
            return tuple([known(w) or self._compute(w) for w in words])
        stem = self.stem
        return tuple([known(w) or stem(w) for w in words])

    def save(self) -> None:
        """Write the stems back when new ones were computed (atomically; a failure only costs the next run time)."""
        if self.path is None or (len(self.stems) == self._known and not self.stale):
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(self.stems, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.path)
            self._known, self.stale = len(self.stems), False
        except OSError as exc:
            self.stale = False  # one note per run, not one per save
            self._known = len(self.stems)
            self.notes.append(f"{self.path}: not written ({exc.strerror or exc}); stemmed again next run")
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass


_SHARED: PorterCache | None = None
_SHARED_LOCK = threading.Lock()


def shared_stems() -> PorterCache:
    """The process's stem cache, on `default_cache_file()` (read on first use; the dashboard's sessions are
    threads, so it is made once under a lock)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = PorterCache(default_cache_file())
        return _SHARED


def save_shared_stems() -> list[str]:
    """Keep the stems this process computed for the next run (nothing when none is new); the notes of what went
    wrong since the last call (a write refused by a full disk), each once."""
    cache = _SHARED
    if cache is None:
        return []
    cache.save()
    notes, cache.notes = cache.notes, []
    return notes
