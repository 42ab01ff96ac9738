"""Uploaded tidy tables: the newest copy of each file name wins (issue 11, item 4).

Pure functions on (file id, name, bytes); the sidebar keeps the order in which
it first saw each file id in session state, so "newest" does not depend on
how the browser lists the files or how their contents sort.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Uploads:
    """The uploaded set after newest-wins: (name, bytes) sorted by name, and older copies dropped per name."""

    files: tuple[tuple[str, bytes], ...]
    replaced: dict[str, int]

    @property
    def sizes(self) -> dict[str, int]:
        return {name: len(data) for name, data in self.files}


def newest_by_name(files: Sequence[tuple[str, str, bytes]], first_seen: MutableMapping[str, int]) -> Uploads:
    """Keep, per file name, the copy uploaded last.

    `files` are (file id, name, bytes) in the widget's order; `first_seen` maps
    file ids to the order in which they were first seen and is updated here
    (ids new in this call are ordered as listed).
    """
    for file_id, _, _ in files:
        first_seen.setdefault(file_id, len(first_seen))
    newest: dict[str, tuple[str, bytes]] = {}
    copies: dict[str, int] = {}
    for _file_id, name, data in sorted(files, key=lambda f: first_seen[f[0]]):
        newest[name] = (name, data)
        copies[name] = copies.get(name, 0) + 1
    return Uploads(tuple(sorted(newest.values())), {name: n - 1 for name, n in copies.items() if n > 1})


def kept_uploads(
    memory: MutableMapping, page: str, current: Sequence[tuple[str, str, bytes]]
) -> list[tuple[str, str, bytes]]:
    """The session's uploaded files as (file id, name, bytes), kept in `memory` (a session-state dict): files removed
    (×) from this page's uploader since its last run are dropped, files added are kept; another page's uploader
    starts empty (a widget's state is per page in Streamlit's multipage mode, the uploads are the session's)."""
    memory.setdefault("files", {})
    memory.setdefault("page", page)
    memory.setdefault("shown", set())
    ids = {file_id for file_id, _, _ in current}
    if memory["page"] == page:
        for gone in memory["shown"] - ids:
            memory["files"].pop(gone, None)
    for file_id, name, data in current:
        memory["files"][file_id] = (name, data)
    memory["page"], memory["shown"] = page, ids
    return [(file_id, name, data) for file_id, (name, data) in memory["files"].items()]


def format_size(n_bytes: int) -> str:
    """1234 → '1.2 kB' (decimal units, as browsers show file sizes)."""
    if n_bytes < 1000:
        return f"{n_bytes} B"
    return f"{n_bytes / 1000:.1f} kB" if n_bytes < 1_000_000 else f"{n_bytes / 1_000_000:.1f} MB"


def one_per_table(files: Sequence[tuple[str, bytes]]) -> tuple[tuple[tuple[str, bytes], ...], list[str]]:
    """(the files with one per table, a sentence per table uploaded twice): `predictions.csv` and
    `predictions.parquet` together keep the Parquet one, as a folder's reader prefers it
    (`kweval.data.predictions.TABLE_SUFFIXES`), and say so; names are taken as given (escape before showing)."""
    by_table: dict[str, list[str]] = {}
    for name, _ in files:
        stem, dot, suffix = name.rpartition(".")
        if dot and suffix.lower() in ("parquet", "csv"):
            by_table.setdefault(stem, []).append(name)
    dropped, notes = set(), []
    for stem, names in by_table.items():
        if len(names) < 2:
            continue
        used = sorted(names, key=lambda n: (not n.lower().endswith(".parquet"), n))[0]
        ignored = [n for n in names if n != used]
        dropped.update(ignored)
        notes.append(f"{used} and {', '.join(ignored)} are the same table ({stem}): {used} is used, the other ignored.")
    return tuple(f for f in files if f[0] not in dropped), notes
