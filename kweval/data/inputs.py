"""Which files a dataset's reader reads: what the protocol card hashes (not every file under the folder).

Each layout names its inputs with the reader's own rules (`tidy.table_files`,
`dnlp.movie_files`, the keyphrase collections' ``docsutf8/*.txt``,
``keys/*.key``, ``lan.txt`` and the prediction files lying with them
(`kweval.data.beside`), `meng.layout_files`), so an unrelated file
beside the data (a 1 GB archive, a link loop, a dangling link, a file nobody
may read) is neither read nor hashed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kweval.data import DatasetError, detect_layout

__all__ = ["input_files"]


def input_files(path: str | Path, movies: Iterable[str] | None = None) -> list[Path]:
    """The files `load_dataset(path, movies)` reads (those that exist as files), sorted; [] when `path` is no
    dataset."""
    folder = Path(path)
    try:
        layout = detect_layout(folder)
    except DatasetError:
        return []
    found = sorted(set(_candidates(folder, layout, None if movies is None else set(movies))))
    return [p for p in found if _is_file(p)]


def _candidates(folder: Path, layout: str, movies: set[str] | None) -> list[Path]:
    from kweval.data import dnlp, keyphrase, meng, tidy

    if layout == "tidy":
        return list(tidy.table_files(folder).values())
    if layout == "meng":
        return meng.layout_files(folder)
    if layout == "keyphrase":
        from kweval.data import beside

        out: list[Path] = []
        for collection in keyphrase.find_collections(folder):
            texts = _glob(collection / keyphrase.DOCS_DIR, "*.txt")
            stems = {p.stem for p in texts}  # a key file without its document is not read
            out += texts + [p for p in _glob(collection / keyphrase.KEYS_DIR, "*.key") if p.stem in stems]
            out += [collection / keyphrase.LANGUAGE_FILE, *beside.input_files(collection)]
        return out
    root = dnlp.find_root(folder) or folder
    chosen = {m: p for m, p in dnlp.movie_files(root).items() if movies is None or m in movies}
    reviews = [root / dnlp.REVIEWS_DIR / f"{movie}.pkl" for movie in chosen]
    return [root / dnlp.GT_FILE, *chosen.values(), *reviews]


def _glob(folder: Path, pattern: str) -> list[Path]:
    try:
        return list(folder.glob(pattern))
    except OSError:
        return []


def _is_file(path: Path) -> bool:
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False
