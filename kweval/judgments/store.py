"""The judgments database: a SQLite file per dataset, safe for several writers (docs/metrics.md §11).

Readers grade keywords in the dashboard, possibly two browser sessions at
once: every write is one `BEGIN IMMEDIATE` transaction (SQLite takes the
write lock at its start, so writers queue, waiting up to `BUSY_SECONDS`,
instead of one overwriting the other), in WAL mode (readers never block the
writer).  Each connection is opened per call, so the store holds no
connection between calls and is safe to share between threads and
processes.  A store belongs to one dataset: its content hash is written when
the file is made and checked on every open.
"""

from __future__ import annotations

import numbers
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from kweval import sqlite
from kweval.cachedir import cache_dir
from kweval.data.dataset import Dataset
from kweval.text.normalize import normalize

BUSY_SECONDS = sqlite.BUSY_SECONDS  # how long a writer waits for another one before the database counts as locked
SIDES = ("prediction", "gt")
GRADES = (0, 1, 2, 3)
COLUMNS = ["id", "movie", "review_id", "keyword", "norm", "side", "grade", "annotator", "time"]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    movie TEXT NOT NULL,
    review_id TEXT,
    keyword TEXT NOT NULL,
    norm TEXT NOT NULL,
    side TEXT NOT NULL CHECK (side IN ('prediction', 'gt')),
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 3),
    annotator TEXT NOT NULL,
    time TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_item ON judgments (movie, review_id);
"""


class JudgmentsError(Exception):
    """A judgments file that cannot be used (locked, read-only, damaged, of another dataset), or a bad judgment."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source, self.reason = source, reason


def default_path(content_hash: str) -> Path:
    """Where a dataset's judgments live unless the user names a file: `$KWEVAL_JUDGMENTS_DIR`, else the kweval
    cache's `judgments/` folder (`kweval.cachedir`), one file per dataset content hash."""
    folder = os.environ.get("KWEVAL_JUDGMENTS_DIR", "").strip()
    base = Path(folder).expanduser() if folder else cache_dir() / "judgments"
    return base / f"{content_hash[:32]}.sqlite"


class JudgmentStore:
    """The judgments of one dataset in a SQLite file: add, undo, list, each call its own connection."""

    def __init__(self, path: str | Path, content_hash: str) -> None:
        self.path = Path(path)
        self.content_hash = content_hash
        try:
            with self._write() as con:  # makes the file and its tables, or checks they belong to this dataset
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        con.execute(statement)
                row = con.execute("SELECT value FROM meta WHERE key = 'dataset'").fetchone()
                if row is None:
                    con.execute("INSERT INTO meta VALUES ('dataset', ?)", (content_hash,))
                elif row[0] != content_hash:
                    raise JudgmentsError(str(self.path), _other_dataset(row[0], content_hash))
        except sqlite3.Error as exc:
            raise JudgmentsError(str(self.path), database_reason(exc)) from None
        except OSError as exc:  # the folder cannot be made
            reason = f"cannot create the judgments database ({exc.strerror or exc})"
            raise JudgmentsError(str(self.path), reason) from None

    @classmethod
    def for_dataset(cls, dataset: Dataset, path: str | Path | None = None) -> JudgmentStore:
        """The store of `dataset`: at `path`, else its default place (`default_path` of its content hash)."""
        content_hash = dataset.content_hash()
        return cls(path if path is not None else default_path(content_hash), content_hash)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (`kweval.sqlite.write_transaction`: BEGIN IMMEDIATE, the write lock first, so no
        lost update); errors become `JudgmentsError`."""
        with sqlite.write_transaction(_connect(self.path), BUSY_SECONDS) as con:
            yield con

    def add(
        self,
        movie: str,
        review_id: str | None,
        keyword: str,
        grade: int,
        annotator: str,
        side: str = "prediction",
        time: datetime | None = None,
    ) -> int:
        """Store one judgment (review_id None: for every review of the movie); returns its id."""
        check_judgment(keyword, grade, annotator, side)
        norm = normalize(keyword)
        stamp = (time or datetime.now(UTC)).isoformat()
        review = None if review_id is None else str(review_id)
        try:
            with self._write() as con:
                cur = con.execute(
                    "INSERT INTO judgments (movie, review_id, keyword, norm, side, grade, annotator, time) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (str(movie), review, keyword, norm, side, int(grade), annotator.strip(), stamp),
                )
                return int(cur.lastrowid or 0)
        except sqlite3.Error as exc:
            raise JudgmentsError(str(self.path), database_reason(exc)) from None

    def undo(self, annotator: str | None = None, judgment_id: int | None = None) -> dict | None:
        """Delete judgment `judgment_id`, or the latest of `annotator` (of anyone when None); returns it, or None."""
        args: list[object] = [] if judgment_id is None else [int(judgment_id)]
        where = "1 = 1" if judgment_id is None else "id = ?"
        if judgment_id is None and annotator is not None:
            where, args = "annotator = ?", [annotator.strip()]
        try:
            with self._write() as con:
                row = con.execute(
                    f"SELECT {', '.join(COLUMNS)} FROM judgments WHERE {where} ORDER BY id DESC LIMIT 1", args
                ).fetchone()
                if row is not None:
                    con.execute("DELETE FROM judgments WHERE id = ?", (row[0],))
        except sqlite3.Error as exc:
            raise JudgmentsError(str(self.path), database_reason(exc)) from None
        return None if row is None else dict(zip(COLUMNS, row))

    def list(self, movie: str | None = None, review_id: str | None = None) -> pd.DataFrame:
        """The judgments (of `movie`, and of one review: its own and the whole movie's), oldest first."""
        return read_store(self.path, self.content_hash, movie, review_id)


def read_store(
    path: str | Path, content_hash: str | None = None, movie: str | None = None, review_id: str | None = None
) -> pd.DataFrame:
    """A judgments file's rows (`COLUMNS`), read-only; `content_hash` given: a file of another dataset is refused."""
    query, args = f"SELECT {', '.join(COLUMNS)} FROM judgments", []
    if movie is not None:
        query += " WHERE movie = ?"
        args.append(str(movie))
        if review_id is not None:
            query += " AND (review_id = ? OR review_id IS NULL)"
            args.append(str(review_id))
    try:
        con = _connect(Path(path), read_only=True)
        try:
            if content_hash is not None:
                row = con.execute("SELECT value FROM meta WHERE key = 'dataset'").fetchone()
                if row is not None and row[0] != content_hash:
                    raise JudgmentsError(str(path), _other_dataset(row[0], content_hash))
            frame = pd.read_sql_query(query + " ORDER BY id", con, params=args)
        finally:
            con.close()
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise JudgmentsError(str(path), database_reason(exc)) from None
    return frame.astype({"review_id": object})


def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """`kweval.sqlite.connect` waiting BUSY_SECONDS for the write lock; a missing file to read is a JudgmentsError."""
    try:
        return sqlite.connect(path, read_only, BUSY_SECONDS)
    except FileNotFoundError:
        raise JudgmentsError(str(path), "no such file") from None


def database_reason(exc: Exception) -> str:
    """What went wrong with the database, in words (locked, read-only, damaged): `kweval.sqlite.database_reason`."""
    return sqlite.database_reason(exc, "judgments", BUSY_SECONDS)


def _other_dataset(stored: str, current: str) -> str:
    return f"judgments of another dataset (content hash {stored[:12]}…, this dataset's is {current[:12]}…); not used"


def check_judgment(keyword: object, grade: object, annotator: object, side: str = "prediction") -> None:
    """Refuse a judgment kweval could not use: an empty keyword or annotator, a grade outside 0–3, an unknown side."""
    if not isinstance(keyword, str) or not normalize(keyword):
        raise JudgmentsError("judgment", f"keyword {keyword!r} is empty after normalization")
    if isinstance(grade, bool) or not isinstance(grade, numbers.Integral) or int(grade) not in GRADES:
        raise JudgmentsError("judgment", f"grade {grade!r} is not one of 0, 1, 2, 3")
    if not isinstance(annotator, str) or not annotator.strip():
        raise JudgmentsError("judgment", "the annotator's name is empty")
    if side not in SIDES:
        raise JudgmentsError("judgment", f"side {side!r} is not one of {', '.join(SIDES)}")
